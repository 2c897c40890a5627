package iceberg

import (
	"context"
	"errors"
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

// syncedFS is iceberg-go's LocalFS whose writes are synced on close.
type syncedFS struct{ iceio.LocalFS }

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
	w, err := fs.LocalFS.Create(name)
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
	serr := f.Sync()
	if err := errors.Join(serr, f.File.Close()); err != nil {
		return err
	}
	return fsync.Up(filepath.Dir(f.Name()), f.stop)
}

// Open implements iceio.IO; a file: URI is read at the path localPath
// picks (as spelled when such a file exists, as Java Iceberg and pyiceberg
// write escaped partition folders).
func (fs syncedFS) Open(name string) (iceio.File, error) { return fs.LocalFS.Open(spelled(name)) }

// ReadFile implements iceio.ReadFileIO, as Open.
func (fs syncedFS) ReadFile(name string) ([]byte, error) { return fs.LocalFS.ReadFile(spelled(name)) }

// spelled is name, or the local path localPath picks for a file: URI
// whose spelled path differs from the decoded one.
func spelled(name string) string {
	u, err := url.Parse(name)
	if err != nil || u.Scheme != "file" {
		return name
	}
	if p, ok := spelledPath(name, u); ok {
		if lp, err := localPath(name); err == nil && lp == p {
			return p
		}
	}
	return name
}
