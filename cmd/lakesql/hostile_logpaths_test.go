package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/apache/iceberg-go/table"

	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// Hostile probes of issue 15 item 1: a Delta log that names files outside
// the table and the allowed roots. Each forges a log entry of a sink of
// its own, as anyone who can write the table's folder could, and expects
// 1290 from reading it; a result holding the outside file's canary row is
// an escape.

// logpathsSeq numbers the probes' sinks.
var logpathsSeq atomic.Int64

// logpathsVictim is a sink holding one row of its own, and a Parquet file
// outside every root (in a folder of the test's) whose row holds
// hostileOutsideCanary.
type logpathsVictim struct {
	name, table string
	dataFile    string // the victim's own data file, relative to its table
	outFile     string // the outside Parquet file
	size        int64
}

func logpathsSetup(h *hostileEnv) (*logpathsVictim, error) {
	n := logpathsSeq.Add(1)
	src, name := fmt.Sprintf("logpaths_src%d", n), fmt.Sprintf("logpaths_v%d", n)
	for _, q := range []string{
		fmt.Sprintf("CREATE SINK %s INTO DELTA 'lake/%s' (id BIGINT NOT NULL, v VARCHAR(64))", src, src),
		fmt.Sprintf("INSERT INTO %s VALUES (666, '%s')", src, hostileOutsideCanary),
		fmt.Sprintf("CREATE SINK %s INTO DELTA 'lake/%s' (id BIGINT NOT NULL, v VARCHAR(64))", name, name),
		fmt.Sprintf("INSERT INTO %s VALUES (1, 'inside')", name),
	} {
		if err := h.exec(q); err != nil {
			return nil, h.wrong("setup %s: %v", q, err)
		}
	}
	srcFile, err := logpathsDataFile(filepath.Join(h.data, "lake", src))
	if err != nil {
		return nil, h.wrong("setup: %v", err)
	}
	data, err := os.ReadFile(srcFile)
	if err != nil {
		return nil, h.wrong("setup: %v", err)
	}
	if err := h.exec("DROP SINK " + src); err != nil {
		return nil, h.wrong("setup: %v", err)
	}
	v := &logpathsVictim{name: name, table: filepath.Join(h.data, "lake", name),
		outFile: filepath.Join(h.t.TempDir(), "x.parquet"), size: int64(len(data))}
	if err := os.WriteFile(v.outFile, data, 0o644); err != nil {
		return nil, h.wrong("setup: %v", err)
	}
	own, err := logpathsDataFile(v.table)
	if err != nil {
		return nil, h.wrong("setup: %v", err)
	}
	v.dataFile = filepath.Base(own)
	return v, nil
}

// logpathsDataFile is the one data file of a table.
func logpathsDataFile(table string) (string, error) {
	ents, err := os.ReadDir(table)
	if err != nil {
		return "", err
	}
	var found []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".parquet") {
			found = append(found, filepath.Join(table, e.Name()))
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("data files of %s: %v", table, found)
	}
	return found[0], nil
}

// forge writes the victim's next log entry (version 2: 0 created it, 1
// is its INSERT).
func (v *logpathsVictim) forge(actions ...map[string]any) error {
	var b strings.Builder
	for _, a := range actions {
		line, err := json.Marshal(a)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return os.WriteFile(filepath.Join(v.table, "_delta_log", fmt.Sprintf("%020d.json", 2)), []byte(b.String()), 0o644)
}

func (v *logpathsVictim) add(path string) map[string]any {
	return map[string]any{"add": map[string]any{"path": path, "partitionValues": map[string]any{},
		"size": v.size, "modificationTime": 0, "dataChange": true}}
}

func logpathsRemove(path string) map[string]any {
	return map[string]any{"remove": map[string]any{"path": path, "dataChange": true}}
}

// read selects the victim's rows: an error is returned as it is (the
// probe wants 1290), the canary row is an escape, and rows other than
// the victim's own are wrong.
func (v *logpathsVictim) read(h *hostileEnv) error {
	defer h.exec("DROP SINK IF EXISTS " + v.name)
	rows, err := h.query("SELECT id, v FROM " + v.name)
	if err != nil {
		if strings.Contains(err.Error(), hostileOutsideCanary) {
			return h.escaped("the error shows the outside file's row: %v", err)
		}
		return err
	}
	if strings.Contains(fmt.Sprint(rows), hostileOutsideCanary) {
		return h.escaped("read the outside file's row: %v", rows)
	}
	return h.wrong("the forged log read without an error: %v", rows)
}

// logpathsProbe sets up a victim, forges its log with what forge returns,
// and reads it.
func logpathsProbe(forge func(h *hostileEnv, v *logpathsVictim) ([]map[string]any, error)) func(h *hostileEnv) error {
	return func(h *hostileEnv) error {
		v, err := logpathsSetup(h)
		if err != nil {
			return err
		}
		actions, err := forge(h, v)
		if err != nil {
			return h.wrong("forge: %v", err)
		}
		if err := v.forge(actions...); err != nil {
			return h.wrong("forge: %v", err)
		}
		return v.read(h)
	}
}

// logpathsIceberg adds a Parquet file outside every root, holding the
// canary row, to an Iceberg sink's table through the data directory's
// SQLite catalog, as another catalog client could; reading the sink must
// fail with 1290.
func logpathsIceberg(h *hostileEnv) error {
	n := logpathsSeq.Add(1)
	name := fmt.Sprintf("logpaths_i%d", n)
	for _, q := range []string{
		fmt.Sprintf("CREATE SINK %s INTO ICEBERG 'hostile.%s' (id BIGINT, v VARCHAR(64))", name, name),
		fmt.Sprintf("INSERT INTO %s VALUES (1, 'inside')", name),
	} {
		if err := h.exec(q); err != nil {
			return h.wrong("setup %s: %v", q, err)
		}
	}
	defer h.exec("DROP SINK IF EXISTS " + name)
	out := filepath.Join(h.t.TempDir(), "x.parquet")
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		return h.wrong("setup: %v", err)
	}
	defer duck.Close()
	if _, err := duck.ExecContext(h.ctx, fmt.Sprintf("COPY (SELECT 666::BIGINT AS id, '%s' AS v) TO '%s' (FORMAT parquet, FIELD_IDS {id: 1, v: 2})",
		hostileOutsideCanary, out)); err != nil {
		return h.wrong("setup: %v", err)
	}
	if err := logpathsIcebergAdd(h.ctx, h.data, table.Identifier{"hostile", name}, out); err != nil {
		return h.wrong("forge: %v", err)
	}
	rows, err := h.query("SELECT id, v FROM " + name)
	if err != nil {
		if strings.Contains(err.Error(), hostileOutsideCanary) {
			return h.escaped("the error shows the outside file's row: %v", err)
		}
		return err
	}
	if strings.Contains(fmt.Sprint(rows), hostileOutsideCanary) {
		return h.escaped("read the outside file's row: %v", rows)
	}
	return h.wrong("the forged manifest read without an error: %v", rows)
}

func logpathsIcebergAdd(ctx context.Context, data string, ident table.Identifier, file string) error {
	cat, err := icetable.OpenCatalog(ctx, icetable.CatalogConfig{DataDir: data})
	if err != nil {
		return err
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return err
	}
	txn := tbl.NewTransaction()
	if err := txn.AddFiles(ctx, []string{file}, nil, false); err != nil {
		return err
	}
	_, err = txn.Commit(ctx)
	return err
}

func init() {
	registerHostile(
		hostileProbe{name: "logpaths/iceberg-add-outside", want: 1290, run: logpathsIceberg},
		hostileProbe{name: "logpaths/add-absolute-uri", want: 1290, run: logpathsProbe(
			func(h *hostileEnv, v *logpathsVictim) ([]map[string]any, error) {
				return []map[string]any{v.add("file://" + v.outFile)}, nil
			})},
		hostileProbe{name: "logpaths/add-absolute-path", want: 1290, run: logpathsProbe(
			func(h *hostileEnv, v *logpathsVictim) ([]map[string]any, error) {
				return []map[string]any{v.add(v.outFile)}, nil
			})},
		hostileProbe{name: "logpaths/add-outside-secret", want: 1290, run: logpathsProbe(
			func(h *hostileEnv, v *logpathsVictim) ([]map[string]any, error) {
				return []map[string]any{v.add("file://" + filepath.Join(h.outside, "secret.txt"))}, nil
			})},
		hostileProbe{name: "logpaths/add-relative-climb", want: 1290, run: logpathsProbe(
			func(h *hostileEnv, v *logpathsVictim) ([]map[string]any, error) {
				rel, err := filepath.Rel(v.table, v.outFile)
				return []map[string]any{v.add(filepath.ToSlash(rel))}, err
			})},
		hostileProbe{name: "logpaths/add-symlink", want: 1290, run: logpathsProbe(
			func(h *hostileEnv, v *logpathsVictim) ([]map[string]any, error) {
				err := os.Symlink(v.outFile, filepath.Join(v.table, "link.parquet"))
				return []map[string]any{v.add("link.parquet")}, err
			})},
		hostileProbe{name: "logpaths/add-symlinked-folder", want: 1290, run: logpathsProbe(
			func(h *hostileEnv, v *logpathsVictim) ([]map[string]any, error) {
				err := os.Symlink(filepath.Dir(v.outFile), filepath.Join(v.table, "part=1"))
				return []map[string]any{v.add("part=1/x.parquet")}, err
			})},
		hostileProbe{name: "logpaths/deletion-vector-outside", want: 1290, run: logpathsProbe(
			func(h *hostileEnv, v *logpathsVictim) ([]map[string]any, error) {
				a := v.add(v.dataFile)
				a["add"].(map[string]any)["deletionVector"] = map[string]any{"storageType": "p",
					"pathOrInlineDv": "file://" + filepath.Join(h.outside, "secret.txt"),
					"offset":         1, "sizeInBytes": 8, "cardinality": 1}
				return []map[string]any{a}, nil
			})},
		hostileProbe{name: "logpaths/remove-outside", want: 1290, run: logpathsProbe(
			func(h *hostileEnv, v *logpathsVictim) ([]map[string]any, error) {
				return []map[string]any{logpathsRemove("file://" + v.outFile)}, nil
			})},
		// file://host/path used to be reduced to /path, which dropped the
		// victim's own row.
		hostileProbe{name: "logpaths/remove-other-host", want: 1290, run: logpathsProbe(
			func(h *hostileEnv, v *logpathsVictim) ([]map[string]any, error) {
				return []map[string]any{logpathsRemove("file://elsewhere" + filepath.Join(v.table, v.dataFile))}, nil
			})},
	)
}
