package iceberg

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"slices"
	"strings"
	"testing"
)

// This file reads what WriteDeletionVectors wrote with a reader of its
// own, written from the Puffin spec and the "Deletion Vectors" section of
// the Iceberg spec, and shares no code with the writer (iceberg-go's).

// puffinBlob is a blob's entry in a Puffin footer.
type puffinBlob struct {
	Type       string            `json:"type"`
	Fields     []int             `json:"fields"`
	SnapshotID int64             `json:"snapshot-id"`
	SeqNum     int64             `json:"sequence-number"`
	Offset     int64             `json:"offset"`
	Length     int64             `json:"length"`
	Codec      string            `json:"compression-codec"`
	Properties map[string]string `json:"properties"`
}

// readPuffinFooter checks a Puffin file's framing (magic first and last,
// footer payload size, flags) and returns its blobs.
func readPuffinFooter(t *testing.T, b []byte) []puffinBlob {
	t.Helper()
	magic := []byte{0x50, 0x46, 0x41, 0x31} // "PFA1"
	if len(b) < 12+4 || !slices.Equal(b[:4], magic) || !slices.Equal(b[len(b)-4:], magic) {
		t.Fatalf("not a Puffin file: %d bytes", len(b))
	}
	flags := binary.LittleEndian.Uint32(b[len(b)-8:])
	if flags&1 != 0 {
		t.Fatal("footer payload is compressed; lakesql writes it plain")
	}
	size := int(binary.LittleEndian.Uint32(b[len(b)-12:]))
	start := len(b) - 12 - size - 4
	if start < 4 || !slices.Equal(b[start:start+4], magic) {
		t.Fatalf("footer start magic missing (payload %d bytes)", size)
	}
	var footer struct {
		Blobs []puffinBlob `json:"blobs"`
	}
	if err := json.Unmarshal(b[start+4:start+4+size], &footer); err != nil {
		t.Fatalf("footer payload: %v", err)
	}
	return footer.Blobs
}

// readDVBlob decodes a deletion-vector-v1 blob: a 4-byte big-endian length
// of what follows up to the CRC, the magic D1 D3 39 64, the 64-bit Roaring
// bitmap (portable format), and a big-endian CRC-32 of magic and bitmap.
func readDVBlob(blob []byte) ([]uint64, error) {
	if len(blob) < 12 {
		return nil, fmt.Errorf("blob of %d bytes", len(blob))
	}
	n := int(binary.BigEndian.Uint32(blob))
	if n+8 != len(blob) {
		return nil, fmt.Errorf("length field %d, blob %d bytes (want length+8)", n, len(blob))
	}
	body := blob[4 : 4+n]
	if !slices.Equal(body[:4], []byte{0xD1, 0xD3, 0x39, 0x64}) {
		return nil, fmt.Errorf("magic %x", body[:4])
	}
	if got, want := crc32.ChecksumIEEE(body), binary.BigEndian.Uint32(blob[4+n:]); got != want {
		return nil, fmt.Errorf("CRC %08x, blob says %08x", got, want)
	}
	return readRoaring64(body[4:])
}

// readRoaring64 reads the portable 64-bit Roaring format: a little-endian
// uint64 count of 32-bit bitmaps, each a uint32 key (the high 32 bits)
// followed by a 32-bit Roaring bitmap in the portable format.
func readRoaring64(b []byte) ([]uint64, error) {
	r := &byteReader{b: b}
	count := r.u64()
	var out []uint64
	prev := int64(-1)
	for i := uint64(0); i < count && r.err == nil; i++ {
		key := r.u32()
		if int64(key) <= prev {
			return nil, fmt.Errorf("keys out of order: %d after %d", key, prev)
		}
		prev = int64(key)
		lows, err := readRoaring32(r)
		if err != nil {
			return nil, err
		}
		for _, lo := range lows {
			out = append(out, uint64(key)<<32|uint64(lo))
		}
	}
	if r.err == nil && r.off != len(b) {
		return nil, fmt.Errorf("%d bytes after the bitmap", len(b)-r.off)
	}
	return out, r.err
}

// readRoaring32 reads one 32-bit Roaring bitmap in the portable format
// (RoaringFormatSpec): a cookie (12346 then a container count, or 12347
// with the count-1 in the high 16 bits and a run bitset), the descriptive
// header (key, cardinality-1 per container), offsets when present, then
// the containers: runs, arrays (cardinality up to 4096) or 8 KiB bitmaps.
func readRoaring32(r *byteReader) ([]uint32, error) {
	cookie := r.u32()
	var n int
	var runs []byte
	withOffsets := true
	switch {
	case cookie&0xFFFF == 12347:
		n = int(cookie>>16) + 1
		runs = r.bytes((n + 7) / 8)
		withOffsets = n >= 4
	case cookie == 12346:
		n = int(r.u32())
	default:
		return nil, fmt.Errorf("roaring cookie %d", cookie)
	}
	keys, cards := make([]uint16, n), make([]int, n)
	for i := range n {
		keys[i], cards[i] = r.u16(), int(r.u16())+1
	}
	if withOffsets {
		r.bytes(4 * n)
	}
	var out []uint32
	for i := range n {
		hi := uint32(keys[i]) << 16
		switch {
		case runs != nil && runs[i/8]&(1<<(i%8)) != 0:
			for range int(r.u16()) {
				start, length := r.u16(), r.u16()
				for v := uint32(start); v <= uint32(start)+uint32(length); v++ {
					out = append(out, hi|v)
				}
			}
		case cards[i] <= 4096:
			for range cards[i] {
				out = append(out, hi|uint32(r.u16()))
			}
		default:
			words := r.bytes(8192)
			for w := 0; w < 1024 && r.err == nil; w++ {
				x := binary.LittleEndian.Uint64(words[8*w:])
				for bit := range 64 {
					if x&(1<<bit) != 0 {
						out = append(out, hi|uint32(w*64+bit))
					}
				}
			}
		}
	}
	return out, r.err
}

type byteReader struct {
	b   []byte
	off int
	err error
}

func (r *byteReader) bytes(n int) []byte {
	if r.err != nil || r.off+n > len(r.b) {
		if r.err == nil {
			r.err = fmt.Errorf("bitmap ends at %d, wanted %d more bytes", len(r.b), r.off+n-len(r.b))
		}
		return make([]byte, n)
	}
	out := r.b[r.off : r.off+n]
	r.off += n
	return out
}
func (r *byteReader) u16() uint16 { return binary.LittleEndian.Uint16(r.bytes(2)) }
func (r *byteReader) u32() uint32 { return binary.LittleEndian.Uint32(r.bytes(4)) }
func (r *byteReader) u64() uint64 { return binary.LittleEndian.Uint64(r.bytes(8)) }

// TestDeletionVectorBlobFormat deletes a run, a dense block (a bitmap
// container) and scattered rows of a 70000-row file, plus rows of a second
// file, and reads the Puffin file back with the reader above: framing,
// footer entries, manifest entry fields and positions must all agree.
func TestDeletionVectorBlobFormat(t *testing.T) {
	cat := openTestCatalog(t, t.TempDir())
	tbl := createV3(t, cat, "fmt")
	conn := duckConn(t)
	var js strings.Builder
	js.WriteString("[")
	for i := range 70000 {
		if i > 0 {
			js.WriteString(",")
		}
		fmt.Fprintf(&js, `{"id":%d}`, i)
	}
	js.WriteString("]")
	tbl = appendJSON(t, tbl, dvSchema, js.String(), nil)
	tbl = appendJSON(t, tbl, dvSchema, `[{"id":100000},{"id":100001},{"id":100002}]`, nil)

	want := map[int64]bool{}
	for i := int64(100); i < 3100; i++ { // a run
		want[i] = true
	}
	for i := int64(10000); i < 16000; i++ { // dense but not a run: a bitmap container
		if i%3 != 0 {
			want[i] = true
		}
	}
	for _, i := range []int64{0, 7, 65535, 65536, 69999} { // across two 16-bit containers
		want[i] = true
	}
	var ids []string
	for i := range want {
		ids = append(ids, fmt.Sprint(i))
	}
	got, err := WriteDeletionVectors(t.Context(), tbl, conn,
		"SELECT unnest(["+strings.Join(ids, ",")+", 100001]::BIGINT[]) AS id", []string{"id"}, DVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != 2 {
		t.Fatalf("%d DVs, want 2", len(got.Files))
	}
	path, err := LocalPath(got.Files[0].FilePath())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blobs := readPuffinFooter(t, raw)
	if len(blobs) != 2 {
		t.Fatalf("%d blobs, want one per data file", len(blobs))
	}
	byRef := map[string]puffinBlob{}
	for _, b := range blobs {
		if b.Type != "deletion-vector-v1" || b.Codec != "" || b.SnapshotID != -1 || b.SeqNum != -1 {
			t.Fatalf("blob %+v: want an uncompressed deletion-vector-v1 with snapshot id and sequence number -1", b)
		}
		byRef[b.Properties["referenced-data-file"]] = b
	}
	for _, f := range got.Files {
		ref := *f.ReferencedDataFile()
		b, ok := byRef[ref]
		if !ok {
			t.Fatalf("no blob names %s", ref)
		}
		if *f.ContentOffset() != b.Offset || *f.ContentSizeInBytes() != b.Length || f.FileSizeBytes() != int64(len(raw)) {
			t.Fatalf("entry offset %d size %d file %d, blob offset %d length %d, file %d",
				*f.ContentOffset(), *f.ContentSizeInBytes(), f.FileSizeBytes(), b.Offset, b.Length, len(raw))
		}
		positions, err := readDVBlob(raw[b.Offset : b.Offset+b.Length])
		if err != nil {
			t.Fatalf("blob of %s: %v", ref, err)
		}
		if fmt.Sprint(len(positions)) != b.Properties["cardinality"] || int64(len(positions)) != f.Count() {
			t.Fatalf("%d positions, cardinality property %q, record count %d", len(positions), b.Properties["cardinality"], f.Count())
		}
		var wantPos []uint64
		if len(positions) == 1 { // the small file: id 100001 is its row 1
			wantPos = []uint64{1}
		} else {
			for i := range want {
				wantPos = append(wantPos, uint64(i))
			}
			slices.Sort(wantPos)
		}
		if !slices.Equal(positions, wantPos) {
			t.Fatalf("blob of %s holds %d positions, want %d", ref, len(positions), len(wantPos))
		}
	}
}
