package delta

import (
	"context"
	"os"
	"testing"
)

// TestCorruptLatestEntry: a latest log entry of 0 bytes, of blank lines or
// of text that is not JSON lines is a corrupt log naming the file, for a
// reader opening the table, for one updating its snapshot, and for a
// writer committing on a snapshot from before the entry appeared; never
// an empty version to read or to commit on top of.
func TestCorruptLatestEntry(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ name, content, says string }{
		{"zero bytes", "", "is empty (0 bytes)"},
		{"blank lines", "\n \n", "is empty (3 bytes)"},
		{"not json", "garbage\n", "not a JSON object"},
		{"torn json", `{"add":{"path":"x"`, "line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, table := biTable(t, 2, nil)
			before, err := table.Latest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			key := commitKey(3)
			if err := os.WriteFile(store.LocalPath(key), []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = table.Latest(ctx)
			biWantErr(t, "Latest", err, ErrCorruptLog, key, tc.says)
			_, err = table.ReadCommit(ctx, 3)
			biWantErr(t, "ReadCommit", err, ErrCorruptLog, key, tc.says)
			_, err = table.Update(ctx, before)
			biWantErr(t, "Update", err, ErrCorruptLog, key, tc.says)
			_, err = before.Commit(ctx, []Action{{Add: ctAdd("f9.parquet")}}, CommitOptions{})
			biWantErr(t, "Commit", err, ErrCorruptLog, key, tc.says)
			if _, err := os.Stat(store.LocalPath(commitKey(4))); !os.IsNotExist(err) {
				t.Fatalf("a commit landed on top of the corrupt entry: %v", err)
			}
		})
	}
}
