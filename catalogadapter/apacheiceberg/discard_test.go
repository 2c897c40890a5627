package apacheiceberg

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/icebergtest"
	"github.com/lakesql/lakesql/internal/s3test"
)

// TestDiscardKeepsCommittedFiles: discarding the receipts of a commit that
// landed (what a restarted sink does with a killed run's journal) deletes
// nothing the snapshot references, equality-delete files that apply to no
// data file included (the first upsert of a table: nothing older to
// delete from), and then deletes what was never committed. On the local
// disk, on S3, and behind a REST catalog (restLake).
func TestDiscardKeepsCommittedFiles(t *testing.T) {
	for _, c := range []struct {
		name string
		lake func(testing.TB) icebergtest.Lake
	}{
		{"local", icebergtest.Local},
		{"s3", func(t testing.TB) icebergtest.Lake { return icebergtest.S3(t, s3test.Start(t)) }},
		{"rest", func(t testing.TB) icebergtest.Lake { return icebergtest.REST(t, ordersID) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := c.lake(t)
			ctx := context.Background()
			p := lakeProvider(t, l)
			createOrders(t, p)
			db, err := sql.Open("duckdb", "")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			rows := "SELECT 1::BIGINT AS id, 1.5::DOUBLE AS amount, 'eu' AS region"
			receipts, err := p.StageRowDelta(ctx, ordersID, db, []string{"id"}, "SELECT id FROM ("+rows+")", rows)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Commit(ctx, ordersID, receipts, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1}); err != nil {
				t.Fatal(err)
			}
			referenced := l.LiveFiles(t, ordersID)
			if len(referenced) != 2 {
				t.Fatalf("the snapshot references %v, want a data file and an equality-delete file", referenced)
			}
			if err := p.Discard(ctx, ordersID, receipts); err != nil {
				t.Fatal(err)
			}
			if got := l.StoredFiles(t, ordersID); !slices.Equal(got, referenced) {
				t.Fatalf("after discarding committed receipts the table's files are %v, want %v", got, referenced)
			}
			if got, want := l.Rows(t, ordersID), rowStrings(row{ID: 1, Amount: 1.5, Region: "eu"}); !slices.Equal(got, want) {
				t.Fatalf("rows %q, want %q", got, want)
			}
			// Receipts never committed are deleted.
			more, err := p.StageRowDelta(ctx, ordersID, db, []string{"id"}, "SELECT 7::BIGINT AS id", "SELECT 7::BIGINT AS id, NULL::DOUBLE AS amount, 'us' AS region")
			if err != nil {
				t.Fatal(err)
			}
			if n := len(l.StoredFiles(t, ordersID)); n != 4 {
				t.Fatalf("%d files after staging a second row delta, want 4", n)
			}
			if err := p.Discard(ctx, ordersID, more); err != nil {
				t.Fatal(err)
			}
			if got := l.StoredFiles(t, ordersID); !slices.Equal(got, referenced) {
				t.Fatalf("after discarding staged receipts the table's files are %v, want %v", got, referenced)
			}
		})
	}
}
