package iceberg

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/internal/fsync"
	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/internal/stagename"
	"github.com/lakesql/lakesql/tableformat/filecache"
)

// CopyOptions tune CopyQuery.
type CopyOptions struct {
	// TargetFileSize is the size DuckDB aims its files at (0: the table's
	// write.target-file-size-bytes).
	TargetFileSize int64
	// CacheDir is the local folder (remote.go) where files of a table not
	// on the local file system are staged before upload and kept after
	// ("": DefaultCacheDir).
	CacheDir string
	// Now is the clock whose time the staging folder's name records;
	// time.Now when nil.
	Now func() time.Time
}

// CopyQuery stages the rows of query as data files of tbl written by
// DuckDB's own Parquet writer (COPY ... TO, in parallel, with Iceberg
// field ids and zstd compression), then reads each file's footer with
// iceberg-go to build its DataFile (counts, sizes, bounds). It serves
// unpartitioned tables of primitive columns, where DuckDB writes several
// times faster than iceberg-go; anything else is ErrUnsupported, and the
// caller uses WriteQuery. A table on the local file system gets the files
// in its data folder directly; a table on object storage gets them staged
// in the cache, checked, then uploaded through the table's FileIO to the
// same place in its data folder (a failed upload removes what it put).
// DuckDB marks every Parquet column OPTIONAL, NOT NULL ones too; Iceberg
// readers go by the table schema (iceberg-go and DuckDB read such files;
// NOT NULL is checked here on the files' null counts). The query must
// yield the table's columns by name, in table order, with their DuckDB
// types (DuckDBSelect).
func CopyQuery(ctx context.Context, tbl *table.Table, conn *sql.Conn, query string, opts CopyOptions) ([]ice.DataFile, error) {
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
		ids = append(ids, fmt.Sprintf("%s: %d", sqlquote.Ident(f.Name), f.ID))
		if f.Required {
			required = append(required, f.Name)
		}
	}
	loc := strings.TrimRight(tbl.Location(), "/")
	// The folder's name carries the stage time (internal/stagename): Commit
	// refuses files staged too long ago, and vacuum spares younger ones.
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	name := "lakesql-" + stagename.New(now())
	base := loc + "/data/" + name + "/"
	var dir string
	root, err := localPath(loc)
	remote := err != nil
	if remote {
		dir = filepath.Join(cacheRoot(opts.CacheDir), "staging", name)
	} else {
		dir = filepath.Join(root, "data", name)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	targetFileSize := opts.TargetFileSize
	if targetFileSize <= 0 {
		targetFileSize = int64(tbl.Properties().GetInt(table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault))
	}
	codec, err := duckDBCodec(tbl.Properties().Get(table.ParquetCompressionKey, table.ParquetCompressionDefault))
	if err != nil {
		return nil, err
	}
	copySQL := fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet, COMPRESSION %s, FIELD_IDS {%s}, FILE_SIZE_BYTES %d, FILENAME_PATTERN 'part-{i}')",
		query, sqlquote.String(dir), codec, strings.Join(ids, ", "), targetFileSize)
	if _, err := conn.ExecContext(ctx, copySQL); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("write data files with DuckDB: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("list written data files: %w", err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	// The footers are read locally, under the URIs the files will have.
	staged := stagedIO{}
	for _, n := range names {
		staged[base+n] = filepath.Join(dir, n)
	}
	out := make([]ice.DataFile, 0, len(names))
	// DuckDB declares every Parquet column OPTIONAL; the footer is read
	// against the schema with every column optional (same ids), and NOT
	// NULL is checked on the null counts instead.
	loose := optionalSchema(schema)
	for _, n := range names {
		df, err := table.FileToDataFile(ctx, staged, base+n, loose, spec, 0, tbl.Properties())
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
	if remote {
		if err := uploadStaged(ctx, tbl, staged, opts.CacheDir); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		os.RemoveAll(dir)
	} else if err := syncWritten(dir, names); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return out, nil
}

// syncWritten syncs the files DuckDB wrote into dir, dir itself and its
// parent (the table's data folder, where dir is new): DuckDB's COPY does
// not, and a commit naming the files follows.
func syncWritten(dir string, names []string) error {
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = filepath.Join(dir, n)
	}
	if err := fsync.Files(paths, dir, filepath.Dir(dir)); err != nil {
		return fmt.Errorf("sync written data files: %w", err)
	}
	return nil
}

// uploadStaged uploads the staged files to their URIs and moves each into
// the read cache. When any upload fails, every one of them is removed
// again (best effort: what is left is unreferenced, like any file of a
// write that died).
func uploadStaged(ctx context.Context, tbl *table.Table, staged stagedIO, cacheDir string) error {
	// Not cancelled with ctx, so that a cancelled upload is still cleaned
	// up; the uploads themselves stop with ctx.
	fsys, err := tbl.FS(context.WithoutCancel(ctx))
	if err != nil {
		return fmt.Errorf("open the file IO of %s: %w", tbl.Location(), err)
	}
	uris := make([]string, 0, len(staged))
	for u := range staged {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	err = filecache.ForEach(ctx, uris, func(u string) error { return upload(ctx, fsys, staged[u], u) })
	if err != nil {
		for _, u := range uris {
			fsys.Remove(u)
		}
		return fmt.Errorf("upload data files: %w", err)
	}
	for _, u := range uris {
		dst := CachePath(cacheDir, u)
		info, err := os.Stat(staged[u])
		if err == nil && os.MkdirAll(filepath.Dir(dst), 0o755) == nil &&
			os.Rename(staged[u], dst) == nil { // a copy that failed to move is downloaded when read
			cacheLimit(cacheDir).Added(info.Size())
		}
	}
	return nil
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
