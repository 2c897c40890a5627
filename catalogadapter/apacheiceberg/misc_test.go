package apacheiceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	iceio "github.com/apache/iceberg-go/io"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/icebergtest"
	"github.com/lakesql/lakesql/internal/s3test"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

func TestParseIdent(t *testing.T) {
	for in, want := range map[string]string{"db.t": "db.t", "a.b.t": "a.b.t"} {
		id, err := ParseIdent(in)
		if err != nil || id.String() != want || id.Name != "t" {
			t.Fatalf("ParseIdent(%q) = %+v, %v", in, id, err)
		}
	}
	for _, bad := range []string{"t", "", "db.", ".t", "db..t", "db. t"} {
		if _, err := ParseIdent(bad); !errors.Is(err, catalogadapter.ErrInvalid) {
			t.Fatalf("ParseIdent(%q): %v, want ErrInvalid", bad, err)
		}
	}
}

// TestReceiptsSurviveRestart: receipts staged by one provider, carried as
// JSON, are committed by another (a restarted process), and a second set
// is discarded by it, leaving no file behind.
func TestReceiptsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := openProvider(t, dir)
	createOrders(t, a)
	keep, drop := stage(t, a, row{ID: 1, Region: "x"}), stage(t, a, row{ID: 2, Region: "y"})
	if keep.Files != 1 || keep.Rows != 1 || keep.Bytes <= 0 {
		t.Fatalf("receipt counts %+v", keep)
	}
	raw, err := json.Marshal([]catalogadapter.Receipt{keep, drop})
	if err != nil {
		t.Fatal(err)
	}
	var back []catalogadapter.Receipt
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	b := openProvider(t, dir)
	if _, err := b.Commit(ctx, ordersID, back[:1], catalogadapter.CommitOptions{WriterID: "w", Epoch: 1}); err != nil {
		t.Fatal(err)
	}
	files := len(parquetFiles(t, dir))
	if err := b.Discard(ctx, ordersID, back); err != nil {
		t.Fatal(err)
	}
	if n := len(parquetFiles(t, dir)); n != files-1 {
		t.Fatalf("discard left %d files of %d, want one fewer", n, files)
	}
	if got := icebergRows(t, dir); fmt.Sprint(got) != fmt.Sprint(rowStrings(row{ID: 1, Region: "x"})) {
		t.Fatalf("rows %q", got)
	}
	// A receipt that is not ours is refused before anything happens.
	bad := catalogadapter.Receipt{Metadata: json.RawMessage(`{"files": [{"path": "file:///etc/passwd", "content": "data"}]}`)}
	if _, err := b.Commit(ctx, ordersID, []catalogadapter.Receipt{bad}, catalogadapter.CommitOptions{Epoch: -1}); !errors.Is(err, catalogadapter.ErrInvalid) {
		t.Fatalf("bad receipt: %v, want ErrInvalid", err)
	}
}

// TestSecretsMasked: catalog properties holding secrets never show, not
// in the properties a caller prints, not in errors.
func TestSecretsMasked(t *testing.T) {
	props := map[string]string{
		"type":                 "rest",
		"uri":                  "http://admin:hunter22@127.0.0.1:1/catalog",
		"credential":           "client:s3cr3t-value",
		"s3.secret-access-key": "AKIASECRETSECRET",
		"warehouse":            "wh",
	}
	shown := icetable.RedactProperties(props)
	all := fmt.Sprint(shown)
	for _, s := range []string{"hunter22", "s3cr3t-value", "AKIASECRETSECRET"} {
		if strings.Contains(all, s) {
			t.Fatalf("redacted properties show %q: %v", s, shown)
		}
	}
	if shown["warehouse"] != "wh" || !strings.Contains(shown["uri"], "admin:"+icetable.Redacted+"@127.0.0.1") {
		t.Fatalf("redaction went too far: %v", shown)
	}
	_, err := icetable.OpenCatalog(context.Background(), icetable.CatalogConfig{Properties: props})
	if err == nil {
		t.Fatal("a REST catalog on a closed port opened")
	}
	for _, s := range []string{"hunter22", "s3cr3t-value", "AKIASECRETSECRET"} {
		if strings.Contains(err.Error(), s) {
			t.Fatalf("error shows %q: %v", s, err)
		}
	}
}

// TestWriteBatchConforms: WriteBatch matches columns by name (any case,
// any order), skips metadata columns, fills absent nullable columns with
// NULL, widens integers, and refuses what does not fit.
func TestWriteBatchConforms(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	createOrders(t, p)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "_op", Type: arrow.BinaryTypes.String},
		{Name: "REGION", Type: arrow.BinaryTypes.String},
		{Name: "id", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(`[{"_op": "I", "REGION": "eu", "id": 7}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	r, err := p.WriteBatch(ctx, ordersID, rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, ordersID, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{Epoch: -1}); err != nil {
		t.Fatal(err)
	}
	if got := icebergRows(t, dir); fmt.Sprint(got) != fmt.Sprint([]string{"7|0|eu"}) {
		t.Fatalf("rows %q", got)
	}
	bad := arrow.NewSchema([]arrow.Field{{Name: "nope", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rb, _, _ := array.RecordFromJSON(memory.DefaultAllocator, bad, strings.NewReader(`[{"nope": 1}]`))
	defer rb.Release()
	if _, err := p.WriteBatch(ctx, ordersID, rb); !errors.Is(err, catalogadapter.ErrInvalid) {
		t.Fatalf("unknown column: %v, want ErrInvalid", err)
	}
}

// TestCommitRefusesMissingStagedFile: a staged file that is gone by commit
// time (a cleanup, a recovery that discarded it, a lost upload), or is no
// longer what was staged, fails the commit with ErrInvalid and nothing is
// committed, on a local and an S3 warehouse; the files that are there
// still commit.
func TestCommitRefusesMissingStagedFile(t *testing.T) {
	t.Run("local", func(t *testing.T) { testCommitRefusesMissingStagedFile(t, icebergtest.Local(t)) })
	t.Run("s3", func(t *testing.T) { testCommitRefusesMissingStagedFile(t, icebergtest.S3(t, s3test.Start(t))) })
	t.Run("rest", func(t *testing.T) { testCommitRefusesMissingStagedFile(t, icebergtest.REST(t, ordersID)) })
}

func testCommitRefusesMissingStagedFile(t *testing.T, l icebergtest.Lake) {
	ctx := context.Background()
	p := lakeProvider(t, l)
	createOrders(t, p)
	fsys, err := l.Table(t, ordersID).FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := fsys.(iceio.WriteFileIO)
	for _, spoil := range []struct {
		name string
		do   func(path string) error
	}{
		{"missing", w.Remove},
		{"has 1 bytes", func(path string) error { return w.WriteFile(path, []byte("x")) }},
	} {
		lost, kept := stage(t, p, row{ID: 1, Region: "x"}), stage(t, p, row{ID: 2, Region: "y"})
		staged, _, err := decodeReceipts([]catalogadapter.Receipt{lost})
		if err != nil || len(staged) != 1 {
			t.Fatalf("decode receipt: %v %v", staged, err)
		}
		if err := spoil.do(staged[0].Path); err != nil {
			t.Fatal(err)
		}
		_, err = p.Commit(ctx, ordersID, []catalogadapter.Receipt{kept, lost}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1})
		if !errors.Is(err, catalogadapter.ErrInvalid) || !strings.Contains(err.Error(), spoil.name) {
			t.Fatalf("commit with a spoilt staged file: %v, want ErrInvalid (%s)", err, spoil.name)
		}
		if snaps := l.Snapshots(t, ordersID); len(snaps) != 0 {
			t.Fatalf("the refused commit made snapshot %v", snaps[len(snaps)-1].Summary)
		}
		if err := p.Discard(ctx, ordersID, []catalogadapter.Receipt{kept, lost}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Commit(ctx, ordersID, []catalogadapter.Receipt{stage(t, p, row{ID: 3, Region: "z"})}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1}); err != nil {
		t.Fatal(err)
	}
	if got, want := l.Rows(t, ordersID), rowStrings(row{ID: 3, Region: "z"}); !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
}
