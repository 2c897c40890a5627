package iceberg

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"

	ice "github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/internal/stagename"
)

// MinDVFormatVersion is the first Iceberg format version with deletion
// vectors; lakesql writes deletes as DVs on such tables, and as equality
// deletes below it.
const MinDVFormatVersion = 3

// DVBase is the deletion vector a new one replaces: the one its data file
// had in the snapshot the delete read. Path is empty when the file had
// none. The spec allows one DV per data file, so the new DV holds the old
// one's positions too and the commit removes the old one.
type DVBase struct {
	Path   string `json:"path,omitempty"`
	Offset int64  `json:"offset,omitempty"`
}

// DeletionVectors is what WriteDeletionVectors staged.
type DeletionVectors struct {
	// Files are the new DVs, one per data file, all blobs of one Puffin
	// file; each names its data file (ReferencedDataFile).
	Files []ice.DataFile
	// Bases maps each referenced data file to the DV its new one replaces.
	Bases map[string]DVBase
	// ReadSnapshot is the snapshot whose rows the positions were found in
	// (-1: the table was empty).
	ReadSnapshot int64
	// Deleted counts the positions newly deleted (not those of the bases).
	Deleted int64
}

// DVOptions tune WriteDeletionVectors.
type DVOptions struct {
	CacheDir     string   // see ScanOptions.CacheDir
	AllowedRoots []string // see ScanOptions.AllowedRoots
	Now          func() time.Time
}

// WriteDeletionVectors finds the live rows of tbl's current snapshot whose
// key columns equal a row of keysQuery (run on conn, yielding the key
// columns by name) and writes deletion vectors deleting them, without
// committing: per data file, its row positions (DuckDB's file_row_number)
// that its current DV does not already delete, merged with that DV, as
// one deletion-vector-v1 blob of a single new Puffin file in the table's
// data folder. It refuses (ErrUnsupported) tables below format version 3,
// tables whose write.merge.mode is copy-on-write, and data files that
// still carry position-delete files, which a DV would have to absorb.
func WriteDeletionVectors(ctx context.Context, tbl *table.Table, conn *sql.Conn, keysQuery string, key []string, opts DVOptions) (DeletionVectors, error) {
	out := DeletionVectors{ReadSnapshot: -1, Bases: map[string]DVBase{}}
	meta := tbl.Metadata()
	if meta.Version() < MinDVFormatVersion {
		return out, fmt.Errorf("%w: deletion vectors need format version %d, the table is version %d", ErrUnsupported, MinDVFormatVersion, meta.Version())
	}
	if strings.EqualFold(tbl.Properties().Get(MergeModeKey, ""), "copy-on-write") {
		return out, fmt.Errorf("%w: the table's %s is copy-on-write", ErrUnsupported, MergeModeKey)
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return out, nil
	}
	out.ReadSnapshot = snap.SnapshotID
	tasks, err := tbl.Scan(table.WithSnapshotID(snap.SnapshotID)).PlanFiles(ctx)
	if err != nil {
		return out, fmt.Errorf("plan files of snapshot %d: %w", snap.SnapshotID, err)
	}
	tasks, err = selectTasks(tasks, nil, snap.SnapshotID)
	if err != nil || len(tasks) == 0 {
		return out, err
	}
	current := map[string]ice.DataFile{} // data file -> its DV
	var uris []string
	for _, t := range tasks {
		p := t.File.FilePath()
		if len(t.DeleteFiles) > 0 {
			return out, fmt.Errorf("%w: data file %s has position-delete files, which a deletion vector would have to absorb", ErrUnsupported, p)
		}
		switch len(t.DeletionVectorFiles) {
		case 0:
		case 1:
			current[p] = t.DeletionVectorFiles[0]
		default:
			return out, fmt.Errorf("%w: data file %s has %d deletion vectors (the spec allows one)", ErrInvalid, p, len(t.DeletionVectorFiles))
		}
		uris = append(uris, p)
	}
	if err := confineFiles(tbl.Location(), opts.AllowedRoots, uris); err != nil {
		return out, err
	}
	local, err := LocalFiles(ctx, tbl, opts.CacheDir, uris)
	if err != nil {
		return out, err
	}
	positions, err := keyPositions(ctx, conn, tbl.Schema(), keysQuery, key, uris, local)
	if err != nil {
		return out, err
	}
	if len(positions) == 0 {
		return out, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return out, fmt.Errorf("open the file IO of %s: %w", tbl.Location(), err)
	}
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return out, fmt.Errorf("%w: the table's file IO cannot write files", ErrUnsupported)
	}
	w := dv.NewDVWriter(wfs, func(id int32) *ice.PartitionSpec { return meta.PartitionSpecByID(int(id)) })
	byPath := map[string]ice.DataFile{}
	for _, t := range tasks {
		byPath[t.File.FilePath()] = t.File
	}
	for _, p := range uris {
		pos := positions[p]
		if len(pos) == 0 {
			continue
		}
		df := byPath[p]
		base := DVBase{}
		if old := current[p]; old != nil {
			bm, err := dv.ReadDV(fsys, old)
			if err != nil {
				return out, fmt.Errorf("read the deletion vector of %s: %w", p, err)
			}
			fresh := pos[:0]
			for _, x := range pos {
				if !bm.Contains(uint64(x)) {
					fresh = append(fresh, x)
				}
			}
			if pos = fresh; len(pos) == 0 {
				continue // every matching row is deleted already
			}
			w.Load(p, bm, df.SpecID(), df.Partition())
			base = DVBase{Path: old.FilePath(), Offset: *old.ContentOffset()}
		}
		if err := w.Add(p, pos, df.SpecID(), df.Partition()); err != nil {
			return out, err
		}
		out.Bases[p] = base
		out.Deleted += int64(len(pos))
	}
	if len(out.Bases) == 0 {
		return out, nil
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	// The name carries the stage time (internal/stagename), as the data
	// files' folders do: Commit and vacuum judge its age by it.
	loc := strings.TrimRight(tbl.Location(), "/") + "/data/lakesql-" + stagename.New(now()) + "-dv.puffin"
	files, err := w.Flush(ctx, loc)
	if err != nil {
		return out, fmt.Errorf("write deletion vectors: %w", err)
	}
	out.Files = files
	return out, nil
}

// keyPositions maps each data file (by URI) to the row positions whose key
// columns match a row of keysQuery, ascending. DuckDB reads only the key
// columns, by field id.
func keyPositions(ctx context.Context, conn *sql.Conn, schema *ice.Schema, keysQuery string, key []string, uris []string, local map[string]string) (map[string][]int64, error) {
	var entries, sel, on []string
	for _, k := range key {
		f, ok := schema.FindFieldByName(k)
		if !ok {
			return nil, fmt.Errorf("%w: key column %q is not in the table", ErrInvalid, k)
		}
		t, err := DuckDBType(f.Type)
		if err != nil {
			return nil, fmt.Errorf("key column %q: %w", k, err)
		}
		q := sqlquote.Ident(f.Name)
		entries = append(entries, fmt.Sprintf("%d: {name: %s, type: %s, default_value: NULL}", f.ID, sqlquote.String(f.Name), sqlquote.String(t)))
		sel = append(sel, fmt.Sprintf("CAST(%s AS %s) AS %s", q, t, q))
		on = append(on, fmt.Sprintf("d.%s = k.%s", q, q))
	}
	paths := make([]string, len(uris))
	toURI := make(map[string]string, len(uris))
	for i, u := range uris {
		paths[i] = sqlquote.String(local[u])
		toURI[local[u]] = u
	}
	q := fmt.Sprintf("SELECT d.filename, d.file_row_number FROM read_parquet([%s], schema = MAP {%s}, filename = true, file_row_number = true) AS d "+
		"SEMI JOIN (SELECT DISTINCT %s FROM (%s) AS lakesql_keys) AS k ON %s ORDER BY 1, 2",
		strings.Join(paths, ", "), strings.Join(entries, ", "), strings.Join(sel, ", "), keysQuery, strings.Join(on, " AND "))
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("find the rows of the keys to delete: %w", err)
	}
	defer rows.Close()
	out := map[string][]int64{}
	for rows.Next() {
		var name string
		var pos int64
		if err := rows.Scan(&name, &pos); err != nil {
			return nil, fmt.Errorf("find the rows of the keys to delete: %w", err)
		}
		u, ok := toURI[name]
		if !ok {
			return nil, fmt.Errorf("find the rows of the keys to delete: DuckDB named file %s, which the scan did not read", name)
		}
		out[u] = append(out[u], pos)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find the rows of the keys to delete: %w", err)
	}
	for _, p := range out {
		sort.Slice(p, func(i, j int) bool { return p[i] < p[j] })
	}
	return out, nil
}
