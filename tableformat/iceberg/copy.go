package iceberg

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// CopyQuery stages the rows of query as data files of tbl written by
// DuckDB's own Parquet writer (COPY ... TO, in parallel, with Iceberg
// field ids and zstd compression), then reads each file's footer with
// iceberg-go to build its DataFile (counts, sizes, bounds). It serves
// unpartitioned tables of primitive columns on the local file system,
// where DuckDB writes several times faster than iceberg-go; anything else
// is ErrUnsupported, and the caller uses WriteQuery. DuckDB marks every
// Parquet column OPTIONAL, NOT NULL ones too; Iceberg readers go by the
// table schema (iceberg-go and DuckDB read such files; NOT NULL is
// checked here on the files' null counts). The query must yield
// the table's columns by name, in table order, with their DuckDB types
// (DuckDBSelect).
func CopyQuery(ctx context.Context, tbl *table.Table, conn *sql.Conn, query string, targetFileSize int64) ([]ice.DataFile, error) {
	schema := tbl.Schema()
	spec := tbl.Spec()
	if !spec.IsUnpartitioned() {
		return nil, fmt.Errorf("%w: DuckDB does not compute Iceberg partition values", ErrUnsupported)
	}
	ids := make([]string, 0, schema.NumFields())
	var required []string
	for _, f := range schema.Fields() {
		switch f.Type.(type) {
		case *ice.StructType, *ice.ListType, *ice.MapType:
			return nil, fmt.Errorf("%w: nested column %q", ErrUnsupported, f.Name)
		case ice.UUIDType, ice.FixedType, ice.TimestampNsType, ice.TimestampTzNsType:
			return nil, fmt.Errorf("%w: column %q of type %s", ErrUnsupported, f.Name, f.Type)
		}
		ids = append(ids, fmt.Sprintf("%s: %d", quoteIdent(f.Name), f.ID))
		if f.Required {
			required = append(required, f.Name)
		}
	}
	root, err := localPath(strings.TrimRight(tbl.Location(), "/"))
	if err != nil {
		return nil, err
	}
	name := "lakesql-" + uuid.NewString()
	dir := filepath.Join(root, "data", name)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	if targetFileSize <= 0 {
		targetFileSize = int64(tbl.Properties().GetInt(table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault))
	}
	codec, err := duckDBCodec(tbl.Properties().Get(table.ParquetCompressionKey, table.ParquetCompressionDefault))
	if err != nil {
		return nil, err
	}
	copySQL := fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet, COMPRESSION %s, FIELD_IDS {%s}, FILE_SIZE_BYTES %d, FILENAME_PATTERN 'part-{i}')",
		query, quoteString(dir), codec, strings.Join(ids, ", "), targetFileSize)
	if _, err := conn.ExecContext(ctx, copySQL); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("write data files with DuckDB: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list written data files: %w", err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	out := make([]ice.DataFile, 0, len(names))
	base := strings.TrimRight(tbl.Location(), "/") + "/data/" + name + "/"
	// DuckDB declares every Parquet column OPTIONAL; the footer is read
	// against the schema with every column optional (same ids), and NOT
	// NULL is checked on the null counts instead.
	loose := optionalSchema(schema)
	for _, n := range names {
		df, err := table.FileToDataFile(ctx, fsys, base+n, loose, spec, 0, tbl.Properties())
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("read written data file %s: %w", n, err)
		}
		for _, c := range required {
			f, _ := schema.FindFieldByName(c)
			if nulls := df.NullValueCounts()[f.ID]; nulls > 0 {
				os.RemoveAll(dir)
				return nil, fmt.Errorf("%w: %d NULL value(s) in NOT NULL column %q", ErrInvalid, nulls, c)
			}
		}
		out = append(out, df)
	}
	return out, nil
}

// optionalSchema is schema with every top-level column optional.
func optionalSchema(schema *ice.Schema) *ice.Schema {
	fields := schema.Fields()
	for i := range fields {
		fields[i].Required = false
	}
	return ice.NewSchema(schema.ID, fields...)
}

// duckDBCodec spells the table's write.parquet.compression-codec for
// DuckDB's COPY; a codec DuckDB lacks leaves the write to iceberg-go.
func duckDBCodec(codec string) (string, error) {
	switch c := strings.ToLower(codec); c {
	case "zstd", "snappy", "gzip", "brotli", "uncompressed":
		return c, nil
	case "lz4_raw":
		return "lz4_raw", nil
	}
	return "", fmt.Errorf("%w: Parquet codec %q for DuckDB", ErrUnsupported, codec)
}
