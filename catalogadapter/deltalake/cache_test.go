package deltalake

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
)

// The provider keeps the last snapshot of each table. These tests make
// other writers, with providers (and caches) of their own, change the table
// between our calls, and check that we never work from what we cached
// when the log has moved on.

// uncachedFiles lists the table's files as a provider without a cache
// reads them.
func uncachedFiles(t *testing.T, db *Provider, id catalogadapter.TableIdent) (int64, []catalogadapter.DataFile) {
	t.Helper()
	fresh := New(db.db, db.opts)
	fresh.noCache = true
	v, files, err := fresh.Files(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return v, files
}

// TestCacheSeesOtherWriters: two providers take turns committing epochs to
// one table, checkpointing every 3 versions, so each often finds commits
// and checkpoints of the other since its last call. Every row lands once,
// each sees the other's rows and epochs, and what each reads equals an
// uncached read.
func TestCacheSeesOtherWriters(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	opts := testOptions(clocktest.New(t0))
	opts.CheckpointInterval = 3
	p, other := New(db, opts), New(db, opts)
	id := newTable(t, p, catalogadapter.TableDef{})
	var want []row
	next, otherEpoch := int64(0), int64(0)
	commit := func(pr *Provider, writer string, epoch int64, n int) {
		t.Helper()
		rows := idRows(next, n)
		next += int64(n)
		r := writeRows(t, pr, id, rows)
		out, err := pr.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{WriterID: writer, Epoch: epoch})
		if err != nil || out.Skipped {
			t.Fatalf("%s epoch %d: %+v, %v", writer, epoch, out, err)
		}
		want = append(want, rows...)
	}
	for e := int64(1); e <= 12; e++ {
		commit(p, "me", e, 2)
		for range e % 3 { // 0, 1 or 2 foreign commits in between
			otherEpoch++
			commit(other, "other", otherEpoch, 1)
		}
		v, files, err := p.Files(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		uv, ufiles := uncachedFiles(t, p, id)
		if v != uv {
			t.Fatalf("epoch %d: version %d, uncached %d", e, v, uv)
		}
		if d := cmp.Diff(ufiles, files); d != "" {
			t.Fatalf("epoch %d: files (-uncached +cached):\n%s", e, d)
		}
		if got := scanRows(t, p, db, id, -1, nil); !cmp.Equal(want, got) {
			t.Fatalf("epoch %d: rows (-want +got):\n%s", e, cmp.Diff(want, got))
		}
		if last, ok, err := p.LastEpoch(ctx, id, "other"); err != nil || !ok || last != otherEpoch {
			t.Fatalf("epoch %d: other's last epoch %d %v %v, want %d", e, last, ok, err, otherEpoch)
		}
	}
	if got := scanRows(t, other, db, id, -1, nil); !cmp.Equal(want, got) {
		t.Fatalf("the other writer reads (-want +got):\n%s", cmp.Diff(want, got))
	}
}

// TestCacheStaleLosesRace: another writer commits after our attempt took its
// snapshot from the cache: our put-if-absent loses, the retry starts from
// the winner's version, and both epochs' rows are there once.
func TestCacheStaleLosesRace(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p, other := New(db, testOptions(clocktest.New(t0))), New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	mine, theirs := writeRows(t, p, id, idRows(0, 3)), writeRows(t, other, id, idRows(3, 3))
	var once sync.Once
	p.beforeCommit = func(int) {
		once.Do(func() {
			if _, err := other.Commit(ctx, id, []catalogadapter.Receipt{theirs}, catalogadapter.CommitOptions{WriterID: "other", Epoch: 1}); err != nil {
				t.Error(err)
			}
		})
	}
	out, err := p.Commit(ctx, id, []catalogadapter.Receipt{mine}, catalogadapter.CommitOptions{WriterID: "me", Epoch: 1})
	if err != nil || out.Version != 2 || out.Retries != 1 || out.Skipped {
		t.Fatalf("got %+v, %v; want version 2 after one retry", out, err)
	}
	for _, pr := range []*Provider{p, other} {
		if got := scanRows(t, pr, db, id, -1, nil); !cmp.Equal(idRows(0, 6), got) {
			t.Fatalf("rows (-want +got):\n%s", cmp.Diff(idRows(0, 6), got))
		}
	}
	// The same epoch again is a replay, whichever cache answers.
	out, err = p.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, p, id, idRows(0, 3))}, catalogadapter.CommitOptions{WriterID: "me", Epoch: 1})
	if err != nil || !out.Skipped {
		t.Fatalf("replay: %+v, %v", out, err)
	}
}

// TestCacheSeesForeignRemove: a file we read from the cache is rewritten by
// another writer before we commit our own rewrite of it: the commit is a
// conflict, not a second copy of the rows.
func TestCacheSeesForeignRemove(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p, other := New(db, testOptions(clocktest.New(t0))), New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, p, id, idRows(0, 4))}, catalogadapter.CommitOptions{Epoch: -1}); err != nil {
		t.Fatal(err)
	}
	_, files, err := p.Files(ctx, id)
	if err != nil || len(files) != 1 {
		t.Fatalf("files %v %v", files, err)
	}
	if _, err := other.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, other, id, idRows(0, 4))},
		catalogadapter.CommitOptions{Epoch: -1, Removes: []string{files[0].Path}}); err != nil {
		t.Fatal(err)
	}
	_, err = p.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, p, id, idRows(0, 4))},
		catalogadapter.CommitOptions{Epoch: -1, Removes: []string{files[0].Path}})
	if !errors.Is(err, catalogadapter.ErrConflict) {
		t.Fatalf("got %v, want ErrConflict", err)
	}
	if got := scanRows(t, p, db, id, -1, nil); !cmp.Equal(idRows(0, 4), got) {
		t.Fatalf("rows (-want +got):\n%s", cmp.Diff(idRows(0, 4), got))
	}
}

// TestCacheTableRecreated: the table is deleted and created again under the
// same path, by another provider with a longer history than we cached, or
// by ourselves: we read and write the new table, and nothing of the old.
func TestCacheTableRecreated(t *testing.T) {
	ctx := context.Background()
	for _, by := range []string{"other", "self"} {
		t.Run(by, func(t *testing.T) {
			db := openDB(t)
			p := New(db, testOptions(clocktest.New(t0)))
			creator := p
			if by == "other" {
				creator = New(db, testOptions(clocktest.New(t0)))
			}
			id := newTable(t, p, catalogadapter.TableDef{})
			for e := int64(1); e <= 3; e++ {
				if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, p, id, idRows(100*e, 2))}, catalogadapter.CommitOptions{WriterID: "me", Epoch: e}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := p.TableSpec(ctx, id); err != nil { // cache version 3
				t.Fatal(err)
			}
			if err := os.RemoveAll(id.Name); err != nil {
				t.Fatal(err)
			}
			if _, _, err := p.Files(ctx, id); !errors.Is(err, catalogadapter.ErrNoTable) {
				t.Fatalf("deleted table: got %v, want ErrNoTable", err)
			}
			if err := creator.CreateTable(ctx, id, catalogadapter.TableDef{Schema: ordersSchema()}); err != nil {
				t.Fatal(err)
			}
			var want []row
			for e := int64(1); e <= 5; e++ {
				rows := idRows(e, 1)
				if _, err := creator.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, creator, id, rows)}, catalogadapter.CommitOptions{WriterID: "creator", Epoch: e}); err != nil {
					t.Fatal(err)
				}
				want = append(want, rows...)
			}
			if _, ok, err := p.LastEpoch(ctx, id, "me"); err != nil || ok {
				t.Fatalf("our epoch on the new table: %v %v, want none", ok, err)
			}
			out, err := p.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, p, id, idRows(0, 1))}, catalogadapter.CommitOptions{WriterID: "me", Epoch: 1})
			if err != nil || out.Skipped || out.Version != 6 {
				t.Fatalf("commit to the new table: %+v, %v; want version 6", out, err)
			}
			want = append(idRows(0, 1), want...)
			if got := scanRows(t, p, db, id, -1, nil); !cmp.Equal(want, got) {
				t.Fatalf("rows (-want +got):\n%s", cmp.Diff(want, got))
			}
		})
	}
}
