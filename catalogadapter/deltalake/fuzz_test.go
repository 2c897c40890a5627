package deltalake

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
)

// FuzzProviderInputs feeds arbitrary table names, receipt metadata and file
// paths to the provider, against a real table, and checks that it never
// panics and that malformed identifiers are refused as invalid.
func FuzzProviderInputs(f *testing.F) {
	ctx := context.Background()
	db := openDB(f)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(f, p, catalogadapter.TableDef{})
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{writeRows(f, p, id, idRows(0, 3))}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1}); err != nil {
		f.Fatal(err)
	}
	_, files, err := p.Files(ctx, id)
	if err != nil || len(files) != 1 {
		f.Fatalf("files %v, %v", files, err)
	}
	live := files[0].Path
	staged := writeRows(f, p, id, idRows(10, 2))

	f.Add("", []byte(""), "", int64(-1))
	f.Add(id.Name, []byte(`[{"path":"../x","size":1}]`), live, int64(0))
	f.Add(id.Name, []byte(staged.Metadata), "", int64(-1))
	f.Add(id.Name, []byte(`[null]`), "/etc/passwd", int64(1))
	f.Add(id.Name+"/", []byte("null"), "%zz", int64(5))
	f.Add("relative/t", []byte(`{"path":"x"}`), "a/../../b", int64(-7))
	f.Add("/nonexistent/t", []byte(`[{"path":"a","partitionValues":{"x":null},"size":-1}]`), "file:///x", int64(1<<62))
	f.Add(filepath.Join(id.Name, "_delta_log"), []byte(`[{"path":"_delta_log/00000000000000000000.json"}]`), "\x00", int64(2))

	f.Fuzz(func(t *testing.T, name string, meta []byte, path string, version int64) {
		fid := catalogadapter.TableIdent{Name: name}
		_, specErr := p.TableSpec(ctx, fid)
		if _, err := tablePath(fid); err != nil && !errors.Is(specErr, catalogadapter.ErrInvalid) {
			t.Fatalf("TableSpec(%q) = %v, want ErrInvalid", name, specErr)
		}
		p.Files(ctx, fid)
		p.LastEpoch(ctx, fid, path)
		p.SecurityContext(ctx, fid)
		p.ScanSQL(ctx, fid, db, version, []string{path})
		p.WriteBatch(ctx, fid, nil)
		receipts := []catalogadapter.Receipt{{Metadata: json.RawMessage(meta)}}
		p.Commit(ctx, fid, receipts, catalogadapter.CommitOptions{Epoch: -1, Removes: []string{path}})
		p.Discard(ctx, fid, receipts)

		// The same inputs against the real table, which must stay readable:
		// no input may commit a file it cannot scan.
		p.ScanSQL(ctx, id, db, version, []string{path})
		var removes []string
		if path != "" {
			removes = []string{path}
		}
		p.Commit(ctx, id, receipts, catalogadapter.CommitOptions{WriterID: "fuzz", Epoch: version, Removes: removes, Operation: name})
		p.Discard(ctx, id, receipts)
		q, err := p.ScanSQL(ctx, id, db, -1, nil)
		if err != nil {
			t.Fatalf("the table broke after inputs %q %q %q %d: %v", name, meta, path, version, err)
		}
		var n int64
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM ("+q+")").Scan(&n); err != nil {
			t.Fatalf("the table broke after inputs %q %q %q %d: %v", name, meta, path, version, err)
		}
	})
}
