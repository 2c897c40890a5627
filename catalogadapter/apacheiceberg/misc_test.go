package apacheiceberg

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	iceio "github.com/apache/iceberg-go/io"

	"github.com/lakesql/lakesql/catalogadapter"
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

// TestSinkColumnTypes writes every column type lakesql maps to Iceberg
// through the sink (DuckDB buffer, Arrow export, iceberg-go writer) and
// reads it back with iceberg-go and with DuckDB.
func TestSinkColumnTypes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	declared := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "tiny", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "small", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "tstz", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	}, nil)
	stored, err := StoredSchema(declared)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"tiny", "small"} {
		if f, _ := stored.FieldsByName(c); !arrow.TypeEqual(f[0].Type, arrow.PrimitiveTypes.Int32) {
			t.Fatalf("%s stored as %s", c, f[0].Type)
		}
	}
	cfg := sinkConfig(t, p, "types")
	cfg.Table = catalogadapter.TableIdent{Namespace: []string{"db"}, Name: "types"}
	cfg.Schema = stored
	s := openSink(t, cfg)
	js := `[{"id": 1, "flag": true, "tiny": -7, "small": 300, "i": 70000, "f": 1.5, "dec": "12.34", "s": "héllo", "b": "AAEC",
	         "d": "2024-02-29", "ts": "2024-02-29T12:34:56.123456", "tstz": "2024-02-29T12:34:56.5Z"},
	        {"id": 2}]`
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, stored, strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	epoch(t, s, 1, rec)

	tbl := freshTable(t, dir, cfg.Table)
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	var fromIceberg []string
	tr := array.NewTableReader(at, 16)
	defer tr.Release()
	for tr.Next() {
		r := tr.RecordBatch()
		for i := 0; i < int(r.NumRows()); i++ {
			var parts []string
			for c := 0; c < int(r.NumCols()); c++ {
				parts = append(parts, r.Column(c).ValueStr(i))
			}
			fromIceberg = append(fromIceberg, strings.Join(parts, "|"))
		}
	}
	sort.Strings(fromIceberg)
	want := []string{
		"1|true|-7|300|70000|1.5|12.34|héllo|AAEC|2024-02-29|2024-02-29T12:34:56.123456|2024-02-29T12:34:56.5Z",
		"2|(null)|(null)|(null)|(null)|(null)|(null)|(null)|(null)|(null)|(null)|(null)",
	}
	if fmt.Sprint(fromIceberg) != fmt.Sprint(want) {
		t.Fatalf("iceberg-go reads\n%q\nwant\n%q", fromIceberg, want)
	}

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.Exec("SET TimeZone = 'UTC'")
	q, err := p.ScanSQL(ctx, cfg.Table, db, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var (
		flag           bool
		tiny, small, i int32
		f              float32
		dec            any
		str            string
		bin            []byte
		d, ts, tstz    any
	)
	err = db.QueryRow("SELECT flag, tiny, small, i, f, dec, s, b, d, ts, tstz FROM ("+q+") WHERE id = 1").
		Scan(&flag, &tiny, &small, &i, &f, &dec, &str, &bin, &d, &ts, &tstz)
	if err != nil {
		t.Fatal(err)
	}
	join := func(vs ...any) string {
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = fmt.Sprintf("%v", v)
		}
		return strings.Join(parts, "|")
	}
	got := join(flag, tiny, small, i, f, dec, str, bin, d, ts, tstz)
	wantDuck := join(true, int32(-7), int32(300), int32(70000), float32(1.5), "12.34", "héllo", []byte{0, 1, 2},
		"2024-02-29 00:00:00 +0000 UTC", "2024-02-29 12:34:56.123456 +0000 UTC", "2024-02-29 12:34:56.5 +0000 UTC")
	if got != wantDuck {
		t.Fatalf("DuckDB reads\n%s\nwant\n%s", got, wantDuck)
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
	t.Run("local", func(t *testing.T) { testCommitRefusesMissingStagedFile(t, localLake(t)) })
	t.Run("s3", func(t *testing.T) { testCommitRefusesMissingStagedFile(t, s3Lake(t, s3test.Start(t))) })
	t.Run("rest", func(t *testing.T) { testCommitRefusesMissingStagedFile(t, restLake(t)) })
}

func testCommitRefusesMissingStagedFile(t *testing.T, l lake) {
	ctx := context.Background()
	p := l.provider(t)
	createOrders(t, p)
	fsys, err := l.table(t, ordersID).FS(ctx)
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
		staged, err := decodeReceipts([]catalogadapter.Receipt{lost})
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
		if snaps := l.snapshots(t, ordersID); len(snaps) != 0 {
			t.Fatalf("the refused commit made snapshot %v", snaps[len(snaps)-1].Summary)
		}
		if err := p.Discard(ctx, ordersID, []catalogadapter.Receipt{kept, lost}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Commit(ctx, ordersID, []catalogadapter.Receipt{stage(t, p, row{ID: 3, Region: "z"})}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1}); err != nil {
		t.Fatal(err)
	}
	if got, want := l.rows(t, ordersID), rowStrings(row{ID: 3, Region: "z"}); !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
}
