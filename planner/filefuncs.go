package planner

// Where SQL's file functions and statements may reach: SELECT ... INTO
// OUTFILE and INTO DUMPFILE, LOAD_FILE and LOAD DATA INFILE (the server's
// file; LOCAL is the client's) work on files under DATA/files and nowhere
// else, as MySQL's secure_file_priv confines them to one folder.
// go-mysql-server checks a name by string prefix and then opens it, so
// that DATA/files_x, DATA/files/../x and a symlink inside the folder all
// led outside; here every file is opened through an os.Root on the
// folder, which resolves "..", and symlinks, against the folders as they
// are and refuses to leave it (an absolute symlink is refused even when it
// points inside). Writing is refused, too, in a table's own folders under
// DATA/files (_delta_log, metadata) and anywhere in a sink's location, so
// that no statement can forge a table's log.

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/lakesql/lakesql/sinkddl"
)

// FilesDir is the folder of the data directory that SQL's file functions
// and statements are confined to.
const FilesDir = "files"

// ErrFilePriv refuses a file outside DATA/files, or one that must not be
// written: MySQL's ER_OPTION_PREVENTS_STATEMENT (1290) with its text.
var ErrFilePriv = errors.New("The MySQL server is running with the --secure-file-priv option so it cannot execute this statement")

// errFileExists refuses to overwrite a file: MySQL's ER_FILE_EXISTS_ERROR
// (1086); INTO OUTFILE and DUMPFILE only ever create a file.
type errFileExists struct{ name string }

func (e errFileExists) Error() string { return fmt.Sprintf("File '%s' already exists", e.name) }

// errFileNotFound is a file LOAD DATA cannot open: MySQL's
// ER_FILE_NOT_FOUND (29).
type errFileNotFound struct {
	name string
	err  error
}

func (e errFileNotFound) Error() string {
	return fmt.Sprintf("File '%s' not found (%v)", e.name, e.err)
}

func (e errFileNotFound) Unwrap() error { return e.err }

// errCantCreateFile is a file INTO OUTFILE cannot create for another
// reason than that it exists (its folder is missing, permissions):
// MySQL's ER_CANT_CREATE_FILE (1).
type errCantCreateFile struct {
	name string
	err  error
}

func (e errCantCreateFile) Error() string {
	return fmt.Sprintf("Can't create/write to file '%s' (%v)", e.name, e.err)
}

func (e errCantCreateFile) Unwrap() error { return e.err }

// MySQL's codes for the errors above, which vitess does not all name.
const (
	erCantCreateFile = 1
	erFileNotFound   = 29
)

func refusedFile(name, why string) error {
	return fmt.Errorf("%w: '%s' %s", ErrFilePriv, name, why)
}

// filesDir is DATA/files.
func (e *Engine) filesDir() string { return filepath.Join(e.opts.DataDir, FilesDir) }

// filesName resolves name, as a statement or LOAD_FILE gives it, to a
// name inside DATA/files for the folder's os.Root. An absolute name must
// start with DATA/files, as the data directory was given or with its
// symlinks resolved; a relative one is relative to the data directory, as
// MySQL's are to its own. Empty and "." components are dropped, ".." is
// kept for os.Root to resolve.
func (e *Engine) filesName(name string) (string, error) {
	if name == "" || strings.ContainsRune(name, 0) {
		return "", refusedFile(name, "names no file")
	}
	full := name
	if !filepath.IsAbs(name) {
		full = e.opts.DataDir + "/" + name
	}
	parts := pathParts(full)
	bases := []string{e.filesDir()}
	if real, err := filepath.EvalSymlinks(bases[0]); err == nil && real != bases[0] {
		bases = append(bases, real)
	}
	for _, b := range bases {
		bp := pathParts(b)
		if len(parts) > len(bp) && slices.Equal(parts[:len(bp)], bp) {
			rel := parts[len(bp):]
			if last := rel[len(rel)-1]; last == ".." {
				return "", refusedFile(name, "names a folder, not a file")
			}
			return strings.Join(rel, "/"), nil
		}
	}
	return "", refusedFile(name, "is outside "+bases[0])
}

// pathParts splits a slash-separated path into its components, without
// empty and "." ones.
func pathParts(p string) []string {
	var out []string
	for _, c := range strings.Split(filepath.ToSlash(p), "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// isEscape reports whether err is os.Root's refusal of a name that
// leaves it ("..", a symlink pointing out, an absolute symlink). os does
// not export that error; its text is all there is.
func isEscape(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent"
}

// openFiles opens DATA/files as an os.Root, creating it first when create
// is set (a write); without it, a missing folder is fs.ErrNotExist.
func (e *Engine) openFiles(create bool) (*os.Root, error) {
	if create {
		if err := os.MkdirAll(e.filesDir(), 0o755); err != nil {
			return nil, err
		}
	}
	return os.OpenRoot(e.filesDir())
}

// createFile creates the file name (as a statement gives it) for INTO
// OUTFILE or DUMPFILE: a new file under DATA/files, outside every table's
// folders. It returns the file and a function that removes it, for a
// statement that fails after the file was created.
func (e *Engine) createFile(name string) (*os.File, func(), error) {
	rel, err := e.filesName(name)
	if err != nil {
		return nil, nil, err
	}
	root, err := e.openFiles(true)
	if err != nil {
		return nil, nil, errCantCreateFile{name, err}
	}
	defer root.Close()
	dirRel, base := ".", rel
	if i := strings.LastIndex(rel, "/"); i >= 0 {
		dirRel, base = rel[:i], rel[i+1:]
	}
	dir, err := root.OpenRoot(dirRel)
	switch {
	case isEscape(err):
		return nil, nil, refusedFile(name, "leaves "+e.filesDir())
	case err != nil:
		return nil, nil, errCantCreateFile{name, err}
	}
	if err := e.checkWritable(name, dir, dirRel); err != nil {
		dir.Close()
		return nil, nil, err
	}
	f, err := dir.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	switch {
	case errors.Is(err, fs.ErrExist):
		dir.Close()
		return nil, nil, errFileExists{name}
	case isEscape(err):
		dir.Close()
		return nil, nil, refusedFile(name, "leaves "+e.filesDir())
	case err != nil:
		dir.Close()
		return nil, nil, errCantCreateFile{name, err}
	}
	remove := func() {
		dir.Remove(base)
		dir.Close()
	}
	return f, remove, nil
}

// checkWritable refuses a folder of DATA/files (dir, opened at dirRel)
// that belongs to a table: one named _delta_log or metadata, or any folder
// in a sink's location or its catalog's local warehouse. Its path is
// resolved, and checked to be the folder dir opened, so that a symlink
// (or a rename in between) cannot hide which folder it is.
func (e *Engine) checkWritable(name string, dir *os.Root, dirRel string) error {
	top, err := filepath.EvalSymlinks(e.filesDir())
	if err != nil {
		return errCantCreateFile{name, err}
	}
	// Concatenated, not joined: Join would drop "a/.." before a symlink a
	// is followed.
	real, err := filepath.EvalSymlinks(top + "/" + dirRel)
	if err != nil {
		return errCantCreateFile{name, err}
	}
	opened, err := dir.Stat(".")
	if err != nil {
		return errCantCreateFile{name, err}
	}
	if st, err := os.Stat(real); err != nil || !os.SameFile(st, opened) {
		return refusedFile(name, "changed while it was checked")
	}
	rel, err := filepath.Rel(top, real)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return refusedFile(name, "leaves "+e.filesDir())
	}
	for _, c := range pathParts(rel) {
		if strings.EqualFold(c, "_delta_log") || strings.EqualFold(c, "metadata") {
			return refusedFile(name, "is in a table's "+c+" folder")
		}
	}
	for sink, loc := range e.sinkFolders() {
		if r, err := filepath.Rel(loc, real); err == nil && (r == "." || filepath.IsLocal(r)) {
			return refusedFile(name, "is in the location of sink "+sink)
		}
	}
	return nil
}

// sinkFolders returns the local folders the sinks' tables live in, by
// sink name, symlinks resolved: a Delta sink's location, an Iceberg
// sink's local warehouse.
func (e *Engine) sinkFolders() map[string]string {
	e.mu.Lock()
	handles := make([]*sinkHandle, 0, len(e.sinks))
	for _, h := range e.sinks {
		handles = append(handles, h)
	}
	e.mu.Unlock()
	out := map[string]string{}
	for _, h := range handles {
		var loc string
		switch {
		case h.rec.Format != sinkddl.FormatIceberg:
			loc = h.rec.Path
		case h.spec != nil:
			props, err := e.backends.CatalogProperties(h.spec)
			if err != nil {
				continue
			}
			if u, err := url.Parse(props["warehouse"]); err == nil && u.Scheme == "file" {
				loc = filepath.FromSlash(u.Path)
			}
		}
		if !filepath.IsAbs(loc) {
			continue
		}
		if real, err := filepath.EvalSymlinks(loc); err == nil {
			loc = real
		}
		out[h.rec.Name] = filepath.Clean(loc)
	}
	return out
}

// openFile opens the file name (as a statement or LOAD_FILE gives it)
// under DATA/files for reading: a regular file, never a FIFO or device
// that would block or never end.
func (e *Engine) openFile(name string) (*os.File, error) {
	rel, err := e.filesName(name)
	if err != nil {
		return nil, err
	}
	root, err := e.openFiles(false)
	if err != nil {
		return nil, errFileNotFound{name, err}
	}
	defer root.Close()
	st, err := root.Stat(rel)
	switch {
	case isEscape(err):
		return nil, refusedFile(name, "leaves "+e.filesDir())
	case err != nil:
		return nil, errFileNotFound{name, err}
	case !st.Mode().IsRegular():
		return nil, errFileNotFound{name, fmt.Errorf("not a regular file")}
	}
	f, err := root.Open(rel)
	switch {
	case isEscape(err):
		return nil, refusedFile(name, "leaves "+e.filesDir())
	case err != nil:
		return nil, errFileNotFound{name, err}
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, errFileNotFound{name, fmt.Errorf("not a regular file")}
	}
	return f, nil
}

// sessionEngine returns the engine of ctx's session; file functions run
// only in lakesql's sessions.
func sessionEngine(ctx *gms.Context) (*Engine, error) {
	if s, ok := ctx.Session.(*Session); ok && s.engine != nil {
		return s.engine, nil
	}
	return nil, fmt.Errorf("%w: file access outside a lakesql session", ErrFilePriv)
}
