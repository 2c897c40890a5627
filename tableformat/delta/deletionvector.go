package delta

// Reading deletion vectors (DVs), following PROTOCOL.md "Deletion Vectors" and
// the appendix "Deletion Vector Format": a DV is a set of row indexes, stored
// as a 64-bit portable roaring bitmap, either inline in the log (Z85 text) or
// in a file next to the data.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

const (
	// dvMagicPortable prefixes the RoaringBitmapArray "portable" format, the
	// one the spec defines and Delta writers produce.
	dvMagicPortable = 1681511377
	// dvMagicNative prefixes Delta's older "native" RoaringBitmapArray format.
	// The reference readers still accept it, so we do too.
	dvMagicNative = 1681511376
	// dvFileFormatVersion is the first byte of every DV file.
	dvFileFormatVersion = 1
	// dvUUIDLen is the length of a Z85-encoded UUID at the end of a 'u' path.
	dvUUIDLen = 20

	// maxDeletionVectorRows bounds what we materialise as []uint64 (2 GiB).
	// The count comes from the log, so we cap it rather than trust it; a DV
	// larger than any realistic Parquet file is refused, not allocated.
	maxDeletionVectorRows = 1 << 28

	roaringCookieNoRuns     = 12346 // SERIAL_COOKIE_NO_RUNCONTAINER
	roaringCookieRuns       = 12347 // SERIAL_COOKIE
	roaringNoOffsetThresh   = 4     // run-format bitmaps with fewer containers omit offsets
	roaringArrayMaxCard     = 4096  // larger non-run containers are bitsets
	roaringBitsetBytes      = 8192  // 65536 bits
	roaringMaxContainers    = 1 << 16
	roaringMinBitmapBytes   = 8 // cookie + container count of an empty bitmap
	dvPortableMinBucketSize = 4 + roaringMinBitmapBytes
	dvNativeMinBitmapSize   = 4 + roaringMinBitmapBytes
)

// LoadDeletionVector returns the row indexes (0-based positions in the data
// file) that d marks as deleted, sorted ascending and without duplicates. A nil
// descriptor means no rows are deleted. store resolves 'u' (relative) DVs; 'p'
// DVs must be local files (plain absolute paths or file: URIs).
//
// Malformed DVs yield errors wrapping ErrCorruptLog; DV variants this reader
// does not implement (remote 'p' URIs, unknown storage types, newer file
// format versions) yield errors wrapping ErrUnsupportedFeature.
func LoadDeletionVector(ctx context.Context, store Storage, d *DeletionVectorDescriptor) ([]uint64, error) {
	if d == nil {
		return nil, nil
	}
	rows, err := loadDeletionVector(ctx, store, d)
	if err != nil {
		return nil, fmt.Errorf("deletion vector %s: %w", dvLabel(d), err)
	}
	return rows, nil
}

func loadDeletionVector(ctx context.Context, store Storage, d *DeletionVectorDescriptor) ([]uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d.Cardinality < 0 {
		return nil, corrupt("negative cardinality %d", d.Cardinality)
	}
	if d.Cardinality > maxDeletionVectorRows {
		return nil, unsupported("deletion vector with %d rows (limit %d)", d.Cardinality, maxDeletionVectorRows)
	}
	if d.SizeInBytes < 0 {
		return nil, corrupt("negative sizeInBytes %d", d.SizeInBytes)
	}

	var bitmap []byte
	switch d.StorageType {
	case "i":
		// An inline DV has no offset (spec: always absent); we ignore a stray
		// one since it cannot change which bytes we decode.
		b, err := inlineDVBytes(d.PathOrInlineDv, int(d.SizeInBytes))
		if err != nil {
			return nil, err
		}
		bitmap = b
	case "u":
		key, err := deletionVectorKey(d.PathOrInlineDv)
		if err != nil {
			return nil, err
		}
		if store == nil {
			return nil, fmt.Errorf("relative deletion vector %s needs table storage", key)
		}
		data, err := store.Get(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", key, err)
		}
		b, err := dvFromFile(bytes.NewReader(data), int64(len(data)), d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		bitmap = b
	case "p":
		path, err := deletionVectorLocalPath(d.PathOrInlineDv)
		if err != nil {
			return nil, err
		}
		b, err := readLocalDVFile(path, d)
		if err != nil {
			return nil, err
		}
		bitmap = b
	case "":
		return nil, corrupt("missing storageType")
	default:
		return nil, unsupported("deletion vector storageType %q", d.StorageType)
	}

	rows, err := decodeDeletionVectorBitmap(bitmap, d.Cardinality)
	if err != nil {
		return nil, err
	}
	if int64(len(rows)) != d.Cardinality {
		return nil, corrupt("holds %d rows, descriptor says cardinality %d", len(rows), d.Cardinality)
	}
	if d.MaxRowIndex != nil && len(rows) > 0 && (*d.MaxRowIndex < 0 || rows[len(rows)-1] > uint64(*d.MaxRowIndex)) {
		return nil, corrupt("row %d beyond maxRowIndex %d", rows[len(rows)-1], *d.MaxRowIndex)
	}
	return rows, nil
}

// dvLabel names a DV in errors; inline DVs can be long, so it is shortened.
func dvLabel(d *DeletionVectorDescriptor) string {
	id := d.UniqueID()
	if len(id) > 48 {
		id = id[:45] + "..."
	}
	return id
}

// inlineDVBytes decodes an inline DV. Z85 works on 4-byte groups, so writers
// pad the bitmap with up to 3 bytes; sizeInBytes tells how many are real.
func inlineDVBytes(s string, size int) ([]byte, error) {
	raw, err := decodeZ85(s)
	if err != nil {
		return nil, err
	}
	if size > len(raw) || len(raw)-size > 3 {
		return nil, corrupt("inline deletion vector decodes to %d bytes, sizeInBytes is %d", len(raw), size)
	}
	return raw[:size], nil
}

// deletionVectorKey derives the storage key (relative to the table root) of a
// 'u' DV: "<random prefix>/deletion_vector_<uuid>.bin", where the last 20
// characters of pathOrInlineDv are the Z85-encoded UUID and anything before
// them is the optional prefix directory.
func deletionVectorKey(s string) (string, error) {
	if len(s) < dvUUIDLen {
		return "", corrupt("relative deletion vector path %q is shorter than a %d-character UUID", s, dvUUIDLen)
	}
	prefix, enc := s[:len(s)-dvUUIDLen], s[len(s)-dvUUIDLen:]
	u, err := decodeZ85(enc)
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("deletion_vector_%x-%x-%x-%x-%x.bin", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
	if prefix == "" {
		return name, nil
	}
	// The prefix comes from the log; it must not lead out of the table root.
	for _, seg := range strings.Split(prefix, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "\\\x00") {
			return "", corrupt("bad deletion vector path prefix %q", prefix)
		}
	}
	return prefix + "/" + name, nil
}

// deletionVectorLocalPath turns a 'p' DV location into a local file path. The
// value has the format of an add action's path, a URI, so it is unescaped.
// Only local files are supported; other schemes need an object store client.
func deletionVectorLocalPath(p string) (string, error) {
	u, err := url.Parse(p)
	if err != nil {
		return "", corrupt("bad deletion vector path %q: %v", p, err)
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", corrupt("deletion vector path %q has a query or fragment", p)
	}
	switch strings.ToLower(u.Scheme) {
	case "":
		if !strings.HasPrefix(u.Path, "/") {
			return "", corrupt("deletion vector path %q is not absolute", p)
		}
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return "", unsupported("deletion vector on remote host %q", u.Host)
		}
		if u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
			return "", corrupt("deletion vector path %q is not absolute", p)
		}
	default:
		return "", unsupported("deletion vector at %s: URI", u.Scheme)
	}
	return filepath.FromSlash(u.Path), nil
}

// readLocalDVFile reads one DV out of a local file without loading the whole
// file: a DV file may hold the DVs of many data files.
func readLocalDVFile(path string, d *DeletionVectorDescriptor) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open deletion vector: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat deletion vector: %w", err)
	}
	b, err := dvFromFile(f, st.Size(), d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// dvFromFile extracts and checks one serialized bitmap from a DV file: the
// format version byte at 0, then at the DV's offset a big-endian dataSize, the
// bitmap, and a big-endian CRC-32 (IEEE) of the bitmap. Every size is checked
// against the file's size before anything is allocated.
func dvFromFile(r io.ReaderAt, size int64, d *DeletionVectorDescriptor) ([]byte, error) {
	if size < 1 {
		return nil, corrupt("empty deletion vector file")
	}
	var head [4]byte
	if _, err := r.ReadAt(head[:1], 0); err != nil {
		return nil, fmt.Errorf("read deletion vector: %w", err)
	}
	if head[0] != dvFileFormatVersion {
		return nil, unsupported("deletion vector file format version %d", head[0])
	}
	// The spec says to read an absent offset as 0, but the data of the first
	// DV starts after the version byte; writers always record 1 for it, and
	// the reference readers treat an absent offset as "right after the
	// version byte".
	off := int64(1)
	if d.Offset != nil {
		off = int64(*d.Offset)
	}
	if off < 1 || off > size-4 {
		return nil, corrupt("offset %d outside a %d-byte deletion vector file", off, size)
	}
	if _, err := r.ReadAt(head[:], off); err != nil {
		return nil, fmt.Errorf("read deletion vector: %w", err)
	}
	dataSize := int64(binary.BigEndian.Uint32(head[:]))
	if dataSize != int64(d.SizeInBytes) {
		return nil, corrupt("file says %d bytes at offset %d, descriptor says sizeInBytes %d", dataSize, off, d.SizeInBytes)
	}
	if dataSize+4 > size-off-4 {
		return nil, corrupt("%d-byte deletion vector at offset %d runs past the %d-byte file", dataSize, off, size)
	}
	buf := make([]byte, dataSize+4)
	if _, err := r.ReadAt(buf, off+4); err != nil {
		return nil, fmt.Errorf("read deletion vector: %w", err)
	}
	bitmap := buf[:dataSize]
	want := binary.BigEndian.Uint32(buf[dataSize:])
	if got := crc32.ChecksumIEEE(bitmap); got != want {
		return nil, corrupt("checksum mismatch at offset %d: computed %08x, stored %08x", off, got, want)
	}
	return bitmap, nil
}

// decodeDeletionVectorBitmap decodes a serialized RoaringBitmapArray: a
// little-endian magic number, then a 64-bit roaring bitmap. It returns at most
// limit values; more is an error, so a few bytes of run containers cannot
// make us allocate billions of rows. The format is validated strictly (keys
// and values strictly ascending, no trailing bytes), which is also what makes
// the result sorted and duplicate-free without a sort.
func decodeDeletionVectorBitmap(b []byte, limit int64) ([]uint64, error) {
	if len(b) < 4 {
		return nil, corrupt("deletion vector bitmap truncated: %d bytes", len(b))
	}
	dec := dvDecoder{buf: b, pos: 4, limit: limit}
	var err error
	switch magic := binary.LittleEndian.Uint32(b); magic {
	case dvMagicPortable:
		err = dec.portable()
	case dvMagicNative:
		err = dec.native()
	default:
		err = corrupt("deletion vector bitmap has magic number %d, want %d", magic, dvMagicPortable)
	}
	if err != nil {
		return nil, err
	}
	if dec.pos != len(b) {
		return nil, corrupt("deletion vector bitmap has %d trailing bytes", len(b)-dec.pos)
	}
	return dec.out, nil
}

// dvDecoder walks a serialized bitmap. Counts read from the data are never used
// to size an allocation: byte ranges are sub-slices of buf, checked first, and
// out only grows by values actually present, up to limit.
type dvDecoder struct {
	buf   []byte
	pos   int
	limit int64
	out   []uint64
}

func (d *dvDecoder) remaining() int { return len(d.buf) - d.pos }

func (d *dvDecoder) take(n int, what string) ([]byte, error) {
	if n < 0 || n > d.remaining() {
		return nil, corrupt("deletion vector bitmap truncated: %s needs %d bytes at offset %d, %d left", what, n, d.pos, d.remaining())
	}
	b := d.buf[d.pos : d.pos+n]
	d.pos += n
	return b, nil
}

func (d *dvDecoder) u16(what string) (uint16, error) {
	b, err := d.take(2, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(b), nil
}

func (d *dvDecoder) u32(what string) (uint32, error) {
	b, err := d.take(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

// portable decodes the RoaringFormatSpec 64-bit portable format: a uint64
// bucket count, then per bucket a uint32 key (the high 32 bits) and a 32-bit
// roaring bitmap.
func (d *dvDecoder) portable() error {
	b, err := d.take(8, "bucket count")
	if err != nil {
		return err
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(d.remaining()/dvPortableMinBucketSize) {
		return corrupt("deletion vector claims %d buckets in %d bytes", n, d.remaining())
	}
	prev := int64(-1)
	for i := uint64(0); i < n; i++ {
		key, err := d.u32("bucket key")
		if err != nil {
			return err
		}
		// Delta requires the top bit clear (Java reads keys signed), and keys
		// must ascend for the rows to come out sorted.
		if key > math.MaxInt32 {
			return corrupt("deletion vector bucket key %d has its top bit set", key)
		}
		if int64(key) <= prev {
			return corrupt("deletion vector bucket keys not ascending (%d after %d)", key, prev)
		}
		prev = int64(key)
		if err := d.roaring32(uint64(key) << 32); err != nil {
			return err
		}
	}
	return nil
}

// native decodes Delta's older format: an int32 bitmap count, then per bitmap
// an int32 byte size and a 32-bit roaring bitmap whose high 32 bits are its
// position in the array.
func (d *dvDecoder) native() error {
	n, err := d.u32("bitmap count")
	if err != nil {
		return err
	}
	if n > math.MaxInt32 || int(n) > d.remaining()/dvNativeMinBitmapSize {
		return corrupt("deletion vector claims %d bitmaps in %d bytes", n, d.remaining())
	}
	for i := uint32(0); i < n; i++ {
		size, err := d.u32("bitmap size")
		if err != nil {
			return err
		}
		start := d.pos
		if err := d.roaring32(uint64(i) << 32); err != nil {
			return err
		}
		if uint64(d.pos-start) != uint64(size) {
			return corrupt("deletion vector bitmap %d is %d bytes, header says %d", i, d.pos-start, size)
		}
	}
	return nil
}

// roaring32 decodes one 32-bit portable roaring bitmap (RoaringFormatSpec) and
// appends its values, each or-ed with high.
func (d *dvDecoder) roaring32(high uint64) error {
	cookie, err := d.u32("roaring cookie")
	if err != nil {
		return err
	}
	var n int
	var runFlags []byte
	switch {
	case cookie&0xFFFF == roaringCookieRuns:
		n = int(cookie>>16) + 1
		if runFlags, err = d.take((n+7)/8, "run container flags"); err != nil {
			return err
		}
	case cookie == roaringCookieNoRuns:
		c, err := d.u32("container count")
		if err != nil {
			return err
		}
		if c > roaringMaxContainers {
			return corrupt("roaring bitmap claims %d containers", c)
		}
		n = int(c)
	default:
		return corrupt("bad roaring bitmap cookie %#x", cookie)
	}
	desc, err := d.take(4*n, "container headers")
	if err != nil {
		return err
	}
	if runFlags == nil || n >= roaringNoOffsetThresh {
		// The offset header is for random access; the containers follow
		// back to back, so we read them in order as the reference readers do.
		if _, err := d.take(4*n, "container offsets"); err != nil {
			return err
		}
	}
	prevKey := -1
	for i := 0; i < n; i++ {
		key := int(binary.LittleEndian.Uint16(desc[4*i:]))
		card := int(binary.LittleEndian.Uint16(desc[4*i+2:])) + 1
		if key <= prevKey {
			return corrupt("roaring container keys not ascending (%d after %d)", key, prevKey)
		}
		prevKey = key
		base := high | uint64(key)<<16
		switch {
		case runFlags != nil && runFlags[i/8]&(1<<(i%8)) != 0:
			err = d.runContainer(base, card)
		case card <= roaringArrayMaxCard:
			err = d.arrayContainer(base, card)
		default:
			err = d.bitsetContainer(base, card)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// reserve checks that card more values stay within the limit.
func (d *dvDecoder) reserve(card int) error {
	if int64(len(d.out))+int64(card) > d.limit {
		return corrupt("deletion vector holds more than the %d rows declared", d.limit)
	}
	return nil
}

func (d *dvDecoder) arrayContainer(base uint64, card int) error {
	if err := d.reserve(card); err != nil {
		return err
	}
	data, err := d.take(2*card, "array container")
	if err != nil {
		return err
	}
	prev := -1
	for i := 0; i < card; i++ {
		v := int(binary.LittleEndian.Uint16(data[2*i:]))
		if v <= prev {
			return corrupt("roaring array container not strictly ascending (%d after %d)", v, prev)
		}
		prev = v
		d.out = append(d.out, base|uint64(v))
	}
	return nil
}

func (d *dvDecoder) bitsetContainer(base uint64, card int) error {
	data, err := d.take(roaringBitsetBytes, "bitset container")
	if err != nil {
		return err
	}
	count := 0
	for i := 0; i < len(data); i += 8 {
		count += bits.OnesCount64(binary.LittleEndian.Uint64(data[i:]))
	}
	if count != card {
		return corrupt("roaring bitset container has %d bits set, header says %d", count, card)
	}
	if err := d.reserve(card); err != nil {
		return err
	}
	for i := 0; i < len(data); i += 8 {
		w := binary.LittleEndian.Uint64(data[i:])
		for w != 0 {
			d.out = append(d.out, base|uint64(i*8+bits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
	return nil
}

func (d *dvDecoder) runContainer(base uint64, card int) error {
	nruns, err := d.u16("run count")
	if err != nil {
		return err
	}
	data, err := d.take(4*int(nruns), "run container")
	if err != nil {
		return err
	}
	// Validate all runs and their total before expanding any of them.
	total, prevEnd := 0, -1
	for i := 0; i < int(nruns); i++ {
		start := int(binary.LittleEndian.Uint16(data[4*i:]))
		end := start + int(binary.LittleEndian.Uint16(data[4*i+2:]))
		if end > math.MaxUint16 {
			return corrupt("roaring run %d+%d overflows its container", start, end-start)
		}
		if start <= prevEnd {
			return corrupt("roaring runs overlap or are not ascending (%d after %d)", start, prevEnd)
		}
		prevEnd = end
		total += end - start + 1
	}
	if total != card {
		return corrupt("roaring run container covers %d values, header says %d", total, card)
	}
	if err := d.reserve(card); err != nil {
		return err
	}
	for i := 0; i < int(nruns); i++ {
		start := uint64(binary.LittleEndian.Uint16(data[4*i:]))
		end := start + uint64(binary.LittleEndian.Uint16(data[4*i+2:]))
		for v := start; v <= end; v++ {
			d.out = append(d.out, base|v)
		}
	}
	return nil
}

// z85Alphabet is the ZeroMQ Base85 (Z85, rfc.zeromq.org/spec/32) alphabet the
// Delta log uses for binary values because it needs no JSON escaping.
const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// z85Digits maps a byte to its Z85 digit value, or 0xFF if it is not a digit.
var z85Digits = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for i := 0; i < len(z85Alphabet); i++ {
		t[z85Alphabet[i]] = byte(i)
	}
	return t
}()

// decodeZ85 decodes Z85 text: every 5 characters are a big-endian base-85
// number giving 4 bytes. Bad lengths, characters and overflowing groups are
// corrupt input.
func decodeZ85(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, corrupt("Z85 text has length %d, not a multiple of 5", len(s))
	}
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := i; j < i+5; j++ {
			c := z85Digits[s[j]]
			if c == 0xFF {
				return nil, corrupt("invalid Z85 character %q at %d", s[j], j)
			}
			v = v*85 + uint64(c)
		}
		if v > math.MaxUint32 {
			return nil, corrupt("Z85 group %q at %d overflows 32 bits", s[i:i+5], i)
		}
		out = binary.BigEndian.AppendUint32(out, uint32(v))
	}
	return out, nil
}
