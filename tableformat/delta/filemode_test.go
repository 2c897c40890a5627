package delta

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFileModesFollowUmask: log entries, checkpoints, _last_checkpoint and
// data files are all created 0666 and folders 0777, filtered by the
// umask: one mode for the whole table, so whoever may read its data may
// read its log. (The umask is process-wide: this test must not run in
// parallel with others.)
func TestFileModesFollowUmask(t *testing.T) {
	for _, umask := range []int{0o022, 0o027, 0o002} {
		old := syscall.Umask(umask)
		func() {
			defer syscall.Umask(old)
			ctx := context.Background()
			store, table := ctNewTable(t, nil)
			db := openDuckDB(t)
			snap, err := table.Latest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			adds, err := snap.WriteFiles(ctx, db, "SELECT i AS id, 'v' AS v FROM range(3) t(i)", WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := snap.Commit(ctx, []Action{{Add: adds[0]}}, CommitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := table.Checkpoint(ctx, res.Version); err != nil {
				t.Fatal(err)
			}
			wantFile, wantDir := fs.FileMode(0o666&^umask), fs.FileMode(0o777&^umask)
			for _, key := range []string{commitKey(0), commitKey(1), checkpointKey(1), lastCheckpointKey, adds[0].Path} {
				st, err := os.Stat(store.LocalPath(key))
				if err != nil {
					t.Fatal(err)
				}
				if st.Mode().Perm() != wantFile {
					t.Errorf("umask %03o: %s has mode %04o, want %04o", umask, key, st.Mode().Perm(), wantFile)
				}
			}
			st, err := os.Stat(store.LocalPath(logDir))
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != wantDir {
				t.Errorf("umask %03o: %s has mode %04o, want %04o", umask, logDir, st.Mode().Perm(), wantDir)
			}
			// No temp file is left behind to be seen with another mode.
			ents, _ := os.ReadDir(store.LocalPath(logDir))
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("left in the log: %s", filepath.Join(logDir, e.Name()))
				}
			}
		}()
	}
}
