package objectstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakesql/lakesql/internal/fsync"
	"github.com/lakesql/lakesql/internal/storageloc"
	"github.com/lakesql/lakesql/tableformat/delta"
	"github.com/lakesql/lakesql/tableformat/filecache"
)

var _ delta.Storage = (*Store)(nil)

// Store keeps one table (a prefix of a bucket) and implements
// delta.Storage. It is safe for concurrent use.
type Store struct {
	loc     storageloc.Location
	bucket  *blob.Bucket
	retry   RetryPolicy
	breaker *Breaker
	// cache holds downloaded data files under files/ and DuckDB's output
	// under staging/; one folder per table location. files/ is kept
	// within its limit; staging/ holds files not committed yet.
	cache string
	limit *filecache.Limit
}

// Open opens the table at location (scheme://bucket/prefix). Nothing is
// read: a store that cannot be reached fails on first use.
func Open(ctx context.Context, location string, opts Options) (*Store, error) {
	loc, err := storageloc.ParseLocation(location)
	if err != nil {
		return nil, err
	}
	b, err := openBucket(ctx, loc, opts)
	if err != nil {
		return nil, err
	}
	return newStore(loc, b, opts), nil
}

// OpenBucket wraps an open bucket, for tests that inject faults below the
// store. The store does not own b: Close leaves it open.
func OpenBucket(location string, b *blob.Bucket, opts Options) (*Store, error) {
	loc, err := storageloc.ParseLocation(location)
	if err != nil {
		return nil, err
	}
	return newStore(loc, b, opts), nil
}

func newStore(loc storageloc.Location, b *blob.Bucket, opts Options) *Store {
	dir := opts.CacheDir
	if dir == "" {
		dir = os.TempDir()
	}
	sum := sha256.Sum256([]byte(loc.String()))
	cache := filepath.Join(dir, "lakesql-objects", hex.EncodeToString(sum[:8]))
	return &Store{
		loc:     loc,
		bucket:  b,
		retry:   opts.Retry.withDefaults(),
		breaker: NewBreaker(opts.Breaker),
		cache:   cache,
		limit:   &filecache.Limit{Dir: filepath.Join(cache, "files"), MaxBytes: opts.CacheMaxBytes},
	}
}

// Close releases the bucket.
func (s *Store) Close() error { return s.bucket.Close() }

// Health reports the circuit breaker's state.
func (s *Store) Health() Health { return s.breaker.Health() }

// URI implements delta.Storage.
func (s *Store) URI() string { return s.loc.String() }

// StagingDir implements delta.Storage.
func (s *Store) StagingDir() string { return filepath.Join(s.cache, "staging") }

func (s *Store) key(k string) string {
	if s.loc.Prefix == "" {
		return k
	}
	return s.loc.Prefix + "/" + k
}

// notFound maps the store's "no such key" to delta.ErrNotFound.
func notFound(op, key string, err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		return fmt.Errorf("%s %s: %w", op, key, delta.ErrNotFound)
	}
	return fmt.Errorf("%s %s: %w", op, key, err)
}

// Get implements delta.Storage.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	var data []byte
	err := s.retry.do(ctx, s.breaker, "get "+key, func(ctx context.Context) (err error) {
		data, err = s.bucket.ReadAll(ctx, s.key(key))
		return err
	})
	if err != nil {
		return nil, notFound("read", key, err)
	}
	return data, nil
}

// Stat implements delta.Storage.
func (s *Store) Stat(ctx context.Context, key string) (delta.ObjectInfo, error) {
	info := delta.ObjectInfo{Key: key}
	err := s.retry.do(ctx, s.breaker, "stat "+key, func(ctx context.Context) error {
		a, err := s.bucket.Attributes(ctx, s.key(key))
		if err == nil {
			info.Size, info.ModTime = a.Size, a.ModTime
		}
		return err
	})
	if err != nil {
		return delta.ObjectInfo{}, notFound("stat", key, err)
	}
	return info, nil
}

// List implements delta.Storage. On S3 the listing starts after startAfter
// on the server, so a reader that knows its checkpoint does not page
// through the whole log.
func (s *Store) List(ctx context.Context, prefix, startAfter string) ([]delta.ObjectInfo, error) {
	var out []delta.ObjectInfo
	err := s.retry.do(ctx, s.breaker, "list "+prefix, func(ctx context.Context) error {
		out = out[:0]
		opts := &blob.ListOptions{Prefix: s.key(prefix)}
		if startAfter != "" {
			after := s.key(startAfter)
			opts.BeforeList = func(as func(any) bool) error {
				var in *s3.ListObjectsV2Input
				if as(&in) {
					in.StartAfter = &after
				}
				return nil
			}
		}
		it := s.bucket.List(opts)
		for {
			obj, err := it.Next(ctx)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if obj.IsDir {
				continue
			}
			if k := strings.TrimPrefix(obj.Key, s.key("")); k > startAfter {
				out = append(out, delta.ObjectInfo{Key: k, Size: obj.Size, ModTime: obj.ModTime})
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// ListAll implements delta.Storage: an object store's listing of a
// prefix is already recursive.
func (s *Store) ListAll(ctx context.Context, prefix string) ([]delta.ObjectInfo, error) {
	return s.List(ctx, prefix, "")
}

// PutIfAbsent implements delta.Storage with the store's conditional put
// (If-None-Match: *), which S3, GCS and Azure make atomic. It is tried
// once: a failed put may have landed, and only the Delta log, reading the
// entry back, can tell (delta.ErrCommitUnknown).
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if err := s.breaker.allow(); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	err := s.bucket.WriteAll(ctx, s.key(key), data, &blob.WriterOptions{IfNotExist: true, ContentType: contentType(key)})
	s.breaker.record(err)
	if gcerrors.Code(err) == gcerrors.FailedPrecondition {
		return fmt.Errorf("put %s: %w", key, delta.ErrVersionExists)
	}
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// Put implements delta.Storage. A whole-object put is atomic on object
// stores: readers see the old or the new object.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	return s.retry.do(ctx, s.breaker, "put "+key, func(ctx context.Context) error {
		return s.bucket.Upload(ctx, s.key(key), bytes.NewReader(data), &blob.WriterOptions{ContentType: contentType(key)})
	})
}

// Delete implements delta.Storage.
func (s *Store) Delete(ctx context.Context, key string) error {
	err := s.retry.do(ctx, s.breaker, "delete "+key, func(ctx context.Context) error {
		err := s.bucket.Delete(ctx, s.key(key))
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// PutFile implements delta.Storage: the file is uploaded, then moved into
// the read cache (data files never change, so the copy stays good).
func (s *Store) PutFile(ctx context.Context, key, path string) error {
	err := s.retry.do(ctx, s.breaker, "upload "+key, func(ctx context.Context) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return s.bucket.Upload(ctx, s.key(key), f, &blob.WriterOptions{ContentType: contentType(key)})
	})
	if err != nil {
		return fmt.Errorf("upload %s: %w", key, err)
	}
	dst := s.cachePath(key)
	if info, err := os.Stat(path); err == nil && os.MkdirAll(filepath.Dir(dst), fsync.DirMode) == nil {
		if os.Rename(path, dst) == nil {
			s.limit.Added(info.Size())
			return nil
		}
	}
	os.Remove(path)
	return nil
}

// LocalFile implements delta.Storage: a cached copy, downloaded once.
func (s *Store) LocalFile(ctx context.Context, key string) (string, error) {
	dst := s.cachePath(key)
	if _, err := os.Stat(dst); err == nil {
		filecache.Used(dst)
		return dst, nil
	}
	err := s.retry.do(ctx, s.breaker, "download "+key, func(ctx context.Context) error {
		return filecache.Fill(dst, func(w io.Writer) error { return s.bucket.Download(ctx, s.key(key), w, nil) })
	})
	if err != nil {
		return "", notFound("download", key, err)
	}
	if info, err := os.Stat(dst); err == nil {
		s.limit.Added(info.Size())
	}
	return dst, nil
}

// cachePath is where key's local copy lives (filecache.Path).
func (s *Store) cachePath(key string) string {
	return filecache.Path(filepath.Join(s.cache, "files"), key)
}

func contentType(key string) string {
	switch filepath.Ext(key) {
	case ".json":
		return "application/json"
	case ".parquet":
		return "application/vnd.apache.parquet"
	}
	return "application/octet-stream"
}
