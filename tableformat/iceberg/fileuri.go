package iceberg

import (
	"fmt"
	"net/url"
	"os"
	pathpkg "path"
	"path/filepath"
	"strings"
)

// localPath turns a file URI of the table into a local path; other URIs
// (object storage) are ErrUnsupported: they go through the cache.
//
// The path is taken as it is spelled, not percent-decoded: Iceberg's Java
// file IO (Hadoop's Path), pyiceberg's (pyarrow) and Spark read
// file:/t/data/p=a%2Fb/f.parquet from a folder named "p=a%2Fb", and that is
// where they write it: the escapes of a partition folder are part of its
// name. url.Parse would decode them, so that lakesql read other engines'
// partitions from folders that are not there and wrote its own (iceberg-go
// escapes partition values in paths) where no other engine looks.
//
// Where the spelled path does not exist but its decoded form does, the
// decoded one is used: the files older lakesql wrote, and a folder whose
// name url.URL escaped when it was joined into a location (a data directory
// with a space in its path).
func localPath(uri string) (string, error) {
	p, err := spelledPath(uri)
	if err != nil {
		return "", err
	}
	return filepath.FromSlash(resolveEscapes(pathpkg.Clean(p))), nil
}

// LocalPath is localPath for other packages (Discard deletes files by it).
func LocalPath(uri string) (string, error) { return localPath(uri) }

// spelledPath is the path of a file URI (file:/p, file:///p,
// file://localhost/p, or a plain absolute path) as written.
func spelledPath(uri string) (string, error) {
	if strings.HasPrefix(uri, "/") {
		return uri, nil
	}
	scheme, rest, ok := strings.Cut(uri, ":")
	if !ok || !strings.EqualFold(scheme, "file") {
		return "", fmt.Errorf("%w: file %s is not on the local file system", ErrUnsupported, uri)
	}
	if auth, ok := strings.CutPrefix(rest, "//"); ok {
		// Another host is refused by confineFile, which names it.
		_, path, _ := strings.Cut(auth, "/")
		rest = "/" + path
	}
	if !strings.HasPrefix(rest, "/") {
		return "", fmt.Errorf("%w: file %s is not on the local file system", ErrUnsupported, uri)
	}
	// A query or fragment is not part of a file's name for url.Parse; keep
	// refusing what it refuses.
	if _, err := url.Parse(uri); err != nil {
		return "", fmt.Errorf("%w: file %s: %w", ErrUnsupported, uri, err)
	}
	return rest, nil
}

// resolveEscapes returns p, or where p holds percent escapes and is not
// there, the path that is, taking each escaped component spelled or decoded,
// whichever exists (spelled when neither does: a new file goes where other
// engines will look for it).
func resolveEscapes(p string) string {
	if !strings.Contains(p, "%") || exists(p) {
		return p
	}
	if d, err := url.PathUnescape(p); err == nil && d != p && exists(d) {
		return pathpkg.Clean(d)
	}
	parts := strings.Split(p, "/")
	out := parts[0]
	for i, part := range parts[1:] {
		spelled := out + "/" + part
		if strings.Contains(part, "%") && !exists(spelled) {
			if d, err := url.PathUnescape(part); err == nil && exists(out+"/"+d) {
				out += "/" + d
				continue
			}
			if !exists(out) {
				// Nothing below a missing folder exists: the rest as spelled.
				return pathpkg.Clean(strings.Join(append([]string{out}, parts[i+1:]...), "/"))
			}
		}
		out = spelled
	}
	return pathpkg.Clean(out)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
