package sqlsink

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/apacheiceberg"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
)

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
	stored, err := apacheiceberg.StoredSchema(declared)
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

	db := providertest.OpenDuckDB(t)
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
