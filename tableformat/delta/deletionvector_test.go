package delta

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

const (
	dvKernelSmallTable = sharedTestData + "/kernel/table-with-dv-small"
	dvGoldenDir        = sharedTestData + "/golden"
)

// dvLogEntry is one add or remove action of a test table's log that has a DV.
type dvLogEntry struct {
	version string
	kind    string
	path    string
	dv      *DeletionVectorDescriptor
}

// dvEntriesFromLog reads every JSON commit of a table and returns the add and
// remove actions that carry a deletion vector.
func dvEntriesFromLog(t *testing.T, tableDir string) []dvLogEntry {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(tableDir, "_delta_log", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no commits in %s: %v", tableDir, err)
	}
	sort.Strings(files)
	var out []dvLogEntry
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var line map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			for _, kind := range []string{"add", "remove"} {
				raw, ok := line[kind]
				if !ok {
					continue
				}
				var a struct {
					Path           string                    `json:"path"`
					DeletionVector *DeletionVectorDescriptor `json:"deletionVector"`
				}
				if err := json.Unmarshal(raw, &a); err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				if a.DeletionVector != nil {
					out = append(out, dvLogEntry{strings.TrimSuffix(filepath.Base(file), ".json"), kind, a.Path, a.DeletionVector})
				}
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// checkDVTable loads every DV in a table's log and compares it with want,
// keyed by pathOrInlineDv. Every DV of the log must be listed in want.
func checkDVTable(t *testing.T, tableDir string, want map[string][]uint64) {
	t.Helper()
	store, err := NewLocalStorage(tableDir)
	if err != nil {
		t.Fatal(err)
	}
	entries := dvEntriesFromLog(t, tableDir)
	seen := map[string]bool{}
	for _, e := range entries {
		rows, err := LoadDeletionVector(context.Background(), store, e.dv)
		if err != nil {
			t.Fatalf("version %s %s %s: %v", e.version, e.kind, e.path, err)
		}
		if int64(len(rows)) != e.dv.Cardinality {
			t.Errorf("version %s %s %s: %d rows, cardinality %d", e.version, e.kind, e.path, len(rows), e.dv.Cardinality)
		}
		exp, ok := want[e.dv.PathOrInlineDv]
		if !ok {
			t.Errorf("version %s: unexpected DV %s with rows %v", e.version, e.dv.UniqueID(), rows)
			continue
		}
		if !reflect.DeepEqual(rows, exp) {
			t.Errorf("version %s %s %s: rows %v, want %v", e.version, e.kind, e.path, rows, exp)
		}
		seen[e.dv.PathOrInlineDv] = true
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("expected DV %q not found in the log", k)
		}
	}
}

// The kernel table holds values 0..9 at row indexes 0..9 (checked with
// DuckDB's file_row_number); DELETE ... value IN (0, 9) leaves rows 0 and 9.
func TestDeletionVectorKernelSmallTable(t *testing.T) {
	requireSharedTestData(t)
	checkDVTable(t, dvKernelSmallTable, map[string][]uint64{
		"vBn[lx{q8@P<9BNH/isA": {0, 9},
	})
	key, err := deletionVectorKey("vBn[lx{q8@P<9BNH/isA")
	if err != nil || key != "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin" {
		t.Fatalf("key %q, %v", key, err)
	}
}

// Expected rows were derived from the data files (DuckDB, file_row_number):
// each DELETE targets one col1 value; the row holding it is listed here.
func TestDeletionVectorGoldenColumnMapping(t *testing.T) {
	requireSharedTestData(t)
	dir := t.TempDir()
	untarZst(t, filepath.Join(dvGoldenDir, "dv-with-columnmapping.tar.zst"), dir)
	checkDVTable(t, filepath.Join(dir, "dv-with-columnmapping", "delta"), map[string][]uint64{
		"5DxE90SCJoMhWOS&LEbJ": {0},    // part=0, col1=0 at row 0
		"&9sA9{u>E#S[qd3XLIaZ": {0},    // part=2, col1=2
		"bmfc5TmwY>TJV$^4Zs$+": {0},    // part=4, col1=4
		"GOBG7L]@&bKr%xe4PF6?": {0},    // part=6, col1=6
		"m?5^MJ=4G^SC%md8dbcb": {0},    // part=8, col1=8
		"0Mb{.bIUQYOtd%By%1f@": {0, 1}, // part=0, col1 in (0, 10)
		"oAq1>cIQ1AV0k$:hf0RA": {0, 1}, // part=2, col1 in (2, 12)
		"kqleN6eh%pR:{MHoS{Q]": {0, 1}, // part=4, col1 in (4, 14)
		"^wV}@i>E%:Tv:EZ=7q>&": {0},    // part=6 second file, col1=26
		"*Cr(.vsy[nS2z}u{${-v": {0},    // part=8 second file, col1=28
	})
}

// One file holds id 0..49 at row indexes 0..49; three DELETEs remove ids 0,
// 7 and 14 in turn, each commit replacing the DV with a larger one.
func TestDeletionVectorGoldenLogReplayKeyCases(t *testing.T) {
	requireSharedTestData(t)
	dir := t.TempDir()
	untarZst(t, filepath.Join(dvGoldenDir, "log-replay-dv-key-cases.tar.zst"), dir)
	checkDVTable(t, filepath.Join(dir, "log-replay-dv-key-cases", "delta"), map[string][]uint64{
		"h{&8fAg]=QYJvl-}c!yH": {0},
		"j=hZPftg7qJYIw^L+Oz9": {0, 7},
		"^jP?.<zvDfIGb{C.FPij": {0, 7, 14},
	})
}

// --- test-only encoders -----------------------------------------------------

// encodeZ85ForTest encodes b as Z85, zero-padding to a multiple of 4 bytes the
// way Delta writers do for inline DVs.
func encodeZ85ForTest(b []byte) string {
	padded := append([]byte(nil), b...)
	for len(padded)%4 != 0 {
		padded = append(padded, 0)
	}
	var sb strings.Builder
	for i := 0; i < len(padded); i += 4 {
		v := binary.BigEndian.Uint32(padded[i:])
		var digits [5]byte
		for j := 4; j >= 0; j-- {
			digits[j] = z85Alphabet[v%85]
			v /= 85
		}
		sb.Write(digits[:])
	}
	return sb.String()
}

// dvTestEncoding picks the serialization variants encodeDVForTest produces.
type dvTestEncoding struct {
	runs   bool // use run containers where smaller (cookie 12347)
	native bool // Delta's older native framing instead of the portable one
}

// encodeDVForTest serializes values as a RoaringBitmapArray with its magic
// number, choosing array, bitset or run containers like a real writer.
func encodeDVForTest(values []uint64, enc dvTestEncoding) []byte {
	vals := slices.Clone(values)
	slices.Sort(vals)
	vals = slices.Compact(vals)
	buckets := map[uint32][]uint32{}
	var keys []uint32
	for _, v := range vals {
		hi := uint32(v >> 32)
		if _, ok := buckets[hi]; !ok {
			keys = append(keys, hi)
		}
		buckets[hi] = append(buckets[hi], uint32(v))
	}
	var out []byte
	if enc.native {
		out = binary.LittleEndian.AppendUint32(out, dvMagicNative)
		n := uint32(0)
		if len(keys) > 0 {
			n = keys[len(keys)-1] + 1
		}
		out = binary.LittleEndian.AppendUint32(out, n)
		for i := uint32(0); i < n; i++ {
			bm := encodeRoaring32ForTest(buckets[i], enc.runs)
			out = binary.LittleEndian.AppendUint32(out, uint32(len(bm)))
			out = append(out, bm...)
		}
		return out
	}
	out = binary.LittleEndian.AppendUint32(out, dvMagicPortable)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(keys)))
	for _, k := range keys {
		out = binary.LittleEndian.AppendUint32(out, k)
		out = append(out, encodeRoaring32ForTest(buckets[k], enc.runs)...)
	}
	return out
}

// encodeRoaring32ForTest writes a 32-bit portable roaring bitmap of sorted,
// distinct values.
func encodeRoaring32ForTest(vals []uint32, allowRuns bool) []byte {
	type container struct {
		key  uint16
		vals []uint16
		runs [][2]uint16 // start, length-1
		kind byte        // 'a'rray, 'b'itset, 'r'un
	}
	var cs []*container
	for _, v := range vals {
		k := uint16(v >> 16)
		if len(cs) == 0 || cs[len(cs)-1].key != k {
			cs = append(cs, &container{key: k})
		}
		c := cs[len(cs)-1]
		c.vals = append(c.vals, uint16(v))
	}
	hasRun := false
	for _, c := range cs {
		for _, v := range c.vals {
			if n := len(c.runs); n > 0 && uint32(c.runs[n-1][0])+uint32(c.runs[n-1][1])+1 == uint32(v) {
				c.runs[n-1][1]++
			} else {
				c.runs = append(c.runs, [2]uint16{v, 0})
			}
		}
		size := 2 * len(c.vals)
		c.kind = 'a'
		if len(c.vals) > roaringArrayMaxCard {
			size, c.kind = roaringBitsetBytes, 'b'
		}
		if allowRuns && 2+4*len(c.runs) < size {
			c.kind, hasRun = 'r', true
		}
	}
	size := func(c *container) int {
		switch c.kind {
		case 'a':
			return 2 * len(c.vals)
		case 'b':
			return roaringBitsetBytes
		}
		return 2 + 4*len(c.runs)
	}
	var out []byte
	n := len(cs)
	start := 0
	if hasRun {
		out = binary.LittleEndian.AppendUint32(out, uint32(roaringCookieRuns)|uint32(n-1)<<16)
		flags := make([]byte, (n+7)/8)
		for i, c := range cs {
			if c.kind == 'r' {
				flags[i/8] |= 1 << (i % 8)
			}
		}
		out = append(out, flags...)
		start = 4 + len(flags) + 4*n
		if n >= roaringNoOffsetThresh {
			start += 4 * n
		}
	} else {
		out = binary.LittleEndian.AppendUint32(out, roaringCookieNoRuns)
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
		start = 8 + 8*n
	}
	for _, c := range cs {
		out = binary.LittleEndian.AppendUint16(out, c.key)
		out = binary.LittleEndian.AppendUint16(out, uint16(len(c.vals)-1))
	}
	if !hasRun || n >= roaringNoOffsetThresh {
		for _, c := range cs {
			out = binary.LittleEndian.AppendUint32(out, uint32(start))
			start += size(c)
		}
	}
	for _, c := range cs {
		switch c.kind {
		case 'a':
			for _, v := range c.vals {
				out = binary.LittleEndian.AppendUint16(out, v)
			}
		case 'b':
			words := make([]uint64, 1024)
			for _, v := range c.vals {
				words[v/64] |= 1 << (v % 64)
			}
			for _, w := range words {
				out = binary.LittleEndian.AppendUint64(out, w)
			}
		case 'r':
			out = binary.LittleEndian.AppendUint16(out, uint16(len(c.runs)))
			for _, r := range c.runs {
				out = binary.LittleEndian.AppendUint16(out, r[0])
				out = binary.LittleEndian.AppendUint16(out, r[1])
			}
		}
	}
	return out
}

// dvFileForTest lays out a DV file holding the given bitmaps and returns it
// with the offset of each DV.
func dvFileForTest(bitmaps ...[]byte) ([]byte, []int32) {
	out := []byte{dvFileFormatVersion}
	var offsets []int32
	for _, b := range bitmaps {
		offsets = append(offsets, int32(len(out)))
		out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
		out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(b))
	}
	return out, offsets
}

func int32Ptr(v int32) *int32 { return &v }
func int64Ptr(v int64) *int64 { return &v }

// dvTestSets are row sets that exercise every container type and both halves
// of the 64-bit space.
func dvTestSets() map[string][]uint64 {
	rng := rand.New(rand.NewSource(1))
	sets := map[string][]uint64{
		"empty":       {},
		"spec sample": {3, 4, 7, 11, 18, 29},
		"single":      {0},
		"last 16-bit": {65535, 65536},
		"multi bucket": {
			5, 70000, 1<<32 | 1, 1<<32 | 65536*3 + 9, 7<<32 | 4,
		},
	}
	var even, dense, runs, mixed []uint64
	for i := uint64(0); i < 20000; i += 2 {
		even = append(even, i) // bitset containers (> 4096 values each)
	}
	for i := uint64(0); i < 200000; i++ {
		dense = append(dense, i) // long runs across containers
	}
	for i := uint64(0); i < 10; i++ {
		for j := uint64(0); j < 100; j++ {
			runs = append(runs, i*1000+j)
		}
	}
	for i := 0; i < 3000; i++ {
		mixed = append(mixed, uint64(rng.Int63n(1<<20)))
	}
	mixed = append(mixed, dense[:70000]...)
	sets["bitset"] = even
	sets["dense"] = dense
	sets["runs"] = runs
	sets["mixed"] = mixed
	for name, s := range sets {
		s = slices.Clone(s)
		slices.Sort(s)
		sets[name] = slices.Compact(s)
	}
	return sets
}

// --- tests ------------------------------------------------------------------

func TestZ85Decode(t *testing.T) {
	// Test vector from the Z85 specification.
	got, err := decodeZ85("HelloWorld")
	if err != nil || !bytes.Equal(got, []byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}) {
		t.Fatalf("HelloWorld: %x, %v", got, err)
	}
	rng := rand.New(rand.NewSource(2))
	for n := 0; n < 64; n += 4 {
		b := make([]byte, n)
		rng.Read(b)
		got, err := decodeZ85(encodeZ85ForTest(b))
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("round trip %x: %x, %v", b, got, err)
		}
	}
	for _, bad := range []string{"Hell", "HelloWorl", "Hello World", "Hell\"", "Hell~", "Hell\x00", "#####", "%nSc1"} {
		if _, err := decodeZ85(bad); !errors.Is(err, ErrCorruptLog) {
			t.Errorf("decodeZ85(%q): %v, want ErrCorruptLog", bad, err)
		}
	}
	// "%nSc0" is the largest group (0xFFFFFFFF); one more overflows.
	if got, err := decodeZ85("%nSc0"); err != nil || binary.BigEndian.Uint32(got) != 0xFFFFFFFF {
		t.Errorf("%%nSc0: %x, %v", got, err)
	}
}

func TestDeletionVectorRelativeKey(t *testing.T) {
	// The example of PROTOCOL.md, "JSON Example 1".
	key, err := deletionVectorKey("ab^-aqEH.-t@S}K{vb[*k^")
	if err != nil || key != "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin" {
		t.Fatalf("key %q, %v", key, err)
	}
	key, err = deletionVectorKey("a/b^-aqEH.-t@S}K{vb[*k^")
	if err != nil || key != "a/b/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin" {
		t.Fatalf("nested prefix: %q, %v", key, err)
	}
	for _, bad := range []string{
		"", "short", "^-aqEH.-t@S}K{vb[*k", // too short
		"^-aqEH.-t@S}K{vb[*k~", // not Z85
		"../^-aqEH.-t@S}K{vb[*k^", "a//^-aqEH.-t@S}K{vb[*k^", "/^-aqEH.-t@S}K{vb[*k^", "a\\b^-aqEH.-t@S}K{vb[*k^",
	} {
		if k, err := deletionVectorKey(bad); !errors.Is(err, ErrCorruptLog) {
			t.Errorf("deletionVectorKey(%q) = %q, %v; want ErrCorruptLog", bad, k, err)
		}
	}
}

func TestDeletionVectorDecodeRoundTrip(t *testing.T) {
	for name, set := range dvTestSets() {
		for _, enc := range []dvTestEncoding{{}, {runs: true}, {native: true}, {native: true, runs: true}} {
			b := encodeDVForTest(set, enc)
			got, err := decodeDeletionVectorBitmap(b, int64(len(set)))
			if err != nil {
				t.Fatalf("%s %+v: %v", name, enc, err)
			}
			if len(set) == 0 && len(got) == 0 {
				continue
			}
			if !reflect.DeepEqual(got, set) {
				t.Fatalf("%s %+v: got %d rows, want %d", name, enc, len(got), len(set))
			}
		}
	}
}

func TestDeletionVectorInline(t *testing.T) {
	ctx := context.Background()
	for name, set := range dvTestSets() {
		for _, enc := range []dvTestEncoding{{}, {runs: true}} {
			b := encodeDVForTest(set, enc)
			d := &DeletionVectorDescriptor{
				StorageType:    "i",
				PathOrInlineDv: encodeZ85ForTest(b),
				SizeInBytes:    int32(len(b)),
				Cardinality:    int64(len(set)),
			}
			got, err := LoadDeletionVector(ctx, nil, d)
			if err != nil {
				t.Fatalf("%s %+v (%d bytes): %v", name, enc, len(b), err)
			}
			if len(got) != len(set) || (len(set) > 0 && !reflect.DeepEqual(got, set)) {
				t.Fatalf("%s %+v: got %d rows, want %d", name, enc, len(got), len(set))
			}
		}
	}
	// A 34-byte DV needs 2 bytes of Z85 padding; sizeInBytes cuts them off.
	b := encodeDVForTest([]uint64{42}, dvTestEncoding{})
	if len(b)%4 == 0 {
		t.Fatalf("want an unaligned sample, got %d bytes", len(b))
	}
	d := &DeletionVectorDescriptor{StorageType: "i", PathOrInlineDv: encodeZ85ForTest(b), SizeInBytes: int32(len(b)), Cardinality: 1}
	if got, err := LoadDeletionVector(ctx, nil, d); err != nil || !reflect.DeepEqual(got, []uint64{42}) {
		t.Fatalf("padded inline: %v, %v", got, err)
	}
	// Padding beyond 3 bytes, or fewer bytes than sizeInBytes, is corrupt.
	for _, size := range []int32{int32(len(b)) - 4, int32(len(b)) + 3} {
		bad := *d
		bad.SizeInBytes = size
		if _, err := LoadDeletionVector(ctx, nil, &bad); !errors.Is(err, ErrCorruptLog) {
			t.Errorf("sizeInBytes %d: %v, want ErrCorruptLog", size, err)
		}
	}
}

// PROTOCOL.md's inline example writes the native magic big-endian, which no
// reference reader accepts (delta-io/delta#3063 proposes a fix). We reject it
// as corrupt instead of guessing.
func TestDeletionVectorSpecInlineExampleRejected(t *testing.T) {
	d := &DeletionVectorDescriptor{StorageType: "i", PathOrInlineDv: "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", SizeInBytes: 40, Cardinality: 6}
	if _, err := LoadDeletionVector(context.Background(), nil, d); !errors.Is(err, ErrCorruptLog) {
		t.Fatalf("got %v, want ErrCorruptLog", err)
	}
}

func TestDeletionVectorFileStorageTypes(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store, err := NewLocalStorage(root)
	if err != nil {
		t.Fatal(err)
	}
	first := []uint64{1, 5, 9}
	second := dvTestSets()["mixed"]
	file, offs := dvFileForTest(encodeDVForTest(first, dvTestEncoding{}), encodeDVForTest(second, dvTestEncoding{runs: true}))
	sizes := []int32{int32(len(encodeDVForTest(first, dvTestEncoding{}))), int32(len(encodeDVForTest(second, dvTestEncoding{runs: true})))}

	// 'u' with random prefix "ab": <root>/ab/deletion_vector_<uuid>.bin.
	const rel = "ab^-aqEH.-t@S}K{vb[*k^"
	if err := store.Put(ctx, "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin", file); err != nil {
		t.Fatal(err)
	}
	// 'p' files, one in a directory whose name needs URI escaping.
	spaced := filepath.Join(root, "dv dir", "x.bin")
	if err := os.MkdirAll(filepath.Dir(spaced), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spaced, file, 0o644); err != nil {
		t.Fatal(err)
	}
	spacedURI := (&url.URL{Scheme: "file", Path: filepath.ToSlash(spaced)}).String()
	spacedPath := (&url.URL{Path: filepath.ToSlash(spaced)}).String()
	plain := store.LocalPath("ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin")

	for _, loc := range []struct{ typ, path string }{
		{"u", rel}, {"p", plain}, {"p", "file://" + filepath.ToSlash(plain)}, {"p", "file:" + filepath.ToSlash(plain)},
		{"p", spacedURI}, {"p", spacedPath},
	} {
		for i, want := range [][]uint64{first, second} {
			d := &DeletionVectorDescriptor{StorageType: loc.typ, PathOrInlineDv: loc.path, Offset: int32Ptr(offs[i]), SizeInBytes: sizes[i], Cardinality: int64(len(want))}
			got, err := LoadDeletionVector(ctx, store, d)
			if err != nil {
				t.Fatalf("%s %s DV %d: %v", loc.typ, loc.path, i, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s %s DV %d: got %d rows, want %d", loc.typ, loc.path, i, len(got), len(want))
			}
		}
		// No offset: the first DV, right after the version byte.
		d := &DeletionVectorDescriptor{StorageType: loc.typ, PathOrInlineDv: loc.path, SizeInBytes: sizes[0], Cardinality: 3, MaxRowIndex: int64Ptr(9)}
		if got, err := LoadDeletionVector(ctx, store, d); err != nil || !reflect.DeepEqual(got, first) {
			t.Fatalf("%s %s without offset: %v, %v", loc.typ, loc.path, got, err)
		}
	}

	// A nil descriptor deletes nothing.
	if got, err := LoadDeletionVector(ctx, store, nil); err != nil || got != nil {
		t.Fatalf("nil descriptor: %v, %v", got, err)
	}
	// Missing files report the storage error.
	missing := &DeletionVectorDescriptor{StorageType: "u", PathOrInlineDv: "vBn[lx{q8@P<9BNH/isA", Offset: int32Ptr(1), SizeInBytes: 36, Cardinality: 2}
	if _, err := LoadDeletionVector(ctx, store, missing); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing 'u' file: %v, want ErrNotFound", err)
	}
	missing = &DeletionVectorDescriptor{StorageType: "p", PathOrInlineDv: filepath.ToSlash(filepath.Join(root, "nope.bin")), SizeInBytes: 36, Cardinality: 2}
	if _, err := LoadDeletionVector(ctx, store, missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing 'p' file: %v, want ErrNotExist", err)
	}
	// Remote locations and unknown storage types are unsupported, not corrupt.
	for _, d := range []*DeletionVectorDescriptor{
		{StorageType: "p", PathOrInlineDv: "s3://bucket/table/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin", SizeInBytes: 36, Cardinality: 2},
		{StorageType: "p", PathOrInlineDv: "file://otherhost/x.bin", SizeInBytes: 36, Cardinality: 2},
		{StorageType: "x", PathOrInlineDv: "abc", SizeInBytes: 36, Cardinality: 2},
		{StorageType: "i", PathOrInlineDv: "", Cardinality: maxDeletionVectorRows + 1},
	} {
		if _, err := LoadDeletionVector(ctx, store, d); !errors.Is(err, ErrUnsupportedFeature) {
			t.Errorf("%+v: %v, want ErrUnsupportedFeature", d, err)
		}
	}
	// A newer file format version is a feature we do not know.
	v2 := slices.Clone(file)
	v2[0] = 2
	if err := store.Put(ctx, "deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin", v2); err != nil {
		t.Fatal(err)
	}
	d := &DeletionVectorDescriptor{StorageType: "u", PathOrInlineDv: rel[2:], Offset: int32Ptr(1), SizeInBytes: sizes[0], Cardinality: 3}
	if _, err := LoadDeletionVector(ctx, store, d); !errors.Is(err, ErrUnsupportedFeature) {
		t.Errorf("format version 2: %v, want ErrUnsupportedFeature", err)
	}
	if err := ctxCancelledDV(store, rel, sizes[0]); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func ctxCancelledDV(store Storage, rel string, size int32) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := LoadDeletionVector(ctx, store, &DeletionVectorDescriptor{StorageType: "u", PathOrInlineDv: rel, SizeInBytes: size, Cardinality: 3})
	return err
}

// Descriptor and file-layout damage: each case must fail with ErrCorruptLog.
func TestDeletionVectorCorruptFile(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store, err := NewLocalStorage(root)
	if err != nil {
		t.Fatal(err)
	}
	bitmap := encodeDVForTest([]uint64{1, 5, 9}, dvTestEncoding{})
	good, _ := dvFileForTest(bitmap)
	const rel = "^-aqEH.-t@S}K{vb[*k^"
	const key = "deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"
	valid := DeletionVectorDescriptor{StorageType: "u", PathOrInlineDv: rel, Offset: int32Ptr(1), SizeInBytes: int32(len(bitmap)), Cardinality: 3}

	load := func(file []byte, d DeletionVectorDescriptor) error {
		t.Helper()
		if err := store.Put(ctx, key, file); err != nil {
			t.Fatal(err)
		}
		_, err := LoadDeletionVector(ctx, store, &d)
		return err
	}
	if err := load(good, valid); err != nil {
		t.Fatalf("valid file: %v", err)
	}
	mutate := func(f func(b []byte) []byte) []byte { return f(slices.Clone(good)) }
	with := func(f func(d *DeletionVectorDescriptor)) DeletionVectorDescriptor {
		d := valid
		f(&d)
		return d
	}
	cases := []struct {
		name string
		file []byte
		d    DeletionVectorDescriptor
	}{
		{"crc mismatch", mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), valid},
		{"bitmap byte flipped", mutate(func(b []byte) []byte { b[len(b)-6] ^= 0x40; return b }), valid},
		{"size header differs from descriptor", good, with(func(d *DeletionVectorDescriptor) { d.SizeInBytes-- })},
		{"size header beyond file", mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[1:], 1<<31-1); return b }), with(func(d *DeletionVectorDescriptor) { d.SizeInBytes = 1<<31 - 1 })},
		{"negative size", good, with(func(d *DeletionVectorDescriptor) { d.SizeInBytes = -1 })},
		{"missing checksum", good[:len(good)-4], valid},
		{"empty file", []byte{}, valid},
		{"version byte only", []byte{1}, valid},
		{"offset zero", good, with(func(d *DeletionVectorDescriptor) { d.Offset = int32Ptr(0) })},
		{"negative offset", good, with(func(d *DeletionVectorDescriptor) { d.Offset = int32Ptr(-5) })},
		{"offset beyond file", good, with(func(d *DeletionVectorDescriptor) { d.Offset = int32Ptr(int32(len(good))) })},
		{"cardinality too small", good, with(func(d *DeletionVectorDescriptor) { d.Cardinality = 2 })},
		{"cardinality too large", good, with(func(d *DeletionVectorDescriptor) { d.Cardinality = 4 })},
		{"negative cardinality", good, with(func(d *DeletionVectorDescriptor) { d.Cardinality = -1 })},
		{"beyond maxRowIndex", good, with(func(d *DeletionVectorDescriptor) { d.MaxRowIndex = int64Ptr(8) })},
		{"missing storage type", good, with(func(d *DeletionVectorDescriptor) { d.StorageType = "" })},
		{"bad uuid", good, with(func(d *DeletionVectorDescriptor) { d.PathOrInlineDv = "~" + rel[1:] })},
		{"escaping prefix", good, with(func(d *DeletionVectorDescriptor) { d.PathOrInlineDv = "../" + rel })},
		{"relative 'p' path", good, with(func(d *DeletionVectorDescriptor) { d.StorageType, d.PathOrInlineDv = "p", key })},
		{"'p' path with fragment", good, with(func(d *DeletionVectorDescriptor) {
			d.StorageType, d.PathOrInlineDv = "p", filepath.ToSlash(store.LocalPath(key))+"#x"
		})},
		{"'p' bad escape", good, with(func(d *DeletionVectorDescriptor) { d.StorageType, d.PathOrInlineDv = "p", "/tmp/%zz" })},
		{"inline bad Z85", good, DeletionVectorDescriptor{StorageType: "i", PathOrInlineDv: "wi5b=0000~", SizeInBytes: 8, Cardinality: 1}},
		{"inline truncated Z85", good, DeletionVectorDescriptor{StorageType: "i", PathOrInlineDv: "wi5b=0000", SizeInBytes: 8, Cardinality: 1}},
	}
	for _, c := range cases {
		if err := load(c.file, c.d); !errors.Is(err, ErrCorruptLog) {
			t.Errorf("%s: %v, want ErrCorruptLog", c.name, err)
		}
	}
}

// dvPortableHeader starts a portable RoaringBitmapArray with one bucket.
func dvPortableHeader(key uint32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, dvMagicPortable)
	b = binary.LittleEndian.AppendUint64(b, 1)
	return binary.LittleEndian.AppendUint32(b, key)
}

// dvRunBitmap builds a one-bucket bitmap with one run container.
func dvRunBitmap(header uint16, runs ...[2]uint16) []byte {
	b := dvPortableHeader(0)
	b = binary.LittleEndian.AppendUint32(b, roaringCookieRuns) // one container
	b = append(b, 1)                                           // it is a run container
	b = binary.LittleEndian.AppendUint16(b, 0)                 // key
	b = binary.LittleEndian.AppendUint16(b, header)            // cardinality - 1
	b = binary.LittleEndian.AppendUint16(b, uint16(len(runs)))
	for _, r := range runs {
		b = binary.LittleEndian.AppendUint16(b, r[0])
		b = binary.LittleEndian.AppendUint16(b, r[1])
	}
	return b
}

// dvArrayBitmap builds a one-bucket bitmap with one array container holding
// vals as given (not sorted).
func dvArrayBitmap(key uint32, vals ...uint16) []byte {
	b := dvPortableHeader(key)
	b = binary.LittleEndian.AppendUint32(b, roaringCookieNoRuns)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(vals)-1))
	b = binary.LittleEndian.AppendUint32(b, 16)
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	return b
}

// Bitmap-level damage: every case must fail with ErrCorruptLog, and none may
// allocate by an untrusted count.
func TestDeletionVectorCorruptBitmap(t *testing.T) {
	const limit = 1 << 20
	// Every truncation of every valid encoding is corrupt, never a panic.
	for name, set := range map[string][]uint64{"spec sample": {3, 4, 7, 11, 18, 29}, "runs": dvTestSets()["runs"], "multi bucket": dvTestSets()["multi bucket"]} {
		for _, enc := range []dvTestEncoding{{}, {runs: true}, {native: true}} {
			b := encodeDVForTest(set, enc)
			for i := 0; i < len(b); i++ {
				if _, err := decodeDeletionVectorBitmap(b[:i], limit); !errors.Is(err, ErrCorruptLog) {
					t.Fatalf("%s %+v truncated to %d of %d bytes: %v", name, enc, i, len(b), err)
				}
			}
			if _, err := decodeDeletionVectorBitmap(append(slices.Clone(b), 0), limit); !errors.Is(err, ErrCorruptLog) {
				t.Fatalf("%s %+v with a trailing byte: %v", name, enc, err)
			}
		}
	}

	sample := encodeDVForTest([]uint64{3, 4, 7}, dvTestEncoding{})
	absurdBuckets := binary.LittleEndian.AppendUint32(nil, dvMagicPortable)
	absurdBuckets = binary.LittleEndian.AppendUint64(absurdBuckets, 1<<62)
	absurdContainers := dvPortableHeader(0)
	absurdContainers = binary.LittleEndian.AppendUint32(absurdContainers, roaringCookieNoRuns)
	absurdContainers = binary.LittleEndian.AppendUint32(absurdContainers, 0xFFFFFFFF)
	manyContainers := dvPortableHeader(0)
	manyContainers = binary.LittleEndian.AppendUint32(manyContainers, roaringCookieNoRuns)
	manyContainers = binary.LittleEndian.AppendUint32(manyContainers, 60000)
	absurdNative := binary.LittleEndian.AppendUint32(nil, dvMagicNative)
	absurdNative = binary.LittleEndian.AppendUint32(absurdNative, 0x7FFFFFFF)
	negativeNative := binary.LittleEndian.AppendUint32(nil, dvMagicNative)
	negativeNative = binary.LittleEndian.AppendUint32(negativeNative, 0xFFFFFFFF)
	nativeSize := encodeDVForTest([]uint64{3}, dvTestEncoding{native: true})
	binary.LittleEndian.PutUint32(nativeSize[8:], binary.LittleEndian.Uint32(nativeSize[8:])+1)
	badBitset := encodeDVForTest(dvTestSets()["bitset"], dvTestEncoding{})
	badBitset[len(badBitset)-1] |= 0x80 // one bit more than the header says
	twoBuckets := encodeDVForTest([]uint64{1, 1<<32 | 1}, dvTestEncoding{})
	dupBucket := slices.Clone(twoBuckets)
	// Second bucket key sits after magic(4)+count(8)+key(4)+bitmap(8+4+4+2).
	binary.LittleEndian.PutUint32(dupBucket[4+8+4+18:], 0)
	runCountBeyond := dvRunBitmap(0)
	binary.LittleEndian.PutUint16(runCountBeyond[len(runCountBeyond)-2:], 5) // 5 runs, no run data
	twoContainers := encodeDVForTest([]uint64{1, 65536 + 1}, dvTestEncoding{})
	dupContainer := slices.Clone(twoContainers)
	binary.LittleEndian.PutUint16(dupContainer[4+8+4+8+4:], 0) // second container key := first

	cases := []struct {
		name string
		b    []byte
	}{
		{"nil", nil},
		{"bad magic", append([]byte{0, 0, 0, 0}, sample[4:]...)},
		{"big-endian magic", append(binary.BigEndian.AppendUint32(nil, dvMagicPortable), sample[4:]...)},
		{"absurd bucket count", absurdBuckets},
		{"absurd container count", absurdContainers},
		{"container count beyond data", manyContainers},
		{"absurd native count", absurdNative},
		{"negative native count", negativeNative},
		{"native size mismatch", nativeSize},
		{"bad cookie", append(dvPortableHeader(0), 0x39, 0x30, 0, 0, 0, 0, 0, 0)},
		{"bucket key top bit", dvArrayBitmap(0x80000000, 1)},
		{"duplicate bucket key", dupBucket},
		{"duplicate container key", dupContainer},
		{"unsorted array", dvArrayBitmap(0, 5, 3)},
		{"duplicate array value", dvArrayBitmap(0, 5, 5)},
		{"bitset popcount mismatch", badBitset},
		{"run overflows container", dvRunBitmap(1, [2]uint16{65535, 1})},
		{"runs overlap", dvRunBitmap(5, [2]uint16{0, 2}, [2]uint16{2, 1})},
		{"runs not ascending", dvRunBitmap(1, [2]uint16{9, 0}, [2]uint16{3, 0})},
		{"run total mismatch", dvRunBitmap(9, [2]uint16{0, 2})},
		{"run count beyond data", runCountBeyond},
	}
	for _, c := range cases {
		if _, err := decodeDeletionVectorBitmap(c.b, limit); !errors.Is(err, ErrCorruptLog) {
			t.Errorf("%s: %v, want ErrCorruptLog", c.name, err)
		}
	}
	// Sanity: the builders make valid bitmaps when not damaged.
	if got, err := decodeDeletionVectorBitmap(dvRunBitmap(4, [2]uint16{0, 1}, [2]uint16{5, 2}), limit); err != nil || !reflect.DeepEqual(got, []uint64{0, 1, 5, 6, 7}) {
		t.Errorf("run builder: %v, %v", got, err)
	}
	if got, err := decodeDeletionVectorBitmap(dvArrayBitmap(2, 3, 5), limit); err != nil || !reflect.DeepEqual(got, []uint64{2<<32 | 3, 2<<32 | 5}) {
		t.Errorf("array builder: %v, %v", got, err)
	}
	// 18 bytes of runs describe 2^20 rows; a small limit must stop them
	// before they are materialised.
	huge := dvPortableHeader(0)
	huge = binary.LittleEndian.AppendUint32(huge, roaringCookieRuns|15<<16) // 16 containers
	huge = append(huge, 0xFF, 0xFF)
	for k := 0; k < 16; k++ {
		huge = binary.LittleEndian.AppendUint16(huge, uint16(k))
		huge = binary.LittleEndian.AppendUint16(huge, 0xFFFF)
	}
	for k := 0; k < 16; k++ {
		huge = binary.LittleEndian.AppendUint32(huge, 0) // offsets, unused
	}
	for k := 0; k < 16; k++ {
		huge = append(huge, 1, 0, 0, 0, 0xFF, 0xFF) // one run 0..65535
	}
	if _, err := decodeDeletionVectorBitmap(huge, 1000); !errors.Is(err, ErrCorruptLog) {
		t.Errorf("rows beyond limit: %v, want ErrCorruptLog", err)
	}
	if got, err := decodeDeletionVectorBitmap(huge, 1<<20); err != nil || len(got) != 1<<20 || got[len(got)-1] != 1<<20-1 {
		t.Errorf("full runs: %d rows, %v", len(got), err)
	}
}

// dvFuzzLimit bounds the rows a fuzz input may decode to, as a descriptor's
// cardinality does in LoadDeletionVector.
const dvFuzzLimit = 1 << 20

func FuzzDecodeDeletionVector(f *testing.F) {
	// A real DV written by Databricks Runtime, when the shared data is here.
	if file, err := os.ReadFile(filepath.Join(dvKernelSmallTable, "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin")); err == nil && len(file) >= 41 {
		f.Add(file[5:41])
	}
	sets := dvTestSets()
	for _, name := range []string{"spec sample", "multi bucket", "runs", "last 16-bit", "empty"} {
		for _, enc := range []dvTestEncoding{{}, {runs: true}, {native: true}} {
			f.Add(encodeDVForTest(sets[name], enc))
		}
	}
	f.Add(encodeDVForTest(sets["bitset"][:5000], dvTestEncoding{}))
	f.Add(dvRunBitmap(4, [2]uint16{0, 1}, [2]uint16{5, 2}))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := decodeDeletionVectorBitmap(data, dvFuzzLimit)
		if err != nil {
			if !errors.Is(err, ErrCorruptLog) {
				t.Fatalf("error not wrapping ErrCorruptLog: %v", err)
			}
			return
		}
		if len(rows) > dvFuzzLimit {
			t.Fatalf("%d rows beyond the limit", len(rows))
		}
		for i := 1; i < len(rows); i++ {
			if rows[i] <= rows[i-1] {
				t.Fatalf("rows not strictly ascending at %d: %d after %d", i, rows[i], rows[i-1])
			}
		}
		// Whatever decoded must survive a re-encode unchanged.
		again, err := decodeDeletionVectorBitmap(encodeDVForTest(rows, dvTestEncoding{runs: true}), dvFuzzLimit)
		if err != nil || len(again) != len(rows) || (len(rows) > 0 && !reflect.DeepEqual(again, rows)) {
			t.Fatalf("re-encode: %d rows, %v; want %d rows", len(again), err, len(rows))
		}
	})
}

// TestDeletionVectorOnFileWithoutNewColumn: a file with a deletion vector
// is read on its own; when it was written before a column was added, and
// another file holds that column, the column reads as NULL for its rows
// (the select list follows the columns of the files each read covers).
func TestDeletionVectorOnFileWithoutNewColumn(t *testing.T) {
	ctx := context.Background()
	db := openDuckDB(t)
	dir := t.TempDir()
	store, err := NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	schema := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"x","type":"long","nullable":true,"metadata":{}}]}`
	actions := []Action{
		{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors"}}},
		{MetaData: &Metadata{ID: "t", Format: Format{Provider: "parquet"}, SchemaString: schema, PartitionColumns: []string{}}},
	}
	for i, q := range []string{`SELECT * FROM (VALUES (1::BIGINT), (2)) v(id)`, `SELECT 3::BIGINT AS id, 4::BIGINT AS x`} {
		name := fmt.Sprintf("f%d.parquet", i)
		if _, err := db.ExecContext(ctx, fmt.Sprintf("COPY (%s) TO '%s/%s' (FORMAT parquet)", q, dir, name)); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(dir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		add := &Add{Path: name, PartitionValues: map[string]*string{}, Size: info.Size(), ModificationTime: 1, DataChange: true}
		if i == 0 { // the old file, without x, loses its row 1 (id 2)
			b := encodeDVForTest([]uint64{1}, dvTestEncoding{})
			add.DeletionVector = &DeletionVectorDescriptor{StorageType: "i", PathOrInlineDv: encodeZ85ForTest(b), SizeInBytes: int32(len(b)), Cardinality: 1}
		}
		actions = append(actions, Action{Add: add})
	}
	biWriteCommit(t, store, 0, actions)
	snap, err := NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q, err := snap.ScanSQL(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := db.QueryRowContext(ctx, `SELECT string_agg(concat_ws('|', id, coalesce(x::VARCHAR, 'null')), '; ' ORDER BY id) FROM (`+q+`)`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := "1|null; 3|4"; got != want {
		t.Fatalf("rows = %q, want %q", got, want)
	}
}
