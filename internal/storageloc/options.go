package storageloc

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lakesql/lakesql/internal/bytesize"
	"github.com/lakesql/lakesql/internal/secret"
)

// Option keys accepted by ParseOptions (the WITH storage.* options).
const (
	KeyEndpoint        = "storage.endpoint"
	KeyRegion          = "storage.region"
	KeyPathStyle       = "storage.path_style"
	KeyAccessKeyID     = "storage.access_key_id"
	KeySecretAccessKey = "storage.secret_access_key"
	KeySessionToken    = "storage.session_token"
	KeyMaxAttempts     = "storage.max_attempts"
	KeyMaxRetryTime    = "storage.max_retry_time"
	KeyCacheMaxBytes   = "storage.cache_max_bytes"
)

// Keys lists every storage.* option, sorted.
func Keys() []string {
	keys := []string{KeyEndpoint, KeyRegion, KeyPathStyle, KeyAccessKeyID, KeySecretAccessKey, KeySessionToken,
		KeyMaxAttempts, KeyMaxRetryTime, KeyCacheMaxBytes}
	sort.Strings(keys)
	return keys
}

// IsSecret tells whether the value of an option key must never be shown.
func IsSecret(key string) bool {
	return key == KeySecretAccessKey || key == KeySessionToken
}

// Mask is what secrets are replaced with wherever they would be shown.
const Mask = secret.Mask

// ShownValue is an option's value as it may be shown: Mask for a secret,
// else the value with any password or secret-looking parameter of a URL
// masked (storage.endpoint = 'http://user:password@host').
func ShownValue(key, value string) string {
	if IsSecret(key) {
		return Mask
	}
	return secret.MaskURI(value)
}

// Options are the storage.* options of a location as written in WITH;
// objectstore.FromProperties turns them into a store's options.
type Options struct {
	Endpoint        string
	Region          string
	PathStyle       bool
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	MaxAttempts     int
	MaxRetryTime    time.Duration
	CacheMaxBytes   int64
}

// ParseOptions reads storage.* options; other keys are ignored, unknown
// storage.* keys are refused.
func ParseOptions(props map[string]string) (Options, error) {
	var o Options
	for k, v := range props {
		if !strings.HasPrefix(k, "storage.") {
			continue
		}
		if err := o.set(k, v); err != nil {
			return Options{}, err
		}
	}
	if (o.AccessKeyID == "") != (o.SecretAccessKey == "") {
		return Options{}, fmt.Errorf("storage options %s and %s go together", KeyAccessKeyID, KeySecretAccessKey)
	}
	return o, nil
}

// CheckOption tells whether one storage.* option is known and its value
// well formed.
func CheckOption(key, value string) error {
	var o Options
	return o.set(key, value)
}

// set applies one option. Errors never show a secret's value.
func (o *Options) set(k, v string) error {
	var err error
	switch k {
	case KeyEndpoint:
		if u, perr := url.Parse(v); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			err = fmt.Errorf("must be an http or https URL")
		}
		o.Endpoint = v
	case KeyRegion:
		o.Region = v
	case KeyPathStyle:
		o.PathStyle, err = strconv.ParseBool(v)
	case KeyAccessKeyID:
		o.AccessKeyID = v
	case KeySecretAccessKey:
		o.SecretAccessKey = v
	case KeySessionToken:
		o.SessionToken = v
	case KeyMaxAttempts:
		o.MaxAttempts, err = strconv.Atoi(v)
		if err == nil && o.MaxAttempts < 1 {
			err = fmt.Errorf("must be at least 1")
		}
	case KeyMaxRetryTime:
		o.MaxRetryTime, err = parseDuration(v)
	case KeyCacheMaxBytes:
		o.CacheMaxBytes, err = bytesize.Parse(v)
	default:
		return fmt.Errorf("unknown storage option %q (known: %s)", k, strings.Join(Keys(), ", "))
	}
	if err != nil {
		return fmt.Errorf("storage option %s = %q: %w", k, ShownValue(k, v), err)
	}
	return nil
}

// parseDuration reads a Go duration ("30s", "2m"), which must be positive.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("not a duration like 30s or 2m")
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be positive")
	}
	return d, nil
}
