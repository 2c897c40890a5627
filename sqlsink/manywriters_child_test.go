package sqlsink

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/internal/storageloc"
	"github.com/lakesql/lakesql/tableformat/objectstore"
)

// The writer process of the many-writers tests (manywriters_test.go): the
// test binary re-executed with mwChildEnv set runs TestManyWritersChild,
// which opens one sink on the shared table, waits at a barrier, commits its
// epochs and reports each outcome on stdout as a JSON line after mwTag.

// Environment of a writer process.
const (
	mwChildEnv    = "LAKESQL_MW_CHILD"    // "1" runs TestManyWritersChild
	mwTableEnv    = "LAKESQL_MW_TABLE"    // the table location: a directory or s3://bucket/prefix
	mwEndpointEnv = "LAKESQL_MW_ENDPOINT" // the S3 endpoint (empty: local disk); credentials come as AWS_*
	mwWriterEnv   = "LAKESQL_MW_WRITER"   // the writer id
	mwScenarioEnv = "LAKESQL_MW_SCENARIO" // mwAppend, mwReplay or mwUpsert
	mwEpochsEnv   = "LAKESQL_MW_EPOCHS"   // epochs 1..N
	mwDirEnv      = "LAKESQL_MW_DIR"      // the barrier files and the process's scratch space
	mwRetriesEnv  = "LAKESQL_MW_RETRIES"  // deltalake.Options.MaxRetries (0: the default)
	mwProcsEnv    = "LAKESQL_MW_PROCS"    // how many writer processes run (for the lockstep barriers)
	mwTag         = "@mw "                // marks the report lines
	mwGoFile      = "go"                  // the parent creates it when every writer is ready
)

// Scenarios.
const (
	mwAppend = "append" // own writer id, rows unique per writer and epoch
	mwReplay = "replay" // shared writer id, identical rows in every process
	mwUpsert = "upsert" // upsert mode, keys overlapping between writers
)

// mwReport is one line a writer process prints.
type mwReport struct {
	Kind    string `json:"kind"` // "epoch", "done" or "error"
	Writer  string `json:"writer"`
	Epoch   int64  `json:"epoch,omitempty"`
	Skipped bool   `json:"skipped,omitempty"`
	Version int64  `json:"version,omitempty"`
	Rows    int64  `json:"rows,omitempty"`
	Retries int    `json:"retries,omitempty"`
	// At is when the commit returned (unix nanoseconds).
	At int64 `json:"at,omitempty"`
	// Sink metrics, in the "done" line.
	Conflicts int64  `json:"conflicts,omitempty"`
	Err       string `json:"err,omitempty"`
}

func mwPrint(r mwReport) {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	fmt.Println(mwTag + string(b))
}

// mwFail reports an error where the parent looks, and exits.
func mwFail(writer, format string, args ...any) {
	mwPrint(mwReport{Kind: "error", Writer: writer, Err: fmt.Sprintf(format, args...)})
	os.Exit(3)
}

// mwWriterIndex is the number in a writer id ("w3" is 3, "ub" is 1).
func mwWriterIndex(writer string) int64 {
	switch writer {
	case "ua":
		return 0
	case "ub":
		return 1
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(writer, "w"), 10, 64)
	if err != nil {
		panic(fmt.Sprintf("writer id %q", writer))
	}
	return n
}

// mwLockstep tells whether the writer processes meet at a barrier after
// PreCommit of epoch e, so that their commits of it start together, each
// prepared against the same table version: a race that free-running
// processes would only hit by chance.
func mwLockstep(scenario string, e int64) bool {
	switch scenario {
	case mwReplay:
		return e%2 == 0
	case mwUpsert:
		// Both merges of epoch 1 read the empty table; the epochs after
		// run free, as independent writers would.
		return e == 1
	}
	return false
}

// mwWait polls until n files match pattern in dir.
func mwWait(writer, dir, pattern string, n int) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			mwFail(writer, "%v", err)
		}
		if len(got) >= n {
			return
		}
		if time.Now().After(deadline) {
			mwFail(writer, "gave up waiting for %d files %s (%d there)", n, pattern, len(got))
		}
		time.Sleep(time.Millisecond)
	}
}

// mwRows is the deterministic upstream: the rows writer sends in epoch e.
// The parent computes the same rows to know what the table must hold.
func mwRows(scenario, writer string, e int64) []row {
	var out []row
	switch scenario {
	case mwAppend:
		w := mwWriterIndex(writer)
		for i := int64(0); i < 3; i++ {
			out = append(out, row{ID: w*1_000_000 + e*100 + i, Amount: float64(e), Region: writer})
		}
	case mwReplay:
		for i := int64(0); i <= e%3+1; i++ {
			out = append(out, row{ID: e*100 + i, Amount: float64(e) + float64(i)/10, Region: "r"})
		}
	case mwUpsert:
		// Both writers touch three quarters of ids 0..99 in every epoch,
		// with values naming writer and epoch, and delete one id; which
		// value an id ends with depends on the order the epochs commit in.
		w := mwWriterIndex(writer)
		del := (e*17 + w*41) % 100
		for i := int64(0); i < 100; i++ {
			switch {
			case i == del:
				out = append(out, row{Op: "D", ID: i})
			case (i+e+w)%4 == 0:
			default:
				out = append(out, row{Op: "U", ID: i, Amount: float64(w*1000+e) + float64(i)/1000, Region: writer})
			}
		}
	default:
		panic("scenario " + scenario)
	}
	return out
}

// mwOpenProvider is a Delta provider over its own DuckDB, on local disk or
// on the S3 endpoint, as a separate lakesql process would have.
func mwOpenProvider(endpoint, cacheDir string, maxRetries int) (*deltalake.Provider, *sql.DB, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, nil, err
	}
	if _, err := db.Exec("SET TimeZone = 'UTC'"); err != nil {
		db.Close()
		return nil, nil, err
	}
	opts := deltalake.Options{MaxRetries: maxRetries}
	if endpoint != "" {
		// Region and credentials come from the environment (AWS_*).
		so, err := objectstore.FromProperties(map[string]string{
			storageloc.KeyEndpoint:  endpoint,
			storageloc.KeyPathStyle: "true",
		})
		if err != nil {
			db.Close()
			return nil, nil, err
		}
		so.CacheDir = cacheDir
		opts.ObjectStorage = so
	}
	return deltalake.New(db, opts), db, nil
}

// TestManyWritersChild is the writer process of the many-writers tests; it
// does nothing in an ordinary test run.
func TestManyWritersChild(t *testing.T) {
	if os.Getenv(mwChildEnv) != "1" {
		t.Skip("helper process of the many-writers tests")
	}
	writer, scenario, loc, dir := os.Getenv(mwWriterEnv), os.Getenv(mwScenarioEnv), os.Getenv(mwTableEnv), os.Getenv(mwDirEnv)
	n, err1 := strconv.ParseInt(os.Getenv(mwEpochsEnv), 10, 64)
	retries, err2 := strconv.Atoi(os.Getenv(mwRetriesEnv))
	procs, err3 := strconv.Atoi(os.Getenv(mwProcsEnv))
	if writer == "" || loc == "" || dir == "" || err1 != nil || err2 != nil || err3 != nil {
		mwFail(writer, "bad environment: writer %q, table %q, dir %q, %v, %v, %v", writer, loc, dir, err1, err2, err3)
	}
	pid := strconv.Itoa(os.Getpid())
	scratch := filepath.Join(dir, "scratch-"+writer+"-"+pid)
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		mwFail(writer, "%v", err)
	}
	p, db, err := mwOpenProvider(os.Getenv(mwEndpointEnv), filepath.Join(scratch, "cache"), retries)
	if err != nil {
		mwFail(writer, "provider: %v", err)
	}
	defer db.Close()
	defer p.Close()
	cfg := Config{
		Name: writer, WriterID: writer, Provider: p,
		Table:  catalogadapter.TableIdent{Name: loc},
		Schema: orderSchema, TempDir: scratch, MemoryLimit: "256MB", Threads: 1,
		DisableAutoCompact: true, // the test pins a version per epoch
	}
	if scenario == mwUpsert {
		cfg.Mode, cfg.Key = ModeUpsert, []string{"id"}
	}
	s, err := New(cfg)
	if err != nil {
		mwFail(writer, "new sink: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Open(ctx); err != nil {
		mwFail(writer, "open: %v", err)
	}

	// The barrier: say ready, wait for the parent's go.
	if err := os.WriteFile(filepath.Join(dir, "ready-"+writer+"-"+pid), nil, 0o644); err != nil {
		mwFail(writer, "%v", err)
	}
	mwWait(writer, dir, mwGoFile, 1)

	for e := int64(1); e <= n; e++ {
		if err := s.BeginEpoch(ctx, e); err != nil {
			mwFail(writer, "begin %d: %v", e, err)
		}
		if err := s.Write(ctx, batch(t, mwRows(scenario, writer, e)...)); err != nil {
			mwFail(writer, "write %d: %v", e, err)
		}
		if err := s.PreCommit(ctx, e); err != nil {
			mwFail(writer, "precommit %d: %v", e, err)
		}
		if mwLockstep(scenario, e) {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("at-%d-%s", e, pid)), nil, 0o644); err != nil {
				mwFail(writer, "%v", err)
			}
			mwWait(writer, dir, fmt.Sprintf("at-%d-*", e), procs)
		}
		res, err := s.CommitEpoch(ctx, e)
		if err != nil {
			mwFail(writer, "commit %d: %v", e, err)
		}
		mwPrint(mwReport{Kind: "epoch", Writer: writer, Epoch: e, Skipped: res.Skipped, Version: res.Version,
			Rows: res.Rows, Retries: res.Retries, At: time.Now().UnixNano()})
	}
	m := s.Metrics()
	mwPrint(mwReport{Kind: "done", Writer: writer, Retries: int(m.Retries), Conflicts: m.Conflicts})
}
