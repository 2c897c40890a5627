package delta

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lakesql/lakesql/internal/fsync"
)

// Storage is what the Delta log needs from a file system or an object store.
// Keys are slash-separated and relative to the table root. It is kept small so
// object stores can be added beside the local implementation.
type Storage interface {
	// Get returns the whole object, or an error wrapping ErrNotFound.
	// Replay calls it from several goroutines at once.
	Get(ctx context.Context, key string) ([]byte, error)
	// List returns the objects whose keys start with prefix and sort after
	// startAfter (all of them when it is ""), sorted by key. Object stores
	// list from a key cheaply, so a reader that knows its checkpoint need not
	// list the whole history.
	List(ctx context.Context, prefix, startAfter string) ([]ObjectInfo, error)
	// ListAll returns every object whose key starts with prefix, at any
	// depth below it, in no particular order: what VACUUM walks.
	ListAll(ctx context.Context, prefix string) ([]ObjectInfo, error)
	// PutIfAbsent writes the object only if no object has that key; otherwise it
	// returns an error wrapping ErrVersionExists. It must be atomic: of two
	// racing writers exactly one wins. Delta commits depend on it.
	PutIfAbsent(ctx context.Context, key string, data []byte) error
	// Put writes or replaces an object (checkpoints, _last_checkpoint, data files).
	Put(ctx context.Context, key string, data []byte) error
	// Delete removes an object; deleting a missing object is not an error.
	Delete(ctx context.Context, key string) error
	// Stat returns the object's size, or an error wrapping ErrNotFound.
	Stat(ctx context.Context, key string) (ObjectInfo, error)
	// URI names the table root: an absolute slash-separated local path, or
	// scheme://bucket/prefix. It identifies the table, and relative paths
	// in the log resolve against it.
	URI() string

	// Data files are written by DuckDB, which only writes local files: into
	// StagingDir, then published under their key by PutFile. Readers open
	// local files too: LocalFile gives one holding an object's bytes.

	// StagingDir is the local directory new data files are written into,
	// at the relative path their key will have. For local storage it is the
	// table root itself.
	StagingDir() string
	// PutFile publishes the local file path, written under StagingDir, as
	// key. The local file may be moved or removed by it.
	PutFile(ctx context.Context, key, path string) error
	// LocalFile returns the path of a local file holding the object's bytes.
	LocalFile(ctx context.Context, key string) (string, error)
}

// ObjectInfo describes one listed object.
type ObjectInfo struct {
	Key  string
	Size int64
	// ModTime is when the object was last written (the file's mtime, the
	// store's LastModified); zero when the storage does not tell.
	ModTime time.Time
}

// LocalStorage keeps a table in a directory of the local file system.
type LocalStorage struct {
	Root string
}

// NewLocalStorage returns storage rooted at dir (made absolute).
func NewLocalStorage(dir string) (*LocalStorage, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("table root %q: %w", dir, err)
	}
	return &LocalStorage{Root: abs}, nil
}

// LocalPath returns the file system path of key.
func (s *LocalStorage) LocalPath(key string) string {
	return filepath.Join(s.Root, filepath.FromSlash(key))
}

// URI implements Storage.
func (s *LocalStorage) URI() string { return filepath.ToSlash(s.Root) }

// StagingDir implements Storage: files are written in place.
func (s *LocalStorage) StagingDir() string { return s.Root }

// LocalFile implements Storage.
func (s *LocalStorage) LocalFile(_ context.Context, key string) (string, error) {
	return s.LocalPath(key), nil
}

// PutFile implements Storage. A file written under StagingDir already is
// at its key; any other is moved there. Either way the file and the
// directories down to it from the root are synced: DuckDB's COPY does not
// sync what it writes, and a log entry naming the file may follow.
func (s *LocalStorage) PutFile(_ context.Context, key, path string) error {
	dst := s.LocalPath(key)
	if filepath.Clean(path) != dst {
		if err := os.MkdirAll(filepath.Dir(dst), fsync.DirMode); err != nil {
			return fmt.Errorf("put %s: %w", key, err)
		}
		if err := os.Rename(path, dst); err != nil {
			return fmt.Errorf("put %s: %w", key, err)
		}
	}
	// Partition directories may be new: each one's entry is in its parent.
	if err := fsync.Files([]string{dst}, filepath.Dir(dst), s.Root); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// Stat implements Storage.
func (s *LocalStorage) Stat(_ context.Context, key string) (ObjectInfo, error) {
	info, err := os.Stat(s.LocalPath(key))
	if errors.Is(err, fs.ErrNotExist) {
		return ObjectInfo{}, fmt.Errorf("stat %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("stat %s: %w", key, err)
	}
	if !info.Mode().IsRegular() {
		return ObjectInfo{}, fmt.Errorf("stat %s: not a regular file", key)
	}
	return ObjectInfo{Key: key, Size: info.Size(), ModTime: info.ModTime()}, nil
}

// Get implements Storage.
func (s *LocalStorage) Get(_ context.Context, key string) ([]byte, error) {
	b, err := os.ReadFile(s.LocalPath(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", key, ErrNotFound)
	}
	return b, err
}

// List implements Storage. Only the directory part of prefix is walked, and not
// recursively: the log is flat, and so are the prefixes we ask for.
func (s *LocalStorage) List(_ context.Context, prefix, startAfter string) ([]ObjectInfo, error) {
	dir, base := prefix, ""
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		dir, base = prefix[:i], prefix[i+1:]
	} else {
		dir, base = "", prefix
	}
	entries, err := os.ReadDir(s.LocalPath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	var out []ObjectInfo
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(e.Name(), base) {
			continue
		}
		key := e.Name()
		if dir != "" {
			key = dir + "/" + key
		}
		if key <= startAfter {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed while listing
		}
		out = append(out, ObjectInfo{Key: key, Size: info.Size(), ModTime: info.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// ListAll implements Storage by walking the directory of prefix; only
// regular files are objects.
func (s *LocalStorage) ListAll(_ context.Context, prefix string) ([]ObjectInfo, error) {
	dir := ""
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		dir = prefix[:i]
	}
	var out []ObjectInfo
	err := filepath.WalkDir(s.LocalPath(dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking, or no such folder
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(s.Root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed while walking
		}
		out = append(out, ObjectInfo{Key: key, Size: info.Size(), ModTime: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	return out, nil
}

// PutIfAbsent implements Storage: the data goes to a temp file, is synced, and
// is then hard-linked to its name. link(2) fails if the name exists, so of two
// writers exactly one wins and no reader ever sees a half-written entry.
func (s *LocalStorage) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	path := s.LocalPath(key)
	tmp, err := s.writeTemp(path, data)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("put %s: %w", key, ErrVersionExists)
		}
		return fmt.Errorf("put %s: %w", key, err)
	}
	return fsync.Dir(filepath.Dir(path))
}

// Put implements Storage with write-to-temp and rename, so readers see the old
// or the new object, never a torn one.
func (s *LocalStorage) Put(_ context.Context, key string, data []byte) error {
	path := s.LocalPath(key)
	tmp, err := s.writeTemp(path, data)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// Delete implements Storage.
func (s *LocalStorage) Delete(_ context.Context, key string) error {
	err := os.Remove(s.LocalPath(key))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

func (s *LocalStorage) writeTemp(path string, data []byte) (string, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, fsync.DirMode); err != nil {
		return "", err
	}
	// A leading dot keeps temp files out of listings by Delta readers.
	f, err := fsync.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
