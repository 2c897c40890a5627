package iceberg

import (
	"context"
	"fmt"
	"sort"
	"strings"

	ice "github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/internal/sqlquote"
)

// ScanOptions narrow a scan.
type ScanOptions struct {
	// SnapshotID selects a snapshot; below 0, the current one.
	SnapshotID int64
	// Paths restricts the scan to these data files (as the table spells
	// them); nil reads every data file.
	Paths []string
	// CacheDir is the local folder that holds copies of the files of a
	// table not on the local file system, which the scan downloads before
	// it returns ("": DefaultCacheDir). See remote.go.
	CacheDir string
	// AllowedRoots are where, besides the table's location, the files its
	// manifests name may be: absolute local directories and object storage
	// locations (s3://bucket/prefix). Any other file fails the scan with
	// ErrPathOutsideTable.
	AllowedRoots []string
}

// Hidden columns of the scan's inner relations.
const (
	colSeq   = "__lakesql_seq"
	colScope = "__lakesql_scope"
	colFile  = "__lakesql_file"
	colPos   = "__lakesql_pos"
	colMax   = "__lakesql_max_seq"
)

// ScanSQL returns a DuckDB query over the rows of a snapshot of tbl, with
// its delete files applied, and the id of the snapshot it reads (-1 when
// the table has none). iceberg-go plans the files; DuckDB reads them by
// field id (read_parquet's schema parameter), so renamed and added columns
// read correctly. Position deletes become an anti join on (file, row
// number). Equality deletes become an anti join on their columns, limited
// to data files older than the delete (Iceberg's sequence-number rule):
// each delete file is read once, tagged with the newest data sequence
// number it applies to, as iceberg-go's planner decided it. Files outside
// the local file system (object storage) are downloaded into the cache
// first, and the query reads the copies. Deletion vectors (format
// version 3) join like position deletes: each is read once into a local
// file of its positions (dvPositionsFile).
func ScanSQL(ctx context.Context, tbl *table.Table, opts ScanOptions) (string, int64, error) {
	schema := tbl.Schema()
	snapID := int64(-1)
	scan := tbl.Scan()
	switch {
	case opts.SnapshotID >= 0:
		if tbl.SnapshotByID(opts.SnapshotID) == nil {
			return "", 0, fmt.Errorf("%w: snapshot %d is not in the table", ErrInvalid, opts.SnapshotID)
		}
		snapID = opts.SnapshotID
		scan = tbl.Scan(table.WithSnapshotID(snapID))
	case tbl.CurrentSnapshot() != nil:
		snapID = tbl.CurrentSnapshot().SnapshotID
	}
	cols, readSchema, err := readColumns(schema)
	if err != nil {
		return "", 0, err
	}
	if snapID < 0 {
		return emptyScan(schema), snapID, nil
	}
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return "", 0, fmt.Errorf("plan scan of snapshot %d: %w", snapID, err)
	}
	thresholds := eqDeleteThresholds(tasks)
	tasks, err = selectTasks(tasks, opts.Paths, snapID)
	if err != nil {
		return "", 0, err
	}
	if len(tasks) == 0 {
		return emptyScan(schema), snapID, nil
	}
	b := scanBuilder{schema: schema, cols: cols, readSchema: readSchema, thresholds: thresholds, cacheDir: opts.CacheDir}
	files := scanFiles(tasks, thresholds)
	if err := confineFiles(tbl.Location(), opts.AllowedRoots, append(files, dvFiles(tasks)...)); err != nil {
		return "", 0, fmt.Errorf("scan snapshot %d: %w", snapID, err)
	}
	if b.fsys, err = tbl.FS(ctx); err != nil {
		return "", 0, fmt.Errorf("open the file IO of %s: %w", tbl.Location(), err)
	}
	b.local, err = LocalFiles(ctx, tbl, opts.CacheDir, files)
	if err != nil {
		return "", 0, fmt.Errorf("scan snapshot %d: %w", snapID, err)
	}
	q, err := b.build(tasks)
	if err != nil {
		return "", 0, fmt.Errorf("scan snapshot %d: %w", snapID, err)
	}
	return q, snapID, nil
}

// readColumns returns the select list and read_parquet's schema map for
// the table's top-level columns.
func readColumns(schema *ice.Schema) (string, string, error) {
	sel := make([]string, 0, schema.NumFields())
	entries := make([]string, 0, schema.NumFields())
	for _, f := range schema.Fields() {
		t, err := DuckDBType(f.Type)
		if err != nil {
			return "", "", fmt.Errorf("column %q: %w", f.Name, err)
		}
		sel = append(sel, sqlquote.Ident(f.Name))
		entries = append(entries, fmt.Sprintf("%d: {name: %s, type: %s, default_value: NULL}", f.ID, sqlquote.String(f.Name), sqlquote.String(t)))
	}
	return strings.Join(sel, ", "), "MAP {" + strings.Join(entries, ", ") + "}", nil
}

func emptyScan(schema *ice.Schema) string {
	parts := make([]string, 0, schema.NumFields())
	for _, f := range schema.Fields() {
		t, _ := DuckDBType(f.Type)
		parts = append(parts, fmt.Sprintf("CAST(NULL AS %s) AS %s", t, sqlquote.Ident(f.Name)))
	}
	return "SELECT " + strings.Join(parts, ", ") + " LIMIT 0"
}

// selectTasks keeps one task per data file, restricted to paths when given.
func selectTasks(tasks []table.FileScanTask, paths []string, snapID int64) ([]table.FileScanTask, error) {
	byPath := map[string]table.FileScanTask{}
	var order []string
	for _, t := range tasks {
		p := t.File.FilePath()
		if _, ok := byPath[p]; !ok {
			order = append(order, p)
		}
		byPath[p] = t
	}
	if paths != nil {
		order = order[:0]
		seen := map[string]bool{}
		for _, p := range paths {
			if _, ok := byPath[p]; !ok {
				return nil, fmt.Errorf("%w: data file %s is not in snapshot %d", ErrConflict, p, snapID)
			}
			if !seen[p] {
				seen[p] = true
				order = append(order, p)
			}
		}
	}
	out := make([]table.FileScanTask, len(order))
	for i, p := range order {
		out[i] = byPath[p]
	}
	return out, nil
}

// eqDeleteThresholds maps each equality-delete file to the newest data
// sequence number among the data files the planner applies it to. A data
// file in the delete's scope is deleted from iff its sequence number is at
// most that: files the planner skipped below it (disjoint key bounds) hold
// none of its keys, so applying it to them changes nothing.
func eqDeleteThresholds(tasks []table.FileScanTask) map[string]int64 {
	out := map[string]int64{}
	for _, t := range tasks {
		if t.DataSequenceNumber == nil {
			continue
		}
		for _, e := range t.EqualityDeleteFiles {
			if v, ok := out[e.FilePath()]; !ok || *t.DataSequenceNumber > v {
				out[e.FilePath()] = *t.DataSequenceNumber
			}
		}
	}
	return out
}

type scanBuilder struct {
	schema     *ice.Schema
	cols       string
	readSchema string
	thresholds map[string]int64
	local      map[string]string // file URI -> local path DuckDB reads
	fsys       iceio.IO          // reads deletion vectors
	cacheDir   string
}

// dvFiles lists the Puffin files of the tasks' deletion vectors.
func dvFiles(tasks []table.FileScanTask) []string {
	var out []string
	for _, t := range tasks {
		for _, d := range t.DeletionVectorFiles {
			out = append(out, d.FilePath())
		}
	}
	return out
}

// scanFiles lists the files a scan of tasks reads: the data files, their
// position deletes, and the equality deletes that apply to some file.
func scanFiles(tasks []table.FileScanTask, thresholds map[string]int64) []string {
	var out []string
	for _, t := range tasks {
		out = append(out, t.File.FilePath())
		for _, d := range t.DeleteFiles {
			out = append(out, d.FilePath())
		}
		for _, e := range t.EqualityDeleteFiles {
			if _, ok := thresholds[e.FilePath()]; ok {
				out = append(out, e.FilePath())
			}
		}
	}
	return out
}

// path returns the local path of a file the scan reads.
func (b *scanBuilder) path(uri string) (string, error) {
	if p, ok := b.local[uri]; ok {
		return p, nil
	}
	return localPath(uri)
}

// eqSet is the equality-delete files of one set of equality field ids.
type eqSet struct {
	ids    []int
	files  map[string]ice.DataFile
	scoped bool // some file is partition-scoped
	global bool // some file applies to every partition
}

func (b *scanBuilder) build(tasks []table.FileScanTask) (string, error) {
	posFiles := map[string]bool{}
	dvs := map[string]ice.DataFile{} // data file -> its DV
	eqSets := map[string]*eqSet{}
	for _, t := range tasks {
		switch len(t.DeletionVectorFiles) {
		case 0:
		case 1:
			dvs[t.File.FilePath()] = t.DeletionVectorFiles[0]
		default:
			return "", fmt.Errorf("%w: data file %s has %d deletion vectors (the spec allows one)", ErrInvalid, t.File.FilePath(), len(t.DeletionVectorFiles))
		}
		for _, d := range t.DeleteFiles {
			posFiles[d.FilePath()] = true
		}
		for _, e := range t.EqualityDeleteFiles {
			ids := append([]int(nil), e.EqualityFieldIDs()...)
			sort.Ints(ids)
			k := fmt.Sprint(ids)
			s := eqSets[k]
			if s == nil {
				s = &eqSet{ids: ids, files: map[string]ice.DataFile{}}
				eqSets[k] = s
			}
			s.files[e.FilePath()] = e
			if isGlobal(e) {
				s.global = true
			} else {
				s.scoped = true
			}
		}
	}
	withPos, withEq := len(posFiles) > 0 || len(dvs) > 0, len(eqSets) > 0
	if !withPos && !withEq {
		paths, err := b.localPaths(tasks)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("SELECT %s FROM read_parquet(%s, schema = %s)", b.cols, paths, b.readSchema), nil
	}
	data, err := b.dataRelation(tasks, withPos, withEq)
	if err != nil {
		return "", err
	}
	q := "SELECT * FROM (" + data + ") AS d"
	if withPos {
		pos, err := b.posRelation(posFiles, dvs, tasks)
		if err != nil {
			return "", err
		}
		q = fmt.Sprintf("SELECT d.* FROM (%s) AS d ANTI JOIN (%s) AS p ON p.f = d.%s AND p.pos = d.%s",
			q, pos, colFile, colPos)
	}
	keys := make([]string, 0, len(eqSets))
	for k := range eqSets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		s := eqSets[k]
		rel, on, err := b.eqRelation(s)
		if err != nil {
			return "", err
		}
		if rel == "" {
			continue
		}
		alias := fmt.Sprintf("e%d", i)
		cond := strings.ReplaceAll(on, "e.", alias+".")
		if s.global {
			q = fmt.Sprintf("SELECT d.* FROM (%s) AS d ANTI JOIN (SELECT * FROM (%s) WHERE %s = '*') AS %s ON %s AND d.%s <= %s.%s",
				q, rel, colScope, alias, cond, colSeq, alias, colMax)
		}
		if s.scoped {
			q = fmt.Sprintf("SELECT d.* FROM (%s) AS d ANTI JOIN (SELECT * FROM (%s) WHERE %s <> '*') AS %s ON %s AND %s.%s = d.%s AND d.%s <= %s.%s",
				q, rel, colScope, alias, cond, alias, colScope, colScope, colSeq, alias, colMax)
		}
	}
	return fmt.Sprintf("SELECT %s FROM (%s) AS lakesql_scan", b.cols, q), nil
}

// dataRelation reads the data files with the hidden columns the deletes
// join on: sequence number and scope for equality deletes, file and row
// number for position deletes. Files sharing a sequence number and scope
// are read by one read_parquet.
func (b *scanBuilder) dataRelation(tasks []table.FileScanTask, withPos, withEq bool) (string, error) {
	type group struct {
		seq   int64
		scope string
		tasks []table.FileScanTask
	}
	groups := map[string]*group{}
	var order []string
	for _, t := range tasks {
		var seq int64
		scope := ""
		if withEq {
			if t.DataSequenceNumber == nil {
				return "", fmt.Errorf("%w: data file %s has no sequence number", ErrUnsupported, t.File.FilePath())
			}
			seq, scope = *t.DataSequenceNumber, scopeKey(t.File)
		}
		k := fmt.Sprintf("%d\x00%s", seq, scope)
		g := groups[k]
		if g == nil {
			g = &group{seq: seq, scope: scope}
			groups[k] = g
			order = append(order, k)
		}
		g.tasks = append(g.tasks, t)
	}
	parts := make([]string, 0, len(order))
	for _, k := range order {
		g := groups[k]
		paths, err := b.localPaths(g.tasks)
		if err != nil {
			return "", err
		}
		extra, args := "", ""
		if withEq {
			extra += fmt.Sprintf(", %d::BIGINT AS %s, %s AS %s", g.seq, colSeq, sqlquote.String(g.scope), colScope)
		}
		if withPos {
			extra += fmt.Sprintf(", filename AS %s, file_row_number AS %s", colFile, colPos)
			args = ", filename = true, file_row_number = true"
		}
		parts = append(parts, fmt.Sprintf("SELECT %s%s FROM read_parquet(%s, schema = %s%s)", b.cols, extra, paths, b.readSchema, args))
	}
	return strings.Join(parts, " UNION ALL "), nil
}

// posRelation reads position-delete files and deletion vectors as
// (local path of the data file, row number).
func (b *scanBuilder) posRelation(files map[string]bool, dvs map[string]ice.DataFile, tasks []table.FileScanTask) (string, error) {
	dvRel, err := b.dvRelation(dvs)
	if err != nil || len(files) == 0 {
		return dvRel, err
	}
	rel, err := b.posFileRelation(files, tasks)
	if err != nil || dvRel == "" {
		return rel, err
	}
	return rel + " UNION ALL " + dvRel, nil
}

// dvRelation reads deletion vectors as (local path of the data file, row
// number), "" when there are none.
func (b *scanBuilder) dvRelation(dvs map[string]ice.DataFile) (string, error) {
	uris := make([]string, 0, len(dvs))
	for u := range dvs {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	parts := make([]string, 0, len(uris))
	for _, u := range uris {
		lp, err := b.path(u)
		if err != nil {
			return "", err
		}
		pf, err := dvPositionsFile(b.fsys, b.cacheDir, dvs[u])
		if err != nil {
			return "", err
		}
		parts = append(parts, fmt.Sprintf("SELECT %s AS f, pos FROM read_parquet(%s)", sqlquote.String(lp), sqlquote.String(pf)))
	}
	return strings.Join(parts, " UNION ALL "), nil
}

// posFileRelation reads position-delete files as (local path of the data
// file, row number). The files name data files by their URIs; those of
// local files become their paths by dropping the scheme, those of cached
// copies are mapped to the copies.
func (b *scanBuilder) posFileRelation(files map[string]bool, tasks []table.FileScanTask) (string, error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		lp, err := b.path(p)
		if err != nil {
			return "", err
		}
		paths = append(paths, sqlquote.String(lp))
	}
	sort.Strings(paths)
	var mapped []string
	for _, t := range tasks {
		uri := t.File.FilePath()
		if !IsLocal(uri) {
			lp, err := b.path(uri)
			if err != nil {
				return "", err
			}
			mapped = append(mapped, fmt.Sprintf("(%s, %s)", sqlquote.String(uri), sqlquote.String(lp)))
		}
	}
	if len(mapped) == 0 {
		return fmt.Sprintf("SELECT regexp_replace(file_path, '^file:(//)?', '') AS f, pos FROM read_parquet([%s])",
			strings.Join(paths, ", ")), nil
	}
	return fmt.Sprintf("SELECT coalesce(m.f, regexp_replace(p.file_path, '^file:(//)?', '')) AS f, p.pos FROM read_parquet([%s]) AS p "+
		"LEFT JOIN (VALUES %s) AS m(uri, f) ON m.uri = p.file_path", strings.Join(paths, ", "), strings.Join(mapped, ", ")), nil
}

// eqRelation reads one set's delete files, each row tagged with the newest
// data sequence number its file applies to, collapsed per key and scope.
// It returns the relation and the join condition on d and e.
func (b *scanBuilder) eqRelation(s *eqSet) (string, string, error) {
	var names, entries, on []string
	for _, id := range s.ids {
		f, ok := b.schema.FindFieldByID(id)
		if !ok {
			return "", "", fmt.Errorf("%w: equality delete on field %d, which the schema lacks", ErrUnsupported, id)
		}
		t, err := DuckDBType(f.Type)
		if err != nil {
			return "", "", err
		}
		q := sqlquote.Ident(f.Name)
		names = append(names, q)
		entries = append(entries, fmt.Sprintf("%d: {name: %s, type: %s, default_value: NULL}", id, sqlquote.String(f.Name), sqlquote.String(t)))
		on = append(on, fmt.Sprintf("e.%s IS NOT DISTINCT FROM d.%s", q, q))
	}
	paths := make([]string, 0, len(s.files))
	for p := range s.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var parts []string
	for _, p := range paths {
		t, ok := b.thresholds[p]
		if !ok {
			continue
		}
		lp, err := b.path(p)
		if err != nil {
			return "", "", err
		}
		scope := "*"
		if !isGlobal(s.files[p]) {
			scope = scopeKey(s.files[p])
		}
		parts = append(parts, fmt.Sprintf("SELECT %s, %d::BIGINT AS %s, %s AS %s FROM read_parquet(%s, schema = MAP {%s})",
			strings.Join(names, ", "), t, colMax, sqlquote.String(scope), colScope, sqlquote.String(lp), strings.Join(entries, ", ")))
	}
	if len(parts) == 0 {
		return "", "", nil
	}
	rel := fmt.Sprintf("SELECT %s, %s, max(%s) AS %s FROM (%s) GROUP BY ALL",
		strings.Join(names, ", "), colScope, colMax, colMax, strings.Join(parts, " UNION ALL "))
	return rel, strings.Join(on, " AND "), nil
}

// isGlobal tells whether a delete file applies to every partition: it was
// written with an unpartitioned spec.
func isGlobal(f ice.DataFile) bool { return len(f.Partition()) == 0 }

// scopeKey identifies a file's partition: spec id and partition values.
func scopeKey(f ice.DataFile) string {
	part := f.Partition()
	ids := make([]int, 0, len(part))
	for id := range part {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d", f.SpecID())
	for _, id := range ids {
		fmt.Fprintf(&sb, "|%d=%v", id, part[id])
	}
	return sb.String()
}

func (b *scanBuilder) localPaths(tasks []table.FileScanTask) (string, error) {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		lp, err := b.path(t.File.FilePath())
		if err != nil {
			return "", err
		}
		out[i] = sqlquote.String(lp)
	}
	return "[" + strings.Join(out, ", ") + "]", nil
}
