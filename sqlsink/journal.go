package sqlsink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lakesql/lakesql/catalogadapter"
)

// journal remembers the files an epoch has staged but not committed, so
// that a sink reopened after a crash deletes what the crashed run left
// behind. It lives in the sink's state directory; without one, a crash can
// leave invisible staged files that only a VACUUM removes.
type journal struct {
	path string // "" when the sink has no state directory
}

func newJournal(stateDir, writerID string) journal {
	if stateDir == "" {
		return journal{}
	}
	safe := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == ':' {
			return '_'
		}
		return r
	}, writerID)
	return journal{path: filepath.Join(stateDir, "staged-"+safe+".json")}
}

// record writes the staged receipts before anything depends on them being
// cleaned up. It does not sync: the journal only finds invisible files to
// delete, so one lost to a power cut leaves such files for VACUUM, never a
// wrong table, and a sync would cost every commit a disk flush.
func (j journal) record(receipts []catalogadapter.Receipt) error {
	if j.path == "" {
		return nil
	}
	if len(receipts) == 0 {
		return j.clear()
	}
	data, err := json.Marshal(receipts)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(j.path), 0o755); err != nil {
		return fmt.Errorf("staging journal: %w", err)
	}
	tmp := j.path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("staging journal: %w", err)
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("staging journal: %w", err)
	}
	return os.Rename(tmp, j.path)
}

func (j journal) clear() error {
	if j.path == "" {
		return nil
	}
	if err := os.Remove(j.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("staging journal: %w", err)
	}
	return nil
}

// recover discards what a previous run staged and never committed. The
// backend's Discard keeps files that a commit did make live.
func (j journal) recover(ctx context.Context, p catalogadapter.Provider, id catalogadapter.TableIdent) error {
	if j.path == "" {
		return nil
	}
	data, err := os.ReadFile(j.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("staging journal: %w", err)
	}
	var receipts []catalogadapter.Receipt
	if err := json.Unmarshal(data, &receipts); err != nil {
		// A torn journal names nothing we can trust; drop it.
		return j.clear()
	}
	if d, ok := p.(catalogadapter.Discarder); ok && len(receipts) > 0 {
		if err := d.Discard(ctx, id, receipts); err != nil {
			return fmt.Errorf("discard files staged before a crash: %w", err)
		}
	}
	return j.clear()
}
