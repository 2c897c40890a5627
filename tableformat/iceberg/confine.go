package iceberg

// Confinement of the files a table's manifests name. Manifests hold
// absolute URIs, and iceberg-go plans whatever they say; a scan reads a
// data or delete file only when it lies inside the table's location or one
// of the allowed roots: by its URI, and for a local file again after its
// symlinks are followed.

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/lakesql/lakesql/internal/subtree"
)

// confineFiles refuses, with ErrPathOutsideTable, the first of uris that
// lies outside the table's location and the allowed roots (absolute local
// directories, or object storage locations as scheme://bucket/prefix).
func confineFiles(location string, allowedRoots, uris []string) error {
	var local, remote []string
	addRoot := func(r string) {
		if lp, err := localPath(r); err == nil {
			local = append(local, lp)
		} else if c, ok := canonicalURL(r); ok {
			remote = append(remote, c)
		}
	}
	addRoot(location)
	for _, r := range allowedRoots {
		addRoot(r)
	}
	var resolved []string // local with symlinks followed, once needed
	for _, u := range uris {
		if err := confineFile(u, local, remote, &resolved); err != nil {
			return fmt.Errorf("%w: %s, outside the table %s and the allowed roots", ErrPathOutsideTable, err.Error(), location)
		}
	}
	return nil
}

func confineFile(uri string, local, remote []string, resolved *[]string) error {
	if lp, err := localPath(uri); err == nil {
		if u, err := url.Parse(uri); err == nil && u.Host != "" && u.Host != "localhost" {
			return fmt.Errorf("file %q is on host %s", uri, u.Host)
		}
		if !subtree.AnyLocal(local, lp) {
			return fmt.Errorf("file %q", uri)
		}
		real, err := filepath.EvalSymlinks(lp)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // reading it reports it missing
		}
		if err != nil {
			return fmt.Errorf("file %q: %w", uri, err)
		}
		if *resolved == nil {
			for _, r := range local {
				if rr, err := filepath.EvalSymlinks(r); err == nil {
					r = rr
				}
				*resolved = append(*resolved, r)
			}
		}
		if !subtree.AnyLocal(*resolved, real) {
			return fmt.Errorf("file %q resolves through a symlink to %s", uri, real)
		}
		return nil
	}
	if c, ok := canonicalURL(uri); ok && subtree.AnyURL(remote, c) {
		return nil
	}
	return fmt.Errorf("file %q", uri)
}

// canonicalURL is scheme://host/path with the path cleaned and no
// trailing slash.
func canonicalURL(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		return "", false
	}
	p := path.Clean("/" + u.Path)
	return strings.TrimSuffix(strings.ToLower(u.Scheme)+"://"+u.Host+p, "/"), true
}
