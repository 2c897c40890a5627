package delta

// Writing deletion vectors (DVs), following PROTOCOL.md "Deletion Vectors",
// "Deletion Vector Format" and "Deletion Vector File Storage Format": a set
// of row indexes serialized as a RoaringBitmapArray (magic number, then the
// 64-bit portable roaring format), stored inline in the log as Z85 text or
// in a deletion_vector_<uuid>.bin file holding one or more of them.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"strings"

	"github.com/google/uuid"
)

// EncodeDeletionVector serializes rows (sorted ascending, no duplicates)
// as a RoaringBitmapArray in the portable format. Each 16-bit container is
// written in the smallest of the three encodings: array, bitset or runs.
func EncodeDeletionVector(rows []uint64) ([]byte, error) {
	for i := 1; i < len(rows); i++ {
		if rows[i] <= rows[i-1] {
			return nil, fmt.Errorf("deletion vector rows not strictly ascending (%d after %d)", rows[i], rows[i-1])
		}
	}
	if n := len(rows); n > 0 && rows[n-1]>>32 > math.MaxInt32 {
		return nil, fmt.Errorf("row index %d too large for a deletion vector", rows[n-1])
	}
	out := binary.LittleEndian.AppendUint32(nil, dvMagicPortable)
	var buckets [][]uint64
	for i := 0; i < len(rows); {
		j := i
		for j < len(rows) && rows[j]>>32 == rows[i]>>32 {
			j++
		}
		buckets = append(buckets, rows[i:j])
		i = j
	}
	out = binary.LittleEndian.AppendUint64(out, uint64(len(buckets)))
	for _, b := range buckets {
		out = binary.LittleEndian.AppendUint32(out, uint32(b[0]>>32))
		out = appendRoaring32(out, b)
	}
	return out, nil
}

// roaringContainer is one 16-bit container ready to serialize.
type roaringContainer struct {
	key  uint16
	vals []uint16
	runs [][2]uint16 // start, length-1
}

// useRuns tells whether the container serializes as runs: when they are smaller than
// both other encodings, else array up to 4096 values, else bitset.
func (c *roaringContainer) useRuns() bool {
	runBytes := 2 + 4*len(c.runs)
	other := 2 * len(c.vals)
	if len(c.vals) > roaringArrayMaxCard {
		other = roaringBitsetBytes
	}
	return runBytes < other
}

func (c *roaringContainer) size() int {
	switch {
	case c.useRuns():
		return 2 + 4*len(c.runs)
	case len(c.vals) <= roaringArrayMaxCard:
		return 2 * len(c.vals)
	}
	return roaringBitsetBytes
}

// appendRoaring32 serializes the low 32 bits of rows (one bucket) as a
// 32-bit roaring bitmap per RoaringFormatSpec.
func appendRoaring32(out []byte, rows []uint64) []byte {
	var cs []*roaringContainer
	for _, r := range rows {
		lo := uint32(r)
		key, v := uint16(lo>>16), uint16(lo)
		if len(cs) == 0 || cs[len(cs)-1].key != key {
			cs = append(cs, &roaringContainer{key: key})
		}
		c := cs[len(cs)-1]
		c.vals = append(c.vals, v)
		if n := len(c.runs); n > 0 && uint32(c.runs[n-1][0])+uint32(c.runs[n-1][1])+1 == uint32(v) {
			c.runs[n-1][1]++
		} else {
			c.runs = append(c.runs, [2]uint16{v, 0})
		}
	}
	anyRuns := false
	for _, c := range cs {
		anyRuns = anyRuns || c.useRuns()
	}
	n := len(cs)
	start := len(out)
	if anyRuns {
		out = binary.LittleEndian.AppendUint32(out, uint32(roaringCookieRuns)|uint32(n-1)<<16)
		flags := make([]byte, (n+7)/8)
		for i, c := range cs {
			if c.useRuns() {
				flags[i/8] |= 1 << (i % 8)
			}
		}
		out = append(out, flags...)
	} else {
		out = binary.LittleEndian.AppendUint32(out, roaringCookieNoRuns)
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
	}
	for _, c := range cs {
		out = binary.LittleEndian.AppendUint16(out, c.key)
		out = binary.LittleEndian.AppendUint16(out, uint16(len(c.vals)-1))
	}
	if !anyRuns || n >= roaringNoOffsetThresh {
		// Offsets count from the start of this 32-bit bitmap.
		off := len(out) - start + 4*n
		for _, c := range cs {
			out = binary.LittleEndian.AppendUint32(out, uint32(off))
			off += c.size()
		}
	}
	for _, c := range cs {
		switch {
		case c.useRuns():
			out = binary.LittleEndian.AppendUint16(out, uint16(len(c.runs)))
			for _, r := range c.runs {
				out = binary.LittleEndian.AppendUint16(out, r[0])
				out = binary.LittleEndian.AppendUint16(out, r[1])
			}
		case len(c.vals) <= roaringArrayMaxCard:
			for _, v := range c.vals {
				out = binary.LittleEndian.AppendUint16(out, v)
			}
		default:
			var words [roaringBitsetBytes / 8]uint64
			for _, v := range c.vals {
				words[v/64] |= 1 << (v % 64)
			}
			for _, w := range words {
				out = binary.LittleEndian.AppendUint64(out, w)
			}
		}
	}
	return out
}

// InlineDeletionVector returns the descriptor of an inline ('i') DV holding
// rows: the bitmap as Z85 text, padded to a multiple of 4 bytes, with
// sizeInBytes the unpadded size and no offset.
func InlineDeletionVector(rows []uint64) (*DeletionVectorDescriptor, error) {
	b, err := EncodeDeletionVector(rows)
	if err != nil {
		return nil, err
	}
	if len(b) > math.MaxInt32 {
		return nil, fmt.Errorf("deletion vector of %d bytes is too large", len(b))
	}
	return &DeletionVectorDescriptor{StorageType: "i", PathOrInlineDv: encodeZ85(b),
		SizeInBytes: int32(len(b)), Cardinality: int64(len(rows))}, nil
}

// DeletionVectorFile builds one deletion_vector_<uuid>.bin file: the format
// version byte, then for each DV its big-endian size, its bitmap and the
// big-endian CRC-32 of the bitmap. Add returns the descriptor ('u', relative
// to the table root) of each DV added.
type DeletionVectorFile struct {
	id     uuid.UUID
	prefix string
	buf    bytes.Buffer
}

// NewDeletionVectorFile starts a DV file with a fresh random UUID. prefix is
// the optional directory under the table root (Delta's random file prefix,
// letters and digits); "" puts the file in the root.
func NewDeletionVectorFile(prefix string) (*DeletionVectorFile, error) {
	for _, seg := range strings.Split(prefix, "/") {
		if prefix != "" && (seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "\\\x00")) {
			return nil, fmt.Errorf("bad deletion vector prefix %q", prefix)
		}
	}
	w := &DeletionVectorFile{id: uuid.New(), prefix: prefix}
	w.buf.WriteByte(dvFileFormatVersion)
	return w, nil
}

// RandomDVPrefix returns n random letters and digits: the prefix Delta puts
// before DV files when delta.randomizeFilePrefixes is on.
func RandomDVPrefix(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// Add appends the DV of rows (sorted ascending, no duplicates).
func (w *DeletionVectorFile) Add(rows []uint64) (*DeletionVectorDescriptor, error) {
	b, err := EncodeDeletionVector(rows)
	if err != nil {
		return nil, err
	}
	off := w.buf.Len()
	if int64(off)+int64(len(b))+8 > math.MaxInt32 {
		return nil, fmt.Errorf("deletion vector file past 2 GiB")
	}
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	w.buf.Write(n[:])
	w.buf.Write(b)
	binary.BigEndian.PutUint32(n[:], crc32.ChecksumIEEE(b))
	w.buf.Write(n[:])
	o := int32(off)
	return &DeletionVectorDescriptor{StorageType: "u", PathOrInlineDv: w.prefix + encodeZ85(w.id[:]),
		Offset: &o, SizeInBytes: int32(len(b)), Cardinality: int64(len(rows))}, nil
}

// Key is the file's storage key relative to the table root.
func (w *DeletionVectorFile) Key() string {
	name := "deletion_vector_" + w.id.String() + ".bin"
	if w.prefix == "" {
		return name
	}
	return w.prefix + "/" + name
}

// Bytes is the file's content so far.
func (w *DeletionVectorFile) Bytes() []byte { return w.buf.Bytes() }

// WriteDeletionVectorFile stores w under its key in the table's storage.
func (t *Table) WriteDeletionVectorFile(ctx context.Context, w *DeletionVectorFile) error {
	if err := t.store.Put(ctx, w.Key(), w.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", w.Key(), err)
	}
	return nil
}

// DeletionVectorKey is the storage key (relative to the table root) of the
// file a 'u' DV is stored in; ok is false for other storage types.
func DeletionVectorKey(d *DeletionVectorDescriptor) (key string, ok bool, err error) {
	if d == nil || d.StorageType != "u" {
		return "", false, nil
	}
	key, err = deletionVectorKey(d.PathOrInlineDv)
	return key, err == nil, err
}

// UnionRows merges two sorted, duplicate-free row lists.
func UnionRows(a, b []uint64) []uint64 {
	out := make([]uint64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			out = append(out, a[i])
			i++
		case a[i] > b[j]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// encodeZ85 encodes b, zero-padded to a multiple of 4 bytes, as Z85 text.
func encodeZ85(b []byte) string {
	if r := len(b) % 4; r != 0 {
		b = append(append([]byte(nil), b...), make([]byte, 4-r)...)
	}
	out := make([]byte, 0, len(b)/4*5)
	for i := 0; i < len(b); i += 4 {
		v := binary.BigEndian.Uint32(b[i:])
		var g [5]byte
		for j := 4; j >= 0; j-- {
			g[j] = z85Alphabet[v%85]
			v /= 85
		}
		out = append(out, g[:]...)
	}
	return string(out)
}
