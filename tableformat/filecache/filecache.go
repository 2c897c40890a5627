// Package filecache keeps local copies of files that live on object
// storage. DuckDB reads and writes only local files, so both table formats
// download what a scan needs into a cache folder, and fetch several files
// at once. Table files are never rewritten in place, so a copy, once
// complete, stays good and nothing needs invalidating.
package filecache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/lakesql/lakesql/internal/fsync"
)

// Path is where the copy of the file named rel (slash-separated) lives
// under dir: dir/rel when rel is a clean relative path as it is, else
// dir/hashed/SHA256(rel), so that no name leaves dir and two names that
// differ (a/./b and a/b, a doubled slash) never share a copy.
func Path(dir, rel string) string {
	local := filepath.FromSlash(rel)
	if rel != "" && !strings.ContainsAny(rel, "\\\x00") && filepath.ToSlash(filepath.Clean(local)) == rel && filepath.IsLocal(local) {
		return filepath.Join(dir, local)
	}
	return Hashed(dir, rel)
}

// Hashed is the copy of name under dir by the hash of the name alone:
// dir/hashed/SHA256(name).
func Hashed(dir, name string) string {
	sum := sha256.Sum256([]byte(name))
	return filepath.Join(dir, "hashed", hex.EncodeToString(sum[:]))
}

// Fill writes dst through a temporary file in its folder, renamed into
// place once fill succeeded: processes sharing the cache never see half a
// file, and a failed fill leaves nothing.
func Fill(dst string, fill func(w io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(dst), fsync.DirMode); err != nil {
		return err
	}
	tmp, err := fsync.CreateTemp(filepath.Dir(dst), ".download-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename
	ferr := fill(tmp)
	if err := errors.Join(ferr, tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// MaxTransfers bounds the files ForEach moves at once.
const MaxTransfers = 8

// ForEach runs fn on every item, at most MaxTransfers at once, and
// returns the errors joined; after the first error no new item starts.
func ForEach[T any](ctx context.Context, items []T, fn func(T) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(errs) > 0
	}
	sem := make(chan struct{}, MaxTransfers)
	for _, it := range items {
		if failed() {
			break
		}
		if err := ctx.Err(); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(it); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
