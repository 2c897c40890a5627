package delta

// Confinement of the paths a log names. The protocol lets an add, a cdc
// action or a deletion vector name any absolute path or URI; a reader that
// follows them reads whatever files its process can, for whoever could
// write the log. So every file we read must lie inside the table's location
// or inside one of the allowed roots the table was opened with: lexically
// when the log is replayed, and again after following symlinks when a local
// file is about to be read.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lakesql/lakesql/internal/subtree"
)

// TableOptions tune how a table's log is read.
type TableOptions struct {
	// AllowedRoots are the places besides the table's own location where
	// the files its log names may be: absolute local directories, and
	// object storage locations in canonical form (s3://bucket/prefix).
	// Empty: the table's location alone.
	AllowedRoots []string
	// Now is the clock that checkpoints expire tombstones and txns by and
	// log cleanup counts retention from; time.Now when nil.
	Now func() time.Time
}

// OpenTable returns the table stored in store, reading only files inside
// its location or opts.AllowedRoots. Like NewTable it does not touch
// storage.
func OpenTable(store Storage, opts TableOptions) *Table {
	return &Table{store: store, allowedRoots: append([]string(nil), opts.AllowedRoots...), now: opts.Now}
}

// OutsidePathError reports a path in the log that leads outside the
// table's location and every allowed root. It matches ErrPathOutsideTable.
type OutsidePathError struct {
	What     string // "data file", "deletion vector", "removed file", "change data file"
	Path     string // as the log spells it
	Resolved string // where it leads (after symlinks, when Symlink)
	Version  int64  // the log version that names it, or the snapshot's version when found at read time
	Symlink  bool   // the path was inside, a symlink led out
	Climbs   bool   // a relative path that climbs above the table with ".."
	Root     string // the table's location
}

func (e *OutsidePathError) Error() string {
	if e.Climbs {
		return fmt.Sprintf("%v: %s %q named at version %d climbs above the table %s with \"..\"",
			ErrPathOutsideTable, e.What, e.Path, e.Version, e.Root)
	}
	how := "leads to"
	if e.Symlink {
		how = "resolves through a symlink to"
	}
	return fmt.Sprintf("%v: %s %q named at version %d %s %s, outside the table %s and the allowed roots",
		ErrPathOutsideTable, e.What, e.Path, e.Version, how, e.Resolved, e.Root)
}

// Unwrap lets errors.Is(err, ErrPathOutsideTable) match.
func (e *OutsidePathError) Unwrap() error { return ErrPathOutsideTable }

// pathRules decide where the files of one table may be.
type pathRules struct {
	root        string   // the table's URI, without a trailing slash
	local       bool     // the table is on the local file system
	localRoots  []string // absolute, clean: the table's own (when local), then the allowed ones
	objectRoots []string // scheme://bucket/prefix: the table's own (when remote), then the allowed ones
	realOnce    sync.Once
	realRoots   []string // localRoots with symlinks followed, once needed
}

func (t *Table) rules() *pathRules { return newPathRules(t.store.URI(), t.allowedRoots) }

// newPathRules are the rules of a table at uri (a Storage URI) opened with
// the allowed roots.
func newPathRules(uri string, allowedRoots []string) *pathRules {
	r := &pathRules{root: strings.TrimSuffix(uri, "/")}
	r.local = !strings.Contains(r.root, "://")
	if r.local {
		r.localRoots = append(r.localRoots, filepath.Clean(filepath.FromSlash(r.root)))
	} else {
		r.objectRoots = append(r.objectRoots, r.root)
	}
	for _, a := range allowedRoots {
		if strings.Contains(a, "://") {
			r.objectRoots = append(r.objectRoots, strings.TrimSuffix(a, "/"))
		} else if filepath.IsAbs(a) {
			r.localRoots = append(r.localRoots, filepath.Clean(a))
		}
	}
	return r
}

// place is where a path of the log leads, read lexically.
type place struct {
	local string // the absolute local path, for a local file
	key   string // the storage key, for a relative path or an object in the table's own object storage
	url   string // the canonical URL, for any other object
}

func (p place) String() string {
	switch {
	case p.local != "":
		return p.local
	case p.key != "":
		return p.key
	}
	return p.url
}

// place reads a path as the protocol defines it: a URI, relative to the
// table root unless absolute, percent-encoded. A relative path that
// climbs above the table root with "..", even to come back, and a file:
// URI of another host are refused outright: nothing in the table can be
// meant by them.
func (r *pathRules) place(what, p string, version int64) (place, error) {
	outside := func(to string) error {
		return &OutsidePathError{What: what, Path: p, Resolved: to, Version: version, Root: r.root}
	}
	if u, err := url.Parse(p); err == nil && u.Scheme != "" {
		if u.Opaque != "" {
			return place{}, corrupt("%s path %q at version %d is neither a path nor a URL with one", what, p, version)
		}
		if strings.EqualFold(u.Scheme, "file") {
			if u.Host != "" && u.Host != "localhost" {
				return place{}, outside("host " + u.Host)
			}
			if !strings.HasPrefix(u.Path, "/") {
				return place{}, corrupt("%s path %q at version %d is not absolute", what, p, version)
			}
			return r.localPlace(u.Path), nil
		}
		canon := strings.ToLower(u.Scheme) + "://" + u.Host + path.Clean("/"+u.Path)
		if rel, ok := strings.CutPrefix(canon, r.root+"/"); ok && !r.local {
			return place{key: rel}, nil
		}
		return place{url: canon}, nil
	}
	rel, err := url.PathUnescape(p)
	if err != nil {
		return place{}, corrupt("%s path %q at version %d: %v", what, p, version, err)
	}
	if strings.HasPrefix(rel, "/") {
		return r.localPlace(rel), nil
	}
	if climbs(rel) {
		return place{}, &OutsidePathError{What: what, Path: p, Resolved: path.Join(r.root, rel), Version: version, Climbs: true, Root: r.root}
	}
	rel = path.Clean(rel)
	if r.local {
		return place{key: rel, local: filepath.Join(r.localRoots[0], filepath.FromSlash(rel))}, nil
	}
	return place{key: rel}, nil
}

// localPlace is an absolute local path; inside a local table's root it is
// that table's file like any relative path.
func (r *pathRules) localPlace(p string) place {
	return place{local: filepath.Clean(filepath.FromSlash(p))}
}

// climbs tells whether a relative slash path goes above its start at any
// point.
func climbs(rel string) bool {
	depth := 0
	for _, seg := range strings.Split(rel, "/") {
		switch seg {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

// allowed tells whether a place lies lexically inside the table or an
// allowed root. Components are compared, never string prefixes.
func (r *pathRules) allowed(pl place) bool {
	switch {
	case pl.key != "":
		return true
	case pl.local != "":
		// A root may be named through a symlink, and the log name its
		// target.
		return subtree.AnyLocal(r.localRoots, pl.local) || subtree.AnyLocal(r.resolvedRoots(), pl.local)
	}
	return subtree.AnyURL(r.objectRoots, pl.url)
}

// check is place and allowed together: the error for a path that leads
// outside.
func (r *pathRules) check(what, p string, version int64) (place, error) {
	pl, err := r.place(what, p, version)
	if err != nil {
		return place{}, err
	}
	if !r.allowed(pl) {
		return place{}, &OutsidePathError{What: what, Path: p, Resolved: pl.String(), Version: version, Root: r.root}
	}
	return pl, nil
}

// resolvedRoots are the local roots with their symlinks followed.
func (r *pathRules) resolvedRoots() []string {
	r.realOnce.Do(func() {
		for _, root := range r.localRoots {
			if rr, err := filepath.EvalSymlinks(root); err == nil {
				root = rr
			}
			r.realRoots = append(r.realRoots, root)
		}
	})
	return r.realRoots
}

// real returns the local file path with every symlink followed, refusing
// it when that leads outside the table and the allowed roots (each with
// its own symlinks followed). A file that does not exist is returned as
// it is: reading it fails as a missing file.
func (r *pathRules) real(what, p, local string, version int64) (string, error) {
	resolved, err := filepath.EvalSymlinks(local)
	if errors.Is(err, fs.ErrNotExist) {
		return local, nil
	}
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", what, p, err)
	}
	if subtree.AnyLocal(r.resolvedRoots(), resolved) {
		return resolved, nil
	}
	return "", &OutsidePathError{What: what, Path: p, Resolved: resolved, Version: version, Symlink: true, Root: r.root}
}

// dataFile resolves an add's path to the local file to read: a file of
// the table's own storage through LocalFile (a cached download, on object
// storage), any other local file as it is; a local file with its symlinks
// followed. One that leads outside fails with ErrPathOutsideTable.
func (t *Table) dataFile(ctx context.Context, r *pathRules, p string, version int64) (string, error) {
	pl, err := r.check("data file", p, version)
	if err != nil {
		return "", err
	}
	local := pl.local
	if pl.key != "" {
		if local, err = t.store.LocalFile(ctx, pl.key); err != nil || !r.local {
			return local, err
		}
	}
	if local == "" {
		return "", unsupported("data file on %s", pl.url)
	}
	return r.real("data file", p, local, version)
}

// checkDeletionVector refuses a deletion vector file outside: a 'p' one
// lexically, and on local storage either kind after following symlinks.
// Reading the vector reports any other problem with its path.
func (r *pathRules) checkDeletionVector(d *DeletionVectorDescriptor, version int64) error {
	const what = "deletion vector"
	var local string
	switch d.StorageType {
	case "u":
		key, err := deletionVectorKey(d.PathOrInlineDv)
		if err != nil || !r.local {
			return nil
		}
		local = filepath.Join(r.localRoots[0], filepath.FromSlash(key))
	case "p":
		p, err := deletionVectorLocalPath(d.PathOrInlineDv)
		if err != nil {
			return nil
		}
		pl := place{local: filepath.Clean(p)}
		if !r.allowed(pl) {
			return &OutsidePathError{What: what, Path: d.PathOrInlineDv, Resolved: pl.local, Version: version, Root: r.root}
		}
		local = pl.local
	default:
		return nil
	}
	_, err := r.real(what, d.PathOrInlineDv, local, version)
	return err
}
