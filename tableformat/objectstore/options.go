package objectstore

import (
	"github.com/lakesql/lakesql/internal/storageloc"
)

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

// FromProperties reads storage.* options (storageloc.ParseOptions); other
// keys are ignored, unknown storage.* keys are refused.
func FromProperties(props map[string]string) (Options, error) {
	v, err := storageloc.ParseOptions(props)
	if err != nil {
		return Options{}, err
	}
	return Options{
		Endpoint:        v.Endpoint,
		Region:          v.Region,
		PathStyle:       v.PathStyle,
		AccessKeyID:     v.AccessKeyID,
		SecretAccessKey: v.SecretAccessKey,
		SessionToken:    v.SessionToken,
		CacheMaxBytes:   v.CacheMaxBytes,
		Retry:           RetryPolicy{MaxAttempts: v.MaxAttempts, MaxTime: v.MaxRetryTime},
	}, nil
}
