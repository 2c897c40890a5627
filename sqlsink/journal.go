package sqlsink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lakesql/lakesql/catalogadapter"
)

// journal remembers the files an epoch has staged but not committed, so
// that a sink reopened after a crash deletes what the crashed run left
// behind. It lives in the sink's state directory, one per writer id and
// table (sinks of several tables may share a writer id and a directory);
// without one, a crash can leave invisible staged files that only a
// VACUUM removes.
//
// The file stays open and is rewritten in place: creating, renaming and
// removing a file each commit cost about as much CPU as writing the
// commit's Parquet file. A record overwrites the one before, padded with
// spaces to its length, in one write, so what a killed process leaves is
// whole JSON; only a power cut could tear it (it is not synced), and a
// torn journal is dropped, leaving its files for VACUUM.
type journal struct {
	path string   // "" when the sink has no state directory
	f    *os.File // opened by the first record
	size int      // the bytes the file holds now
}

// journalEntry is what a journal file holds: the epoch whose files they
// are (0 when epochs are not recorded) and their receipts.
type journalEntry struct {
	Epoch    int64                    `json:"epoch"`
	Receipts []catalogadapter.Receipt `json:"receipts"`
}

func newJournal(stateDir, writerID string, table catalogadapter.TableIdent) *journal {
	if stateDir == "" {
		return &journal{}
	}
	safe := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == ':' {
			return '_'
		}
		return r
	}, writerID)
	h := fnv.New64a()
	h.Write([]byte(table.String()))
	return &journal{path: filepath.Join(stateDir, fmt.Sprintf("staged-%s-%016x.json", safe, h.Sum64()))}
}

// record writes the staged receipts of epoch before anything depends on
// them being cleaned up. It does not sync: the journal only finds
// invisible files to delete, so one lost to a power cut leaves such files
// for VACUUM, never a wrong table, and a sync would cost every commit a
// disk flush.
func (j *journal) record(epoch int64, receipts []catalogadapter.Receipt) error {
	if j.path == "" {
		return nil
	}
	if len(receipts) == 0 {
		return j.clear()
	}
	data, err := json.Marshal(journalEntry{Epoch: epoch, Receipts: receipts})
	if err != nil {
		return err
	}
	if j.f == nil {
		if err := os.MkdirAll(filepath.Dir(j.path), 0o755); err != nil {
			return fmt.Errorf("staging journal: %w", err)
		}
		if j.f, err = os.OpenFile(j.path, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
			return fmt.Errorf("staging journal: %w", err)
		}
		if j.size, err = fileSize(j.f); err != nil {
			return fmt.Errorf("staging journal: %w", err)
		}
	}
	n := len(data)
	if pad := j.size - n; pad > 0 {
		data = append(data, bytes.Repeat([]byte{' '}, pad)...)
	}
	if _, err := j.f.WriteAt(data, 0); err != nil {
		return fmt.Errorf("staging journal: %w", err)
	}
	j.size = max(j.size, n)
	return nil
}

// clear empties the journal: nothing is staged.
func (j *journal) clear() error {
	if j.path == "" {
		return nil
	}
	if j.f != nil {
		if j.size == 0 {
			return nil
		}
		if err := j.f.Truncate(0); err != nil {
			return fmt.Errorf("staging journal: %w", err)
		}
		j.size = 0
		return nil
	}
	if err := os.Remove(j.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("staging journal: %w", err)
	}
	return nil
}

// close closes the journal's file, leaving what it holds for the next
// open to recover, or removes it when it holds nothing.
func (j *journal) close() error {
	if j == nil || j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	if err == nil && j.size == 0 {
		err = j.clear()
	}
	return err
}

func fileSize(f *os.File) (int, error) {
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return int(info.Size()), nil
}

// recover discards what a previous run staged and never committed. The
// backend's Discard keeps files that the latest version holds; but when
// the journal's epoch is known to have landed (landed reports it), its
// files are committed and nothing is discarded: a later version may have
// removed one, and the version that added it still names it.
func (j *journal) recover(ctx context.Context, p catalogadapter.Provider, id catalogadapter.TableIdent, landed func(epoch int64) bool) error {
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
	if len(bytes.TrimSpace(data)) == 0 {
		return j.clear() // empty: nothing was staged
	}
	var e journalEntry
	if err := json.Unmarshal(data, &e); err != nil {
		// A torn journal names nothing we can trust; drop it.
		return j.clear()
	}
	if e.Epoch > 0 && landed(e.Epoch) {
		return j.clear()
	}
	if len(e.Receipts) > 0 {
		if err := p.Discard(ctx, id, e.Receipts); err != nil {
			return fmt.Errorf("discard files staged before a crash: %w", err)
		}
	}
	return j.clear()
}
