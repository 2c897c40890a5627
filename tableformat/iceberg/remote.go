package iceberg

// Tables on object storage. DuckDB reads and writes local files only here
// (no object-store extensions offline), so a table whose location is not
// on the local file system (s3://bucket/prefix, through iceberg-go's
// gocloud S3 FileIO and the catalog's s3.* properties) goes through a
// local folder, the cache:
//
//	CACHE/staging/lakesql-STAGE/part-N.parquet DuckDB's COPY output, before upload
//	CACHE/files/SCHEME/BUCKET/KEY              local copies of the table's files
//
// A staged file is uploaded through the table's FileIO to its planned
// place in the table (LOCATION/data/lakesql-STAGE/part-N.parquet) and then
// moved into the cache, as the writer's copy is as good as a download.
// Reads download the data and delete files a scan needs, once: Iceberg
// never rewrites a file in place, so a copy keyed by the file's URI stays
// good. Downloads land in a temporary file renamed into place, so
// processes sharing the cache never see half a file. CACHE/files is kept
// within filecache.DefaultMaxBytes (or CatalogConfig.CacheMaxBytes): the
// copies used least recently are deleted, and downloaded again if needed.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	ices3 "github.com/apache/iceberg-go/io/gocloud/s3" // registers s3://, s3a://, s3n:// table locations
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/utils"
	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"gocloud.dev/blob"

	"github.com/lakesql/lakesql/tableformat/filecache"
)

// DefaultCacheDir is the cache of a catalog opened without a data or
// cache directory.
func DefaultCacheDir() string { return filepath.Join(os.TempDir(), "lakesql-iceberg-cache") }

// IsLocal tells whether a file URI of a table is on the local file system.
func IsLocal(uri string) bool {
	_, err := localPath(uri)
	return err == nil
}

// cacheRoot is dir, or the default cache.
func cacheRoot(dir string) string {
	if dir == "" {
		return DefaultCacheDir()
	}
	return dir
}

// CachePath is where the local copy of a remote file lives in the cache
// dir: files/SCHEME/BUCKET/KEY, the key as it is (object keys are opaque:
// no unescaping, no cleaning), or files/hashed/SHA256 for a URI that does
// not make a clean relative path as it is (dot segments, doubled or
// trailing slashes), so that two URIs never share a copy.
func CachePath(dir, uri string) string {
	root := filepath.Join(cacheRoot(dir), "files")
	if scheme, rest, ok := strings.Cut(uri, "://"); ok && scheme != "" {
		if host, key, ok := strings.Cut(rest, "/"); ok && host != "" && key != "" {
			return filecache.Path(root, scheme+"/"+host+"/"+key)
		}
	}
	return filecache.Hashed(root, uri)
}

// ForgetCached removes the cached copy of uri, if any: for files that are
// deleted from the table's storage (discarded staged files).
func ForgetCached(dir, uri string) {
	if !IsLocal(uri) {
		os.Remove(CachePath(dir, uri))
	}
}

// LocalFiles maps each URI to a local path DuckDB can read: local files as
// they are, remote ones through the cache in dir, downloading those not
// there yet through the table's FileIO, several at a time.
func LocalFiles(ctx context.Context, tbl *table.Table, dir string, uris []string) (map[string]string, error) {
	out := make(map[string]string, len(uris))
	var remote []string
	for _, u := range uris {
		if _, ok := out[u]; ok {
			continue
		}
		if lp, err := localPath(u); err == nil {
			out[u] = lp
			continue
		}
		dst := CachePath(dir, u)
		out[u] = dst
		if _, err := os.Stat(dst); err != nil {
			remote = append(remote, u)
		} else {
			filecache.Used(dst)
		}
	}
	if len(remote) == 0 {
		return out, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open the file IO of %s: %w", tbl.Location(), err)
	}
	err = filecache.ForEach(ctx, remote, func(u string) error {
		if err := download(fsys, u, out[u]); err != nil {
			return err
		}
		if info, err := os.Stat(out[u]); err == nil {
			cacheLimit(dir).Added(info.Size())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// cacheLimits holds one filecache.Limit per cache folder in use, shared by
// the catalogs and scans of this process that use the folder.
var cacheLimits sync.Map // files folder -> *filecache.Limit

// cacheLimit is the Limit of dir's copies (dir/files), made with the
// default size unless SetCacheLimit set one first.
func cacheLimit(dir string) *filecache.Limit {
	files := filepath.Join(cacheRoot(dir), "files")
	l, _ := cacheLimits.LoadOrStore(files, &filecache.Limit{Dir: files})
	return l.(*filecache.Limit)
}

// SetCacheLimit bounds the copies kept in the cache folder dir to maxBytes,
// for every catalog of this process that uses dir. It must come before the
// folder is first used: a Limit in use is not changed.
func SetCacheLimit(dir string, maxBytes int64) {
	files := filepath.Join(cacheRoot(dir), "files")
	cacheLimits.LoadOrStore(files, &filecache.Limit{Dir: files, MaxBytes: maxBytes})
}

// download copies uri to dst, into the cache (filecache.Fill).
func download(fsys iceio.IO, uri, dst string) error {
	err := filecache.Fill(dst, func(w io.Writer) error {
		src, err := fsys.Open(uri)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(w, src)
		return err
	})
	if err != nil {
		return fmt.Errorf("download %s: %w", uri, err)
	}
	return nil
}

// upload copies the local file src to uri through fsys. With a gocloud
// FileIO the object only appears when the whole file went through: a
// failed copy cancels the write. Other FileIOs get what they can and the
// partial file is removed.
func upload(ctx context.Context, fsys iceio.IO, src, uri string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	if bfs, ok := fsys.(*blobfs.FileIO); ok {
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		w, err := bfs.NewWriter(wctx, uri, true, &blob.WriterOptions{ContentType: "application/vnd.apache.parquet"})
		if err != nil {
			return fmt.Errorf("upload %s: %w", uri, err)
		}
		if _, err := io.Copy(w, f); err != nil {
			cancel() // abandons the upload: Close then commits nothing
			w.Close()
			return fmt.Errorf("upload %s: %w", uri, err)
		}
		if err := w.Close(); err != nil {
			return fmt.Errorf("upload %s: %w", uri, err)
		}
		return nil
	}
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return fmt.Errorf("%w: the file IO of %s cannot write files", ErrUnsupported, uri)
	}
	w, err := wfs.Create(uri)
	if err != nil {
		return fmt.Errorf("upload %s: %w", uri, err)
	}
	_, cerr := io.Copy(w, f)
	if err := errors.Join(cerr, w.Close()); err != nil {
		fsys.Remove(uri)
		return fmt.Errorf("upload %s: %w", uri, err)
	}
	return nil
}

// stagedIO is a read-only FileIO that opens local staged files under the
// URIs they will have in the table, so that iceberg-go reads their
// footers locally and names them by those URIs.
type stagedIO map[string]string

func (s stagedIO) Open(name string) (iceio.File, error) {
	p, ok := s[name]
	if !ok {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (s stagedIO) Remove(name string) error {
	return &os.PathError{Op: "remove", Path: name, Err: errors.ErrUnsupported}
}

// sharedAWSConfig is the AWS configuration iceberg-go's S3 FileIO builds
// from the catalog's properties (region, static credentials, proxy,
// connect timeout), built once, with one HTTP client, for catalogs that
// reach S3. Without it every FileIO iceberg-go opens (several per commit)
// loads the AWS configuration afresh (environment, shared files, CA
// bundle) and gets an HTTP client of its own, whose idle connections
// linger. It is nil for catalogs with no s3 setting, and when the
// properties do not make a configuration (iceberg-go then reports why).
//
// Its connections give up on a server that accepts and does not answer:
// dialling and waiting for a response's headers are bounded by timeout
// (the catalog's); a transfer that goes on is not cut short.
func sharedAWSConfig(ctx context.Context, props map[string]string, timeout time.Duration) *aws.Config {
	usesS3 := false
	for k := range props {
		if strings.HasPrefix(k, "s3.") || k == iceio.S3ClientRegion {
			usesS3 = true
		}
	}
	if u, err := url.Parse(props["warehouse"]); err == nil && (u.Scheme == "s3" || u.Scheme == "s3a" || u.Scheme == "s3n") {
		usesS3 = true
	}
	if !usesS3 {
		return nil
	}
	cfg, err := ices3.ParseAWSConfig(ctx, props)
	if err != nil {
		return nil
	}
	if cfg.HTTPClient == nil {
		// The transport iceberg-go gives each of its S3 clients.
		client := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConns = 256
			t.MaxIdleConnsPerHost = 256
			t.MaxConnsPerHost = 2048
			t.IdleConnTimeout = 90 * time.Second
			if timeout > 0 {
				t.ResponseHeaderTimeout = timeout
			}
		})
		if timeout > 0 {
			client = client.WithDialerOptions(func(d *net.Dialer) { d.Timeout = timeout })
		}
		cfg.HTTPClient = client
	}
	return cfg
}

// WithIO returns ctx carrying the catalog's shared AWS configuration, for
// the calls that open the FileIO of its tables (iceberg-go takes it from
// the context; explicit s3.* region and credentials still apply on top).
// A context that already carries one keeps it.
func (c *Catalog) WithIO(ctx context.Context) context.Context {
	if c == nil || c.aws == nil || utils.GetAwsConfig(ctx) != nil {
		return ctx
	}
	return utils.WithAwsConfig(ctx, c.aws)
}
