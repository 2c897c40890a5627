package fsync

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// FileMode and DirMode are what lakesql creates the files and folders of
// a table with, before the process umask filters them (as os.Create and
// os.MkdirAll do): with the usual umask 022, 0644 and 0755. Log entries,
// checkpoints and _last_checkpoint get the same mode as the data files
// DuckDB writes, so whoever may read a table's data may read its log.
const (
	FileMode fs.FileMode = 0o666
	DirMode  fs.FileMode = 0o777
)

// CreateTemp creates a new file in dir named prefix followed by random
// characters, opened for writing, like os.CreateTemp but with FileMode
// filtered by the umask instead of 0600: it is renamed or linked into
// place as a table's file.
func CreateTemp(dir, prefix string) (*os.File, error) {
	var b [8]byte
	for range 100 {
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(filepath.Join(dir, prefix+hex.EncodeToString(b[:])), os.O_RDWR|os.O_CREATE|os.O_EXCL, FileMode)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &fs.PathError{Op: "createtemp", Path: filepath.Join(dir, prefix+"*"), Err: fs.ErrExist}
}
