package delta

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEncodeZ85(t *testing.T) {
	// Test vector of the Z85 specification.
	if got := encodeZ85([]byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}); got != "HelloWorld" {
		t.Fatalf("got %q, want HelloWorld", got)
	}
}

// Our encoder's bytes equal the test encoder's, which picks containers the
// way RoaringBitmap does after runOptimize, and decode to the same rows.
func TestEncodeDeletionVectorRoundTrip(t *testing.T) {
	for name, set := range dvTestSets() {
		b, err := EncodeDeletionVector(set)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := encodeDVForTest(set, dvTestEncoding{runs: true}); !bytes.Equal(b, want) {
			t.Errorf("%s: %d bytes differ from the reference encoding's %d", name, len(b), len(want))
		}
		got, err := decodeDeletionVectorBitmap(b, int64(len(set)))
		if err != nil {
			t.Fatalf("%s: decode: %v", name, err)
		}
		if len(set) == 0 && len(got) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, set) {
			t.Fatalf("%s: decoded %d rows, want %d", name, len(got), len(set))
		}
	}
	if _, err := EncodeDeletionVector([]uint64{3, 3}); err == nil {
		t.Fatal("duplicate rows encoded")
	}
	if _, err := EncodeDeletionVector([]uint64{1 << 63}); err == nil {
		t.Fatal("a bucket key with its top bit set encoded")
	}
}

// Every DV Spark and the kernel wrote into the shared test tables, decoded
// and encoded again, gives the bytes they wrote: the layout is the one the
// reference writers produce, offsets included.
func TestEncodeDeletionVectorGoldenBytes(t *testing.T) {
	requireSharedTestData(t)
	dir := t.TempDir()
	tables := []string{dvKernelSmallTable}
	for _, name := range []string{"dv-with-columnmapping", "log-replay-dv-key-cases"} {
		untarZst(t, filepath.Join(dvGoldenDir, name+".tar.zst"), dir)
		tables = append(tables, filepath.Join(dir, name, "delta"))
	}
	checked := 0
	for _, table := range tables {
		for _, e := range dvEntriesFromLog(t, table) {
			if e.dv.StorageType != "u" {
				continue
			}
			key, err := deletionVectorKey(e.dv.PathOrInlineDv)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(table, key))
			if err != nil {
				t.Fatal(err)
			}
			raw, err := dvFromFile(bytes.NewReader(data), int64(len(data)), e.dv)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := decodeDeletionVectorBitmap(raw, e.dv.Cardinality)
			if err != nil {
				t.Fatal(err)
			}
			again, err := EncodeDeletionVector(rows)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, raw) {
				t.Errorf("%s %s: encoded %x, Spark wrote %x", table, e.path, again, raw)
			}
			checked++
		}
	}
	if checked < 5 {
		t.Fatalf("only %d DVs checked", checked)
	}
}

// A DV file with several DVs, read back through each storage type: 'u'
// from the table's storage, 'p' by absolute path, and inline 'i'.
func TestDeletionVectorFileWrite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	tbl := OpenTable(store, TableOptions{})
	sets := dvTestSets()
	names := []string{"spec sample", "single", "mixed", "multi bucket", "dense"}
	for _, prefix := range []string{"", RandomDVPrefix(2)} {
		w, err := NewDeletionVectorFile(prefix)
		if err != nil {
			t.Fatal(err)
		}
		var descs []*DeletionVectorDescriptor
		for _, n := range names {
			d, err := w.Add(sets[n])
			if err != nil {
				t.Fatal(err)
			}
			descs = append(descs, d)
		}
		if err := tbl.WriteDeletionVectorFile(ctx, w); err != nil {
			t.Fatal(err)
		}
		if *descs[0].Offset != 1 {
			t.Errorf("first DV at offset %d, want 1 (after the version byte)", *descs[0].Offset)
		}
		for i, d := range descs {
			if len(d.PathOrInlineDv) != len(prefix)+dvUUIDLen || !strings.HasPrefix(d.PathOrInlineDv, prefix) {
				t.Fatalf("pathOrInlineDv %q for prefix %q", d.PathOrInlineDv, prefix)
			}
			if key, ok, err := DeletionVectorKey(d); err != nil || !ok || key != w.Key() {
				t.Fatalf("key %q %v %v, want %q", key, ok, err, w.Key())
			}
			got, err := LoadDeletionVector(ctx, store, d)
			if err != nil {
				t.Fatalf("%s: %v", names[i], err)
			}
			if diff := cmp.Diff(sets[names[i]], got); diff != "" {
				t.Errorf("'u' %s: %s", names[i], diff)
			}
			p := *d
			p.StorageType, p.PathOrInlineDv = "p", "file://"+filepath.ToSlash(filepath.Join(dir, w.Key()))
			if got, err = LoadDeletionVector(ctx, nil, &p); err != nil {
				t.Fatalf("'p' %s: %v", names[i], err)
			}
			if diff := cmp.Diff(sets[names[i]], got); diff != "" {
				t.Errorf("'p' %s: %s", names[i], diff)
			}
		}
	}
	for _, n := range names {
		d, err := InlineDeletionVector(sets[n])
		if err != nil {
			t.Fatal(err)
		}
		if d.Offset != nil || d.StorageType != "i" {
			t.Fatalf("inline descriptor %+v", d)
		}
		got, err := LoadDeletionVector(ctx, nil, d)
		if err != nil {
			t.Fatalf("'i' %s: %v", n, err)
		}
		if diff := cmp.Diff(sets[n], got); diff != "" {
			t.Errorf("'i' %s: %s", n, diff)
		}
	}
	if _, err := NewDeletionVectorFile("../x"); err == nil {
		t.Fatal("a prefix climbing out of the table was taken")
	}
}

func TestUnionRows(t *testing.T) {
	got := UnionRows([]uint64{1, 3, 5, 9}, []uint64{0, 3, 4, 10, 11})
	if diff := cmp.Diff([]uint64{0, 1, 3, 4, 5, 9, 10, 11}, got); diff != "" {
		t.Fatal(diff)
	}
}
