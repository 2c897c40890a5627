// Package fsync makes written files, and the folder entries that name
// them, durable. DuckDB's COPY and iceberg-go write without syncing, and a
// commit that names a file must not survive a power cut that loses it.
package fsync

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
)

// File syncs the file at path to disk.
func File(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	serr := f.Sync()
	return errors.Join(serr, f.Close())
}

// Dir syncs the folder dir, so the entries of files created or renamed in
// it survive a power cut. Some file systems cannot sync a folder and say
// EINVAL; there an entry is as durable as that file system makes it, and
// Dir reports success.
func Dir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// Up syncs dir and each folder above it up to stop, an ancestor of dir
// (or dir itself): a new folder's entry is in its parent, so a file in
// folders made for it is only durable once each of them is. An empty
// stop walks up to the file system's root.
func Up(dir, stop string) error {
	for {
		if err := Dir(dir); err != nil {
			return err
		}
		if len(dir) <= len(stop) || dir == filepath.Dir(dir) {
			return nil
		}
		dir = filepath.Dir(dir)
	}
}

// Files syncs the files at paths and the folders from dir up to stop (as
// Up) all at once, and returns when every sync is done. Each sync is a
// disk flush waited for in turn otherwise; issued together, the file
// system commits them in one journal flush or a few, and a file and the
// folder entry naming it are durable when Files returns, as they would
// be one after the other.
func Files(paths []string, dir, stop string) error {
	errs := make([]error, len(paths)+1)
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Go(func() { errs[i] = File(p) })
	}
	errs[len(paths)] = Up(dir, stop)
	wg.Wait()
	return errors.Join(errs...)
}
