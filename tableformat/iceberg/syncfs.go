package iceberg

import (
	"context"
	"errors"
	gofs "io/fs"
	"net/url"
	"os"
	"path/filepath"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/lakesql/lakesql/internal/fsync"
)

// iceberg-go writes local files (data files it writes itself, manifests,
// manifest lists, metadata JSON) without syncing them, then the catalog
// commits a pointer to the new metadata; a power cut could leave the
// catalog naming files whose contents never reached the disk. The local
// schemes are registered again here with a file system that syncs each
// file it creates, and its folder, before reporting it written. It is
// process-wide: every iceberg-go table on a local disk gets it.
func init() {
	factory := func(context.Context, *url.URL, map[string]string) (iceio.IO, error) {
		return syncedFS{}, nil
	}
	for _, scheme := range []string{"file", ""} {
		iceio.Unregister(scheme)
		iceio.Register(scheme, factory)
	}
}

// syncedFS is iceberg-go's LocalFS whose writes are synced on close, and
// which finds a file URI's file by localPath: spelled as it is, where
// LocalFS would percent-decode it.
type syncedFS struct{ iceio.LocalFS }

// local is name's local path, or name itself when it is none (LocalFS
// then reports why).
func local(name string) string {
	if p, err := localPath(name); err == nil {
		return p
	}
	return name
}

// Open implements iceio.IO.
func (fs syncedFS) Open(name string) (iceio.File, error) { return fs.LocalFS.Open(local(name)) }

// ReadFile implements iceio.ReadFileIO.
func (fs syncedFS) ReadFile(name string) ([]byte, error) { return fs.LocalFS.ReadFile(local(name)) }

// Remove implements iceio.IO.
func (fs syncedFS) Remove(name string) error { return fs.LocalFS.Remove(local(name)) }

// RemoveAll removes name and what is below it.
func (fs syncedFS) RemoveAll(name string) error { return fs.LocalFS.RemoveAll(local(name)) }

// WalkDir walks the folder root.
func (fs syncedFS) WalkDir(root string, fn gofs.WalkDirFunc) error {
	return fs.LocalFS.WalkDir(local(root), fn)
}

// ReadDir lists the folder name.
func (fs syncedFS) ReadDir(name string) ([]gofs.DirEntry, error) {
	return fs.LocalFS.ReadDir(local(name))
}

// MkdirAll makes the folder name and its parents.
func (fs syncedFS) MkdirAll(name string) error { return fs.LocalFS.MkdirAll(local(name)) }

// Mkdir makes the folder name.
func (fs syncedFS) Mkdir(name string) error { return fs.LocalFS.Mkdir(local(name)) }

// Stat describes the file name.
func (fs syncedFS) Stat(name string) (gofs.FileInfo, error) { return fs.LocalFS.Stat(local(name)) }

// RenameNoReplace moves oldpath to newpath unless newpath exists.
func (fs syncedFS) RenameNoReplace(oldpath, newpath string) error {
	return fs.LocalFS.RenameNoReplace(local(oldpath), local(newpath))
}

// Rename moves oldpath to newpath.
func (fs syncedFS) Rename(oldpath, newpath string) error {
	return fs.LocalFS.Rename(local(oldpath), local(newpath))
}

// Create implements iceio.WriteFileIO.
func (fs syncedFS) Create(name string) (iceio.FileWriter, error) {
	// The folders Create is about to make need their own entries synced:
	// up to the first one that exists already.
	stop := ""
	if p, err := localPath(name); err == nil {
		stop = filepath.Dir(p)
		for stop != filepath.Dir(stop) {
			if _, err := os.Stat(stop); err == nil {
				break
			}
			stop = filepath.Dir(stop)
		}
	}
	w, err := fs.LocalFS.Create(local(name))
	if err != nil {
		return nil, err
	}
	f, ok := w.(*os.File)
	if !ok {
		return w, nil
	}
	return syncedFile{File: f, stop: stop}, nil
}

// WriteFile implements iceio.WriteFileIO.
func (fs syncedFS) WriteFile(name string, content []byte) error {
	w, err := fs.Create(name)
	if err != nil {
		return err
	}
	_, werr := w.Write(content)
	return errors.Join(werr, w.Close())
}

// syncedFile syncs the file, its folder and the folders made for it up to
// stop when it is closed.
type syncedFile struct {
	*os.File
	stop string
}

func (f syncedFile) Close() error {
	var derr error
	done := make(chan struct{})
	go func() { defer close(done); derr = fsync.Up(filepath.Dir(f.Name()), f.stop) }()
	serr := f.Sync()
	<-done
	return errors.Join(serr, f.File.Close(), derr)
}
