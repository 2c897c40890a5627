package delta

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/duckarrow"
)

// TestWriteRecordMatchesWriteFiles writes the same random records through
// arrow-go (WriteRecord) and DuckDB's COPY (WriteFiles) and requires the
// same rows read back and the same stats JSON per file.
func TestWriteRecordMatchesWriteFiles(t *testing.T) {
	f := func(name string, t DataType) *StructField { return &StructField{Name: name, Type: t, Nullable: true} }
	schema := &StructType{Fields: []*StructField{
		f("id", TypeLong), f("i", TypeInteger), f("sh", TypeShort), f("by", TypeByte),
		f("fl", TypeFloat), f("db", TypeDouble), f("s", TypeString), f("bin", TypeBinary),
		f("b", TypeBoolean), f("d", TypeDate), f("ts", TypeTimestamp), f("ntz", TypeTimestampNTZ),
		f("d9", DecimalType{Precision: 9, Scale: 2}), f("d18", DecimalType{Precision: 18, Scale: 4}),
		f("d38", DecimalType{Precision: 38, Scale: 10}),
		f("st", &StructType{Fields: []*StructField{f("a", TypeInteger), f("t", TypeString),
			f("in", &StructType{Fields: []*StructField{f("x", TypeDouble), f("dt", TypeDate)}})}}),
		f("arr", &ArrayType{ElementType: TypeInteger, ContainsNull: true}),
		f("m", &MapType{KeyType: TypeString, ValueType: TypeLong, ValueContainsNull: true}),
		f("ps", TypeString), f("pi", TypeInteger), f("pd", TypeDate),
	}}
	cases := []struct {
		name  string
		parts []string
		conf  map[string]string
	}{
		{"plain", nil, nil},
		{"partitioned", []string{"ps", "pi", "pd"}, nil},
		{"column-mapping", []string{"ps"}, map[string]string{"delta.columnMapping.mode": "name"}},
		{"column-mapping-id", nil, map[string]string{"delta.columnMapping.mode": "id"}},
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for round := 0; round < 6; round++ {
				rows := 1 + rng.IntN(40)
				if round == 0 {
					rows = 1
				}
				diffWrite(t, seed, schema, c.parts, c.conf, randomRecord(t, rng, schema, rows, c.parts != nil))
			}
		})
	}
}

func diffWrite(t *testing.T, seed int64, schema *StructType, parts []string, conf map[string]string, rec arrow.RecordBatch) {
	t.Helper()
	defer rec.Release()
	ctx := context.Background()
	db := openDuckDB(t)
	snaps := make([]*Snapshot, 2)
	stats := make([]map[string]any, 2)
	// Both tables start as copies of one, so column mapping gives them
	// the same physical names and ids.
	first := t.TempDir()
	store, err := NewLocalStorage(first)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(ctx, store, CreateOptions{Schema: schema, PartitionColumns: parts, Configuration: maps.Clone(conf)}); err != nil {
		t.Fatal(err)
	}
	second := t.TempDir()
	if err := os.CopyFS(second, os.DirFS(first)); err != nil {
		t.Fatal(err)
	}
	for k, dir := range []string{first, second} {
		store, err := NewLocalStorage(dir)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := NewTable(store).Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var adds []*Add
		if k == 0 {
			adds, err = snap.WriteRecord(ctx, rec, WriteOptions{})
		} else {
			adds, err = writeThroughDuckDB(ctx, t, db, snap, rec)
		}
		if err != nil {
			t.Fatalf("seed %d: path %d: %v", seed, k, err)
		}
		stats[k] = map[string]any{}
		for _, a := range adds {
			var st any
			if err := json.Unmarshal([]byte(a.Stats), &st); err != nil {
				t.Fatal(err)
			}
			pv, _ := json.Marshal(a.PartitionValues)
			stats[k][string(pv)] = st
		}
		actions := []Action{}
		for _, a := range adds {
			actions = append(actions, Action{Add: a})
		}
		if _, err := snap.Commit(ctx, actions, CommitOptions{}); err != nil {
			t.Fatal(err)
		}
		if snaps[k], err = NewTable(store).Latest(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(stats[1], stats[0]); diff != "" {
		t.Fatalf("seed %d: stats by partition (-DuckDB +arrow-go):\n%s", seed, diff)
	}
	var got [2][]string
	for k, snap := range snaps {
		q, err := snap.ScanSQL(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if got[k], _, err = rowsAsText(ctx, db, "SELECT * FROM ("+q+") ORDER BY ALL", nil); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(got[1], got[0]); diff != "" {
		t.Fatalf("seed %d: rows (-DuckDB +arrow-go):\n%s", seed, diff)
	}
	if len(got[0]) != int(rec.NumRows()) {
		t.Fatalf("seed %d: %d rows read back, want %d", seed, len(got[0]), rec.NumRows())
	}
}

// writeThroughDuckDB is the DuckDB path: rec as an Arrow view, WriteFiles.
func writeThroughDuckDB(ctx context.Context, t *testing.T, db *sql.DB, snap *Snapshot, rec arrow.RecordBatch) ([]*Add, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var release func()
	if err := conn.Raw(func(dc any) error {
		ar, err := duckarrow.FromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		release, err = ar.RegisterView(rr, "src_rec")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer release()
	defer conn.ExecContext(ctx, "DROP VIEW IF EXISTS src_rec")
	return snap.WriteFiles(ctx, conn, "SELECT * FROM src_rec", WriteOptions{})
}

// randomRecord makes n rows of schema's columns: nulls, extremes, NaN and
// infinities, long and astral strings, years from 1 to 9999. Partition
// columns take few distinct values so partitions hold several rows.
func randomRecord(t *testing.T, rng *rand.Rand, schema *StructType, n int, fewParts bool) arrow.RecordBatch {
	as, err := ToArrowSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for i, f := range schema.Fields {
		few := fewParts && strings.HasPrefix(f.Name, "p")
		for r := 0; r < n; r++ {
			appendRandom(rng, b.Field(i), f.Type, few)
		}
	}
	return b.NewRecordBatch()
}

var randomStrings = []string{"", "a", "A", "z", "é", "\U0010FFFF", "a/b %=c", "x=y", "日本語",
	strings.Repeat("é", 40), strings.Repeat("a", 31) + "\U0010FFFF\U0010FFFF", strings.Repeat("b", 32) + "\U0010FFFFc", strings.Repeat("c", 33)}

func appendRandom(rng *rand.Rand, b array.Builder, t DataType, few bool) {
	if rng.IntN(5) == 0 {
		b.AppendNull()
		return
	}
	pick := func(xs ...int64) int64 { return xs[rng.IntN(len(xs))] }
	switch bb := b.(type) {
	case *array.Int64Builder:
		bb.Append(pick(math.MinInt64, math.MaxInt64, 0, -1, rng.Int64(), -rng.Int64()))
	case *array.Int32Builder:
		if few {
			bb.Append(int32(rng.IntN(3)))
			return
		}
		bb.Append(int32(pick(math.MinInt32, math.MaxInt32, 0, int64(rng.Int32()), -int64(rng.Int32()))))
	case *array.Int16Builder:
		bb.Append(int16(pick(math.MinInt16, math.MaxInt16, 0, int64(rng.IntN(1000)-500))))
	case *array.Int8Builder:
		bb.Append(int8(pick(math.MinInt8, math.MaxInt8, 0, int64(rng.IntN(100)-50))))
	case *array.Float32Builder:
		fs := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 0.1, -1.5e30, math.MaxFloat32, math.SmallestNonzeroFloat32}
		if rng.IntN(2) == 0 {
			bb.Append(fs[rng.IntN(len(fs))])
		} else {
			bb.Append(float32(rng.NormFloat64() * 1000))
		}
	case *array.Float64Builder:
		fs := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 0.1, 1e300, -math.MaxFloat64, 5e-324}
		if rng.IntN(2) == 0 {
			bb.Append(fs[rng.IntN(len(fs))])
		} else {
			bb.Append(rng.NormFloat64() * 1e6)
		}
	case *array.StringBuilder:
		if few {
			bb.Append(randomStrings[rng.IntN(4)])
			return
		}
		bb.Append(randomStrings[rng.IntN(len(randomStrings))])
	case *array.BinaryBuilder:
		v := make([]byte, rng.IntN(5))
		for i := range v {
			v[i] = byte(rng.IntN(256))
		}
		bb.Append(v)
	case *array.BooleanBuilder:
		bb.Append(rng.IntN(2) == 0)
	case *array.Date32Builder:
		lo, hi := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()/86400, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).Unix()/86400
		if few {
			bb.Append(arrow.Date32(19000 + rng.IntN(2)))
			return
		}
		bb.Append(arrow.Date32(pick(lo, hi, 0, lo+rng.Int64N(hi-lo))))
	case *array.TimestampBuilder:
		lo, hi := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(), time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()
		bb.Append(arrow.Timestamp(pick(lo, hi, 0, -1, 1_700_000_000_123_999, lo+rng.Int64N(hi-lo))))
	case *array.Decimal128Builder:
		dt := t.(DecimalType)
		digits := rng.IntN(dt.Precision) + 1
		var s strings.Builder
		if rng.IntN(2) == 0 {
			s.WriteByte('-')
		}
		for i := 0; i < digits; i++ {
			s.WriteByte(byte('0' + rng.IntN(10)))
		}
		n, err := decimal128.FromString(s.String(), int32(dt.Precision), 0)
		if err != nil {
			panic(err)
		}
		bb.Append(n)
	case *array.StructBuilder:
		st := t.(*StructType)
		bb.Append(true)
		for i, f := range st.Fields {
			appendRandom(rng, bb.FieldBuilder(i), f.Type, false)
		}
	case *array.ListBuilder:
		bb.Append(true)
		for range rng.IntN(3) {
			appendRandom(rng, bb.ValueBuilder(), t.(*ArrayType).ElementType, false)
		}
	case *array.MapBuilder:
		bb.Append(true)
		for k := range rng.IntN(3) {
			bb.KeyBuilder().(*array.StringBuilder).Append(fmt.Sprint("k", k))
			appendRandom(rng, bb.ItemBuilder(), t.(*MapType).ValueType, false)
		}
	default:
		panic(fmt.Sprintf("no random values for %T", b))
	}
}
