// Package objectstore keeps Delta tables on object storage (S3 and
// S3-compatible stores, GCS, Azure Blob) through gocloud.dev/blob. It
// implements delta.Storage: log entries are written with the store's
// conditional put (If-None-Match), data files are uploaded after DuckDB
// wrote them locally, and read through a local cache of immutable files.
// Storage calls are retried with backoff and guarded by a circuit breaker
// whose state is the storage's health.
package objectstore

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lakesql/lakesql/internal/bytesize"
	"github.com/lakesql/lakesql/internal/secret"
)

// Schemes are the URL schemes of object storage locations.
var Schemes = []string{"s3", "gs", "azblob"}

// IsLocation tells whether loc names object storage (scheme://...).
func IsLocation(loc string) bool {
	scheme, _, ok := strings.Cut(loc, "://")
	if !ok {
		return false
	}
	for _, s := range Schemes {
		if strings.EqualFold(scheme, s) {
			return true
		}
	}
	return false
}

// Location is a parsed object storage location.
type Location struct {
	Scheme string // s3, gs or azblob
	Bucket string
	Prefix string // without leading or trailing slash; "" is the bucket root
}

// ParseLocation parses scheme://bucket/prefix. Prefixes are cleaned of
// empty segments; "." and ".." segments are refused, as are queries and
// fragments (options go into WITH, not into the URL).
func ParseLocation(loc string) (Location, error) {
	// Errors show the location without the user info a careless URL may
	// carry (s3://KEY:SECRET@bucket/...): it is refused, never repeated.
	shown := redactUserinfo(loc)
	u, err := url.Parse(loc)
	if err != nil {
		// url.Error quotes the whole URL: keep only its reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Location{}, fmt.Errorf("object storage location %q: %w", shown, err)
	}
	l := Location{Scheme: strings.ToLower(u.Scheme), Bucket: u.Host}
	if !IsLocation(loc) {
		return Location{}, fmt.Errorf("object storage location %q: scheme must be one of %s", shown, strings.Join(Schemes, ", "))
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return Location{}, fmt.Errorf("object storage location %q: no credentials, query or fragment allowed in the URL (use WITH storage.* options)", shown)
	}
	if l.Bucket == "" {
		return Location{}, fmt.Errorf("object storage location %q: no bucket", shown)
	}
	var segs []string
	for _, s := range strings.Split(u.Path, "/") {
		switch s {
		case "":
			continue
		case ".", "..":
			return Location{}, fmt.Errorf("object storage location %q: %q segments are not allowed", shown, s)
		}
		segs = append(segs, s)
	}
	l.Prefix = strings.Join(segs, "/")
	return l, nil
}

// redactUserinfo replaces the user info of scheme://userinfo@host/... by
// Mask; other strings are returned as they are.
func redactUserinfo(loc string) string {
	scheme, rest, ok := strings.Cut(loc, "://")
	if !ok {
		return loc
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return loc
	}
	return scheme + "://" + Mask + rest[at:]
}

// String is the canonical form, scheme://bucket/prefix.
func (l Location) String() string {
	if l.Prefix == "" {
		return l.Scheme + "://" + l.Bucket
	}
	return l.Scheme + "://" + l.Bucket + "/" + l.Prefix
}

// Options configure access to a store. Unset fields fall back to the
// environment (AWS_ACCESS_KEY_ID, AWS_REGION, ... for S3; Application
// Default Credentials for GCS; AZURE_STORAGE_ACCOUNT and friends for Azure).
type Options struct {
	Endpoint        string // S3-compatible endpoint URL, e.g. http://127.0.0.1:7070
	Region          string
	PathStyle       bool // bucket in the path instead of the host name
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// CacheDir holds staged uploads and downloaded data files; the
	// process's temp dir when empty.
	CacheDir string
	// CacheMaxBytes bounds the copies of data files a store keeps under
	// CacheDir (0: filecache.DefaultMaxBytes); the least recently used go.
	CacheMaxBytes int64
	// Retry and Breaker tune fault handling; zero values take defaults.
	Retry   RetryPolicy
	Breaker BreakerPolicy
}

// Option keys accepted by FromProperties (the WITH storage.* options).
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

// FromProperties reads storage.* options; other keys are ignored, unknown
// storage.* keys are refused.
func FromProperties(props map[string]string) (Options, error) {
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
		o.Retry.MaxAttempts, err = strconv.Atoi(v)
		if err == nil && o.Retry.MaxAttempts < 1 {
			err = fmt.Errorf("must be at least 1")
		}
	case KeyMaxRetryTime:
		o.Retry.MaxTime, err = parseDuration(v)
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
