package delta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/sqlquote"
)

// brokenTables are meant to fail: a missing log, invalid protocol versions,
// gaps, or a state without metadata or protocol. They must fail with a
// clear error, never a panic or rows.
var brokenTables = map[string]bool{
	// Log-level test tables of other readers: no metaData, or one without a
	// schema, so no reader can give their rows.
	"data-reader-absolute-paths-escaped-chars": true,
	"deltalog-commit-info":                     true,
	"update-deleted-directory":                 true,
	// A log holding only a malformed .crc file, and an empty folder.
	"crc-malformed":                     true,
	"stats-writing-all-types":           true,
	"deltalog-invalid-protocol-version": true,
	"no-delta-log-folder":               true,
	"versions-not-contiguous":           true,
	"deltalog-state-reconstruction-from-checkpoint-missing-metadata": true,
	"deltalog-state-reconstruction-from-checkpoint-missing-protocol": true,
	"deltalog-state-reconstruction-without-metadata":                 true,
	"deltalog-state-reconstruction-without-protocol":                 true,
}

// goldenTable is one table of the shared test data, unpacked.
type goldenTable struct {
	name     string
	root     string // the Delta table
	expected string // folder of expected rows as Parquet, or ""
}

func collectGoldenTables(t *testing.T) []goldenTable {
	requireSharedTestData(t)
	tmp := t.TempDir()
	var out []goldenTable
	golden, _ := filepath.Glob(filepath.Join(sharedTestData, "golden", "*.tar.zst"))
	for _, a := range golden {
		name := strings.TrimSuffix(filepath.Base(a), ".tar.zst")
		untarZst(t, a, tmp)
		expected := filepath.Join(tmp, name, "expected")
		if _, err := os.Stat(expected); err != nil {
			expected = ""
		}
		out = append(out, tableRoots(name, filepath.Join(tmp, name, "delta"), expected)...)
	}
	kernel, _ := os.ReadDir(filepath.Join(sharedTestData, "kernel"))
	for _, e := range kernel {
		p := filepath.Join(sharedTestData, "kernel", e.Name())
		name := strings.TrimSuffix(e.Name(), ".tar.zst")
		if strings.HasSuffix(e.Name(), ".tar.zst") {
			untarZst(t, p, filepath.Join(tmp, "kernel"))
			p = filepath.Join(tmp, "kernel", name)
		} else if !e.IsDir() {
			continue
		}
		out = append(out, tableRoots("kernel/"+name, p, "")...)
	}
	if len(out) == 0 {
		t.Fatalf("no tables found under %s", sharedTestData)
	}
	return out
}

// tableRoots finds the tables in a test folder: the folder itself, or the
// folders below it that hold a _delta_log (some hold several tables).
func tableRoots(name, dir, expected string) []goldenTable {
	if _, err := os.Stat(filepath.Join(dir, logDir)); err == nil {
		return []goldenTable{{name: name, root: dir, expected: expected}}
	}
	var out []goldenTable
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if d.Name() == logDir {
			root := filepath.Dir(p)
			rel, _ := filepath.Rel(dir, root)
			out = append(out, goldenTable{name: name + "/" + filepath.ToSlash(rel), root: root})
			return filepath.SkipDir
		}
		return nil
	})
	if len(out) == 0 {
		return []goldenTable{{name: name, root: dir, expected: expected}}
	}
	return out
}

// TestGoldenTables reads every shared table: those with expected rows must
// match them exactly (as multisets), the others must open and count their
// rows, unsupported ones must be refused by name, broken ones must fail
// cleanly. Wrong rows fail the test.
func TestGoldenTables(t *testing.T) {
	tables := collectGoldenTables(t)
	db := openDuckDB(t)
	ctx := context.Background()
	var readOK, refused, failedClean, wrong []string
	for _, g := range tables {
		err := checkGoldenTable(ctx, t, db, g)
		var un *UnsupportedError
		switch {
		case err == nil:
			readOK = append(readOK, g.name)
		case brokenTables[strings.TrimPrefix(g.name, "kernel/")]:
			failedClean = append(failedClean, g.name)
			t.Logf("%s failed as it should: %v", g.name, err)
		case errors.As(err, &un):
			refused = append(refused, fmt.Sprintf("%s (%s)", g.name, un.Feature))
		default:
			wrong = append(wrong, g.name)
			t.Errorf("%s: %v", g.name, err)
		}
	}
	for _, r := range refused {
		t.Logf("refused: %s", r)
	}
	line := fmt.Sprintf("golden: %d read correctly, %d refused as unsupported, %d failed cleanly, %d wrong",
		len(readOK), len(refused), len(failedClean), len(wrong))
	fmt.Println(line)
	if len(refused) > 0 {
		fmt.Println("golden refused:", strings.Join(refused, ", "))
	}
}

func checkGoldenTable(ctx context.Context, t *testing.T, db *sql.DB, g goldenTable) error {
	store, err := NewLocalStorage(g.root)
	if err != nil {
		return err
	}
	snap, err := NewTable(store).Latest(ctx)
	if err != nil {
		return err
	}
	if g.expected == "" && !dataFilesPresent(snap) {
		// Log-replay test tables name files that were never written.
		var rows int64
		for _, f := range snap.Files() {
			n, _ := f.NumRecords()
			rows += n
		}
		t.Logf("%s: log only, %d files, %d rows by stats at version %d", g.name, len(snap.Files()), rows, snap.Version)
		return nil
	}
	query, err := snap.ScanSQL(ctx, db)
	if err != nil {
		return err
	}
	got, cols, err := rowsAsText(ctx, db, query, nil)
	if err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	if g.expected == "" {
		t.Logf("%s: %d rows at version %d (no expected rows to compare)", g.name, len(got), snap.Version)
		return nil
	}
	want, wantCols, err := rowsAsText(ctx, db,
		fmt.Sprintf("SELECT * FROM read_parquet(%s)", sqlquote.String(filepath.Join(g.expected, "*.parquet"))), cols)
	if err != nil {
		return fmt.Errorf("read expected rows: %w", err)
	}
	if diff := cmp.Diff(wantCols, cols); diff != "" {
		return fmt.Errorf("WRONG schema (-expected +ours):\n%s", diff)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		return fmt.Errorf("WRONG rows (-expected +ours):\n%s", diff)
	}
	return nil
}

// rowsAsText runs query and returns its rows as sorted text lines, each
// value cast by DuckDB to the type of the same column in like (when given),
// so expected and actual rows compare on equal terms.
func rowsAsText(ctx context.Context, db *sql.DB, query string, like []colType) ([]string, []colType, error) {
	cols, err := describe(ctx, db, query)
	if err != nil {
		return nil, nil, err
	}
	byName := map[string]string{}
	for _, c := range like {
		byName[c.Name] = c.Type
	}
	exprs := make([]string, len(cols))
	for i, c := range cols {
		e := sqlquote.Ident(c.Name)
		if typ, ok := byName[c.Name]; ok && typ != c.Type {
			e = fmt.Sprintf("CAST(%s AS %s)", e, typ)
		}
		exprs[i] = fmt.Sprintf("COALESCE(CAST(%s AS VARCHAR), 'NULL')", e)
	}
	rows, err := db.QueryContext(ctx, fmt.Sprintf("SELECT concat_ws(' | ', %s) FROM (%s)", strings.Join(exprs, ", "), query))
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, nil, err
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out, cols, rows.Err()
}

type colType struct{ Name, Type string }

func describe(ctx context.Context, db *sql.DB, query string) ([]colType, error) {
	rows, err := db.QueryContext(ctx, "SELECT column_name, column_type FROM (DESCRIBE "+query+")")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []colType
	for rows.Next() {
		var c colType
		if err := rows.Scan(&c.Name, &c.Type); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func dataFilesPresent(s *Snapshot) bool {
	for _, f := range s.Files() {
		p, err := s.Table().dataFile(context.Background(), s.Table().rules(), f.Path, s.Version)
		if err != nil {
			return false
		}
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}
