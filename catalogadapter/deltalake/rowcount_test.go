package deltalake

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// TestRowCount: the sum of the files' numRecords, over several commits;
// unknown once a file without stats is active, as a guess would be wrong.
func TestRowCount(t *testing.T) {
	ctx := context.Background()
	p := New(openDB(t), testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	check := func(want int64, wantKnown bool) {
		t.Helper()
		n, known, err := p.RowCount(ctx, id)
		if err != nil || n != want || known != wantKnown {
			t.Errorf("RowCount = %d, %v, %v; want %d, %v", n, known, err, want, wantKnown)
		}
	}
	check(0, true)
	for _, n := range []int{3, 5} {
		if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, p, id, idRows(0, n))}, catalogadapter.CommitOptions{Epoch: -1}); err != nil {
			t.Fatal(err)
		}
	}
	check(8, true)

	r := writeRows(t, p, id, idRows(10, 2))
	var adds []*delta.Add
	if err := json.Unmarshal(r.Metadata, &adds); err != nil {
		t.Fatal(err)
	}
	for _, a := range adds {
		a.Stats = ""
	}
	b, err := json.Marshal(adds)
	if err != nil {
		t.Fatal(err)
	}
	r.Metadata = b
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{Epoch: -1}); err != nil {
		t.Fatal(err)
	}
	check(0, false)
}
