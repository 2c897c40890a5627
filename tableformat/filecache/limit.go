package filecache

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// DefaultMaxBytes is the size a cache folder is kept within when its
// Limit sets none.
const DefaultMaxBytes = 10 << 30

// DefaultKeep is how recently used a copy must be to be spared whatever
// the size, when the Limit sets no Keep.
const DefaultKeep = 10 * time.Minute

// Limit keeps the copies under a cache folder within MaxBytes. Once more
// than a tenth of MaxBytes arrived since it last looked, it deletes the
// copies used least recently until the folder fits, except those used
// within Keep: a scan that was handed a copy may not have opened it yet,
// so the folder may stay above MaxBytes for a while. A copy's use time is
// its modification time (copies are never modified; Used sets it), and
// files whose names start with a dot (downloads in progress) are never
// counted or deleted. A Limit may be shared by goroutines.
type Limit struct {
	Dir      string
	MaxBytes int64         // <= 0: DefaultMaxBytes
	Keep     time.Duration // <= 0: DefaultKeep
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu       sync.Mutex
	added    int64 // bytes added since the last trim
	trimming bool
}

// Used marks the copy at path as used now. Best effort: a copy that is
// gone or cannot be touched is simply not protected.
func Used(path string) {
	now := time.Now()
	os.Chtimes(path, now, now)
}

// Added records n bytes put under the folder, and trims it when enough
// arrived since the last trim. Errors of the trim are dropped: the cache
// is an optimisation, and the next trim tries again.
func (l *Limit) Added(n int64) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.added += n
	due := !l.trimming && l.added > l.maxBytes()/10
	if due {
		l.trimming, l.added = true, 0
	}
	l.mu.Unlock()
	if !due {
		return
	}
	l.Trim()
	l.mu.Lock()
	l.trimming = false
	l.mu.Unlock()
}

// Trim deletes the least recently used copies until the folder holds at
// most MaxBytes, sparing those used within Keep, and returns the bytes it
// freed.
func (l *Limit) Trim() (int64, error) {
	type copy struct {
		path string
		size int64
		used time.Time
	}
	var (
		copies []copy
		total  int64
	)
	err := filepath.WalkDir(l.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".") || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // gone meanwhile
		}
		copies = append(copies, copy{p, info.Size(), info.ModTime()})
		total += info.Size()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("trim cache %s: %w", l.Dir, err)
	}
	sort.Slice(copies, func(i, j int) bool { return copies[i].used.Before(copies[j].used) })
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	keep, spare := l.Keep, now()
	if keep <= 0 {
		keep = DefaultKeep
	}
	spare = spare.Add(-keep)
	var freed int64
	for _, c := range copies {
		if total <= l.maxBytes() || !c.used.Before(spare) {
			break
		}
		if err := os.Remove(c.path); err == nil || os.IsNotExist(err) {
			total -= c.size
			freed += c.size
		}
	}
	return freed, nil
}

func (l *Limit) maxBytes() int64 {
	if l.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return l.MaxBytes
}
