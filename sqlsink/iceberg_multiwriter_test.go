package sqlsink

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakesql/lakesql/internal/icebergtest"
	"github.com/lakesql/lakesql/internal/s3test"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// Environment of the writer process TestMultiWriterHelper runs.
const (
	icemwWriterEnv = "LAKESQL_ICEMW_WRITER" // the writer id; set: run as the helper
	icemwTagEnv    = "LAKESQL_ICEMW_TAG"    // the region its rows carry: which process wrote them
	icemwBaseEnv   = "LAKESQL_ICEMW_BASE"   // the first id of its rows
	icemwEpochsEnv = "LAKESQL_ICEMW_EPOCHS" // it commits epochs 1..N
	icemwGoEnv     = "LAKESQL_ICEMW_GO"     // a file: its first epoch waits until it exists
	icemwTag       = "@icemw "              // marks its report lines
)

// icemwRows is what a writer sends in epoch e: two rows, ids base+10e and
// base+10e+1, tagged with the process.
func icemwRows(base, e int64, tag string) []row {
	return []row{
		{ID: base + 10*e, Amount: float64(e), Region: tag},
		{ID: base + 10*e + 1, Amount: float64(e) + 0.5, Region: tag},
	}
}

// TestMultiWriterHelper is the writer process of TestManyProcessesAppend
// and TestSameWriterTwoProcesses: a sink appending epochs 1..N into the
// orders table of the lake its parent hands over, through a catalog
// handle of its own on the shared SQLite file, with the production retry
// settings. Once its sink is open it says so and waits for the go file,
// so that the writers start their epochs together. It reports each epoch
// as committed or skipped.
func TestMultiWriterHelper(t *testing.T) {
	writer := os.Getenv(icemwWriterEnv)
	if writer == "" {
		t.Skip("runs as a child of TestManyProcessesAppend and TestSameWriterTwoProcesses")
	}
	l, err := icebergtest.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	tag := os.Getenv(icemwTagEnv)
	base, err1 := strconv.ParseInt(os.Getenv(icemwBaseEnv), 10, 64)
	n, err2 := strconv.ParseInt(os.Getenv(icemwEpochsEnv), 10, 64)
	if tag == "" || err1 != nil || err2 != nil {
		t.Fatalf("bad helper environment: tag %q, %v, %v", tag, err1, err2)
	}
	p := lakeProvider(t, l)
	s := openSink(t, Config{
		Name: tag, Provider: p, Table: ordersID, WriterID: writer,
		DisableAutoCompact: true, // one snapshot per epoch is what the test counts
		TempDir:            t.TempDir(), MemoryLimit: "128MB", Threads: 1,
	})
	fmt.Printf(icemwTag + "ready\n")
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(os.Getenv(icemwGoEnv)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no go file")
		}
	}
	retries := 0
	for e := int64(1); e <= n; e++ {
		res := epoch(t, s, e, batch(t, icemwRows(base, e, tag)...))
		retries += res.Retries
		if res.Skipped {
			fmt.Printf(icemwTag+"skipped %d\n", e)
		} else {
			fmt.Printf(icemwTag+"committed %d\n", e)
		}
	}
	fmt.Printf(icemwTag+"done retries=%d\n", retries)
}

// icemwWriter is one writer process to run.
type icemwWriter struct {
	id, tag string
	base    int64
}

// icemwReport is what a writer process reported.
type icemwReport struct {
	committed, skipped []int64
	summary            string
}

// runIcebergWriters starts the writers, each appending epochs 1..n into l's
// orders table, lets them begin their epochs together once all are ready,
// waits for all, and returns their reports; a writer that fails fails the
// test with its output.
func runIcebergWriters(t *testing.T, l icebergtest.Lake, n int, writers []icemwWriter) []icemwReport {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	goFile := filepath.Join(t.TempDir(), "go")
	cmds := make([]*exec.Cmd, len(writers))
	outs := make([]*syncBuffer, len(writers))
	exited := make(chan int, len(writers))
	errs := make([]error, len(writers))
	for i, w := range writers {
		cmd := exec.Command(exe, "-test.run=^TestMultiWriterHelper$", "-test.count=1", "-test.timeout=5m", "-test.v")
		cmd.Env = append(os.Environ(), l.Env()...)
		cmd.Env = append(cmd.Env, icemwWriterEnv+"="+w.id, icemwTagEnv+"="+w.tag,
			icemwBaseEnv+"="+strconv.FormatInt(w.base, 10), icemwEpochsEnv+"="+strconv.Itoa(n), icemwGoEnv+"="+goFile,
			"TMPDIR="+t.TempDir()) // a killed child's temp files stay under ours
		outs[i] = &syncBuffer{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
		go func() {
			errs[i] = cmd.Wait()
			exited <- i
		}()
	}
	// Go once every writer is ready, or one has ended (it failed: the
	// others then start and finish alone).
	for ready, early := false, false; !ready && !early; {
		select {
		case i := <-exited:
			exited <- i
			early = true
		case <-time.After(5 * time.Millisecond):
			ready = true
			for _, o := range outs {
				ready = ready && strings.Contains(o.String(), icemwTag+"ready")
			}
		}
	}
	if err := os.WriteFile(goFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for range cmds {
		<-exited
	}
	var failed []string
	for i, err := range errs {
		if err != nil {
			failed = append(failed, fmt.Sprintf("writer %s (%s): %v\n%s", writers[i].id, writers[i].tag, err, outs[i].String()))
		}
	}
	if len(failed) > 0 {
		t.Fatal(strings.Join(failed, "\n"))
	}
	reports := make([]icemwReport, len(writers))
	for i := range writers {
		r := &reports[i]
		for _, line := range strings.Split(outs[i].String(), "\n") {
			f := strings.Fields(strings.TrimPrefix(line, icemwTag))
			if !strings.HasPrefix(line, icemwTag) || len(f) != 2 {
				continue
			}
			e, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "committed":
				r.committed = append(r.committed, e)
			case "skipped":
				r.skipped = append(r.skipped, e)
			}
		}
		r.summary = strings.TrimPrefix(lastLine(outs[i].String(), icemwTag+"done"), icemwTag)
		if r.summary == "" {
			t.Fatalf("writer %s did not finish:\n%s", writers[i].id, outs[i].String())
		}
	}
	return reports
}

// icemwLakes runs f on a lake with the warehouse on the local disk and on one
// with the warehouse on a real S3 server; the catalog is the SQLite file
// on the local disk either way. With LAKESQL_ICEBERG_REST_URI set, also on
// that REST catalog (restLake).
func icemwLakes(t *testing.T, f func(t *testing.T, l icebergtest.Lake)) {
	t.Run("local", func(t *testing.T) { f(t, icebergtest.Local(t)) })
	t.Run("s3", func(t *testing.T) { f(t, icebergtest.S3(t, s3test.Start(t))) })
	t.Run("rest", func(t *testing.T) { f(t, icebergtest.REST(t, ordersID)) })
}

// checkIcebergEpochRecords checks the table's snapshots: exactly n per writer
// besides none other, each (writer, epoch) once, every writer's epochs in
// order 1..n along the ancestry, and each writer's last recorded epoch n.
func checkIcebergEpochRecords(t *testing.T, l icebergtest.Lake, writerIDs []string, n int) {
	t.Helper()
	snaps := l.Snapshots(t, ordersID)
	if want := n * len(writerIDs); len(snaps) != want {
		t.Errorf("%d snapshots after creation, want %d (one per epoch of each writer)", len(snaps), want)
	}
	next := map[string]int64{}
	for _, w := range writerIDs {
		next[w] = 1
	}
	for _, s := range snaps {
		props := s.Summary.Properties
		w, e := props[icetable.SummaryWriterID], props[icetable.SummaryEpoch]
		want, ok := next[w]
		switch {
		case !ok:
			t.Errorf("snapshot %d by unknown writer %q", s.SnapshotID, w)
		case e != strconv.FormatInt(want, 10):
			t.Errorf("snapshot %d records epoch %s of %s, want epoch %d next", s.SnapshotID, e, w, want)
		default:
			next[w]++
		}
	}
	tbl := l.Table(t, ordersID)
	for _, w := range writerIDs {
		rec, ok, err := icetable.LastEpoch(tbl.Metadata(), w)
		if err != nil || !ok || rec.Epoch != int64(n) {
			t.Errorf("writer %s: last recorded epoch %+v %v %v, want %d", w, rec, ok, err, n)
		}
	}
}

// checkNoIcebergOrphans: every Parquet file under the table is one its current
// snapshot references; nothing a writer staged was left behind.
func checkNoIcebergOrphans(t *testing.T, l icebergtest.Lake) {
	t.Helper()
	stored, live := l.StoredFiles(t, ordersID), l.LiveFiles(t, ordersID)
	if !slices.Equal(stored, live) {
		t.Errorf("%d Parquet files stored, %d referenced by the table; stored %v, referenced %v", len(stored), len(live), stored, live)
	}
}

// TestManyProcessesAppend: 4 OS processes, each with its own writer id,
// append 25 epochs each into one table through the SQLite catalog file
// they share, at the same time, with the warehouse on the local disk. Every epoch lands (none skipped), as one snapshot: 100 after the
// table's creation, each writer's epochs in order up to 25; every row is
// in the table exactly once, read back by iceberg-go and by DuckDB alike;
// no staged file is left over.
func TestManyProcessesAppend(t *testing.T) { manyProcessesAppend(t, icebergtest.Local(t)) }

// TestManyProcessesAppendS3 is TestManyProcessesAppend with the warehouse
// on a real S3 server (versitygw); the catalog stays on the local disk.
func TestManyProcessesAppendS3(t *testing.T) {
	manyProcessesAppend(t, icebergtest.S3(t, s3test.Start(t)))
}

func manyProcessesAppend(t *testing.T, l icebergtest.Lake) {
	const procs, epochs = 4, 25
	start := time.Now()
	p := lakeProvider(t, l)
	createOrders(t, p)
	var writers []icemwWriter
	var ids []string
	var want []string
	for i := range procs {
		w := icemwWriter{id: fmt.Sprintf("writer-%d", i), tag: fmt.Sprintf("w%d", i), base: int64(i+1) * 100000}
		writers, ids = append(writers, w), append(ids, w.id)
		for e := int64(1); e <= epochs; e++ {
			for _, r := range icemwRows(w.base, e, w.tag) {
				want = append(want, r.String())
			}
		}
	}
	sort.Strings(want)
	reports := runIcebergWriters(t, l, epochs, writers)
	for i, r := range reports {
		if len(r.committed) != epochs || len(r.skipped) != 0 {
			t.Errorf("writer %s committed %v, skipped %v; want all %d epochs committed", writers[i].id, r.committed, r.skipped, epochs)
		}
		t.Logf("writer %s: %s", writers[i].id, r.summary)
	}
	checkIcebergEpochRecords(t, l, ids, epochs)
	if got := l.Rows(t, ordersID); !slices.Equal(got, want) {
		t.Errorf("iceberg-go reads %d rows, want %d, each once", len(got), len(want))
	}
	if got := duckRows(t, p); !slices.Equal(got, want) {
		t.Errorf("ScanSQL reads %d rows, want %d, each once", len(got), len(want))
	}
	checkNoIcebergOrphans(t, l)
	t.Logf("%s: %d processes x %d epochs in %v", l.Name, procs, epochs, time.Since(start).Round(time.Millisecond))
}

// TestSameWriterTwoProcesses: two OS processes with the SAME writer id
// replay the same epochs into one table at the same time (a writer
// restarted while its old self still runs). Each epoch lands once: one
// process reports it committed, the other skipped; the table holds one
// snapshot per epoch, and the rows of each epoch once, as the process
// that committed it wrote them; the loser's staged files are deleted.
func TestSameWriterTwoProcesses(t *testing.T) {
	const epochs = 15
	icemwLakes(t, func(t *testing.T, l icebergtest.Lake) {
		start := time.Now()
		p := lakeProvider(t, l)
		createOrders(t, p)
		writers := []icemwWriter{{id: "same", tag: "a"}, {id: "same", tag: "b"}}
		reports := runIcebergWriters(t, l, epochs, writers)
		winner := map[int64]string{}
		for i, r := range reports {
			for _, e := range r.committed {
				if w, dup := winner[e]; dup {
					t.Errorf("epoch %d committed by both %s and %s", e, w, writers[i].tag)
				}
				winner[e] = writers[i].tag
			}
			t.Logf("process %s committed %d epochs, skipped %d; %s", writers[i].tag, len(r.committed), len(r.skipped), r.summary)
		}
		var want []string
		for e := int64(1); e <= epochs; e++ {
			n := 0
			for _, r := range reports {
				if slices.Contains(r.committed, e) != slices.Contains(r.skipped, e) {
					n++
				}
			}
			if n != 2 || winner[e] == "" {
				t.Errorf("epoch %d: reported by %d processes, committed by %q; want one to commit and the other to skip", e, n, winner[e])
				continue
			}
			for _, r := range icemwRows(0, e, winner[e]) {
				want = append(want, r.String())
			}
		}
		sort.Strings(want)
		checkIcebergEpochRecords(t, l, []string{"same"}, epochs)
		if got := l.Rows(t, ordersID); !slices.Equal(got, want) {
			t.Errorf("iceberg-go reads %q, want each epoch's rows once, as its committer wrote them: %q", got, want)
		}
		if got := duckRows(t, p); !slices.Equal(got, want) {
			t.Errorf("ScanSQL reads %q, want %q", got, want)
		}
		checkNoIcebergOrphans(t, l)
		t.Logf("%s: %v", l.Name, time.Since(start).Round(time.Millisecond))
	})
}

// Environment of the writer process TestProcessHelper runs.
const (
	helperEnv = "LAKESQL_ICEBERG_HELPER" // the writer id; set: run as helper
	dirEnv    = "LAKESQL_ICEBERG_DIR"
	epochsEnv = "LAKESQL_ICEBERG_EPOCHS"
)

// TestProcessHelper is the writer process of TestTwoProcessesAppend: a
// sink appending epochs 1..N, each a single row, through the SQLite
// catalog shared with the other process.
func TestProcessHelper(t *testing.T) {
	writer := os.Getenv(helperEnv)
	if writer == "" {
		t.Skip("runs as a child of TestTwoProcessesAppend")
	}
	dir := os.Getenv(dirEnv)
	n, _ := strconv.Atoi(os.Getenv(epochsEnv))
	p := openProvider(t, dir)
	cfg := sinkConfig(t, p, writer)
	cfg.Schema = nil
	s := openSink(t, cfg)
	id := int64(1000)
	if writer == "b" {
		id = 2000
	}
	for e := int64(1); e <= int64(n); e++ {
		if res := epoch(t, s, e, batch(t, row{ID: id + e, Region: writer})); res.Skipped {
			t.Fatalf("epoch %d skipped", e)
		}
	}
	fmt.Printf("@iceberg %s retries=%d\n", writer, s.Metrics().Retries)
}

// TestTwoProcessesAppend: two OS processes append to one table through
// the SQLite catalog at the same time; both succeed through the retry
// loop, and every epoch of each is one snapshot.
func TestTwoProcessesAppend(t *testing.T) {
	const epochs = 15
	dir := t.TempDir()
	createOrders(t, openProvider(t, dir))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	outs := make([]*syncBuffer, 2)
	for i, w := range []string{"a", "b"} {
		cmd := exec.Command(exe, "-test.run=^TestProcessHelper$", "-test.count=1", "-test.timeout=5m", "-test.v")
		cmd.Env = append(os.Environ(), helperEnv+"="+w, dirEnv+"="+dir, epochsEnv+"="+strconv.Itoa(epochs))
		outs[i] = &syncBuffer{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer %d: %v\n%s", i, err, outs[i].String())
		}
		t.Logf("writer %d: %s", i, lastLine(outs[i].String(), "@iceberg"))
	}
	if got := len(icebergRows(t, dir)); got != 2*epochs {
		t.Fatalf("%d rows, want %d", got, 2*epochs)
	}
	snaps := snapshots(t, dir, ordersID)
	if len(snaps) != 2*epochs {
		t.Fatalf("%d snapshots, want %d", len(snaps), 2*epochs)
	}
	seen := map[string]bool{}
	for _, s := range snaps {
		k := s.Summary.Properties[icetable.SummaryWriterID] + "/" + s.Summary.Properties[icetable.SummaryEpoch]
		if seen[k] {
			t.Fatalf("epoch %s committed twice", k)
		}
		seen[k] = true
	}
}
