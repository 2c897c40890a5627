package iceberg

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	ice "github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table/dv"
)

// dvPositionsFile returns a local Parquet file of one BIGINT column, pos,
// holding the positions a deletion vector deletes, for DuckDB to anti-join
// on file_row_number. It lives in the cache under a name made of the DV's
// file, offset and length: Puffin files are never rewritten, so a copy
// made once stays right. The DV is read (and its CRC and cardinality
// checked) by iceberg-go.
func dvPositionsFile(fsys iceio.IO, cacheDir string, d ice.DataFile) (string, error) {
	if d.ContentOffset() == nil || d.ContentSizeInBytes() == nil {
		return "", fmt.Errorf("%w: deletion vector in %s has no content offset or size", ErrInvalid, d.FilePath())
	}
	sum := sha256.Sum256([]byte(d.FilePath() + "\x00" + strconv.FormatInt(*d.ContentOffset(), 10) + "\x00" + strconv.FormatInt(*d.ContentSizeInBytes(), 10)))
	dst := filepath.Join(cacheRoot(cacheDir), "dv", hex.EncodeToString(sum[:16])+".parquet")
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	bm, err := dv.ReadDV(fsys, d)
	if err != nil {
		return "", fmt.Errorf("read deletion vector in %s: %w", d.FilePath(), err)
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Reserve(int(bm.Cardinality()))
	for p := range bm.Positions() {
		b.Append(int64(p))
	}
	col := b.NewArray()
	defer col.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "pos", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{col}, int64(col.Len()))
	defer rec.Release()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("create the deletion-vector cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".dv-*")
	if err != nil {
		return "", fmt.Errorf("create the deletion-vector cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	w, err := pqarrow.NewFileWriter(sc, tmp, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err == nil {
		err = w.Write(rec)
		if cerr := w.Close(); err == nil {
			err = cerr // closes tmp too
		}
	} else {
		tmp.Close()
	}
	if err != nil {
		return "", fmt.Errorf("write the positions of deletion vector %s: %w", d.FilePath(), err)
	}
	// Two scans may race to fill the cache: both write the same bytes.
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", fmt.Errorf("write the positions of deletion vector %s: %w", d.FilePath(), err)
	}
	return dst, nil
}
