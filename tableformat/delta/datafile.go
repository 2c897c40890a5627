package delta

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lakesql/lakesql/internal/fsync"
	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/internal/stagename"
	"github.com/lakesql/lakesql/tableformat/filecache"
)

// DefaultTargetFileSize is the data file size WriteFiles aims at.
const DefaultTargetFileSize = 128 << 20

// WriteOptions tune WriteFiles.
type WriteOptions struct {
	// TargetFileSize splits the output of an unpartitioned table into files
	// of about this many bytes. A partitioned write makes one file per
	// partition value.
	TargetFileSize int64
	// Now is the stage time, which every file's name carries
	// (internal/stagename) so VACUUM can tell a stage in flight from a
	// crash's leftover; time.Now when nil.
	Now func() time.Time
}

// WriteFiles runs query on DuckDB and writes its rows as Parquet data files
// of this table, one add action per file with the protocol's statistics.
// The query must yield the table's columns by name. Nothing is committed:
// the caller commits the adds, or removes the files with DeleteFiles.
// Partition values and folders follow PROTOCOL.md: null values go to
// __HIVE_DEFAULT_PARTITION__, special characters are escaped in the folder
// name, and the add path is that name URI-encoded once more.
func (s *Snapshot) WriteFiles(ctx context.Context, q Querier, query string, opts WriteOptions) ([]*Add, error) {
	schema, err := s.Schema()
	if err != nil {
		return nil, err
	}
	// Files for a table Commit would refuse are wasted work: refuse now.
	if err := checkWritableConf(s.Protocol, schema, s.Metadata.Configuration); err != nil {
		return nil, fmt.Errorf("write data files: %w", err)
	}
	layout, err := s.fileLayout(schema)
	if err != nil {
		return nil, err
	}
	target := opts.TargetFileSize
	if target <= 0 {
		target = DefaultTargetFileSize
	}
	parts := map[string]bool{}
	for _, c := range layout.partitionColumns {
		parts[c] = true
	}
	cols := make([]string, 0, len(schema.Fields))
	for i, f := range schema.Fields {
		pf := layout.schema.Fields[i] // the file's name and type for it
		typ, err := DuckDBType(pf.Type)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		src := sqlquote.Ident(f.Name)
		if layout.mapped {
			src = physicalExpr(f.Type, src, 0)
		}
		if parts[pf.Name] {
			// Partition values travel as the strings DuckDB prints; they are
			// put into the protocol's forms below. An empty string is null
			// to the protocol, so it goes to null's folder, as with Spark.
			cols = append(cols, fmt.Sprintf("NULLIF(CAST(CAST(%s AS %s) AS VARCHAR), '') AS %s", src, typ, sqlquote.Ident(pf.Name)))
		} else {
			cols = append(cols, fmt.Sprintf("CAST(%s AS %s) AS %s", src, typ, sqlquote.Ident(pf.Name)))
		}
	}
	store := s.table.store
	root := store.StagingDir()
	if err := os.MkdirAll(root, fsync.DirMode); err != nil {
		return nil, fmt.Errorf("write data files: %w", err)
	}
	now := nowFunc(opts.Now)()
	token := stagename.New(now)
	adds, err := s.copyFiles(ctx, q, query, cols, root, token, now, target, layout, parts)
	if err == nil {
		err = publish(ctx, store, root, adds)
	}
	if err != nil {
		removeWritten(root, token)
		return nil, errors.Join(err, s.table.DeleteFiles(context.WithoutCancel(ctx), adds))
	}
	return adds, nil
}

// publish puts the files DuckDB wrote under the staging dir at their keys:
// uploads on object storage, syncs on local storage (where they were
// written in place). Several at a time: the disk or the network does the
// waiting.
func publish(ctx context.Context, store Storage, root string, adds []*Add) error {
	return filecache.ForEach(ctx, adds, func(a *Add) error {
		key, err := url.PathUnescape(a.Path)
		if err != nil {
			return fmt.Errorf("publish %s: %w", a.Path, err)
		}
		if err := store.PutFile(ctx, key, filepath.Join(root, filepath.FromSlash(key))); err != nil {
			return fmt.Errorf("publish data file: %w", err)
		}
		return nil
	})
}

// removeWritten deletes the files a failed write left, found by its token.
func removeWritten(root, token string) {
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == logDir {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "part-"+token+"-") {
			os.Remove(p)
		}
		return nil
	})
}

// copyFiles runs DuckDB's COPY with per-file statistics and turns each file
// it reports into an add action.
func (s *Snapshot) copyFiles(ctx context.Context, q Querier, query string, cols []string, root, token string,
	stagedAt time.Time, target int64, layout fileLayout, parts map[string]bool) ([]*Add, error) {
	schema := layout.schema
	options := []string{
		"FORMAT parquet", "RETURN_STATS", "COMPRESSION snappy",
		// The token names this write's files, so a COPY that fails halfway
		// can find and delete what it already wrote; it carries the stage
		// time, which VACUUM and Commit read back.
		fmt.Sprintf("FILENAME_PATTERN 'part-%s-{uuid}'", token), "APPEND",
	}
	if layout.fieldIDs != "" {
		options = append(options, "FIELD_IDS "+layout.fieldIDs)
	}
	if pcs := layout.partitionColumns; len(pcs) == 0 {
		options = append(options, fmt.Sprintf("FILE_SIZE_BYTES %d", target))
	} else {
		// DuckDB cannot split partitioned output by size: one file per
		// partition per write.
		quoted := make([]string, len(pcs))
		for i, c := range pcs {
			quoted[i] = sqlquote.Ident(c)
		}
		options = append(options, "PARTITION_BY ("+strings.Join(quoted, ", ")+")")
	}
	copySQL := fmt.Sprintf("COPY (SELECT %s FROM (%s) AS src) TO %s (%s)",
		strings.Join(cols, ", "), query, sqlquote.String(root), strings.Join(options, ", "))
	if len(layout.partitionColumns) > 0 || hasNested(schema) {
		// Partition values are printed, and nested values cast, under the
		// session's TimeZone: the settings travel with the COPY (one call).
		// Statistics and top-level casts do not depend on it, and the
		// settings add about 0.3 ms to every COPY.
		copySQL = Prepared(copySQL)
	}
	rows, err := q.QueryContext(ctx, copySQL)
	if err != nil {
		return nil, fmt.Errorf("write data files: %w", err)
	}
	defer rows.Close()
	var adds []*Add
	var empty []string
	now := stagedAt.UnixMilli()
	for rows.Next() {
		var (
			file                string
			count, size, footer uint64
			colStats            any
			partKeys            any
		)
		if err := rows.Scan(&file, &count, &size, &footer, &colStats, &partKeys); err != nil {
			return nil, fmt.Errorf("write data files: read COPY result: %w", err)
		}
		if count == 0 {
			empty = append(empty, file)
			continue
		}
		rel, err := filepath.Rel(root, file)
		if err != nil || strings.HasPrefix(rel, "..") {
			return nil, fmt.Errorf("write data files: %s is outside the table root", file)
		}
		pv, err := partitionValues(schema, layout.partitionColumns, partKeys)
		if err != nil {
			return nil, err
		}
		stats, err := fileStats(schema, parts, int64(count), colStats)
		if err != nil {
			return nil, fmt.Errorf("statistics of %s: %w", rel, err)
		}
		adds = append(adds, &Add{
			Path:             encodePath(filepath.ToSlash(rel)),
			PartitionValues:  pv,
			Size:             int64(size),
			ModificationTime: now,
			DataChange:       true,
			Stats:            stats,
		})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("write data files: %w", err)
	}
	for _, f := range empty {
		os.Remove(f)
	}
	return adds, nil
}

// hasNested tells whether the schema has a struct, array or map column.
func hasNested(schema *StructType) bool {
	for _, f := range schema.Fields {
		switch f.Type.(type) {
		case *StructType, *ArrayType, *MapType:
			return true
		}
	}
	return false
}

// DeleteFiles removes staged data files that will not be committed.
func (t *Table) DeleteFiles(ctx context.Context, adds []*Add) error {
	var first error
	for _, a := range adds {
		key, err := t.fileKey(a.Path)
		if err == nil {
			err = t.store.Delete(ctx, key)
		}
		if err != nil && first == nil {
			first = fmt.Errorf("delete staged file %s: %w", a.Path, err)
		}
	}
	return first
}

// encodePath makes a relative file path a URI path, escaping each segment.
func encodePath(rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
