package sqlsink

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// ingestSchema is the row shape of the memory test and the ingest
// benchmarks: (id BIGINT NOT NULL, amount DOUBLE, region VARCHAR with 16
// distinct values, ts TIMESTAMP[us, UTC]).
var ingestSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
}, nil)

// ingestRegions are the 16 region values, 2 to 12 bytes long.
var ingestRegions = []string{
	"eu-west", "eu-central", "eu-north", "eu-south",
	"us-east", "us-west", "us-central", "us-gov",
	"ap-south", "ap-northeast", "ap-southeast", "ap-east",
	"sa-east", "ca-central", "me-south", "af",
}

// ingestBatchRows is the batch size the memory test and benchmarks write.
const ingestBatchRows = 64 << 10

// rowGen builds deterministic ingest batches with one reused record
// builder (and so one allocator).
type rowGen struct {
	b    *array.RecordBuilder
	next int64
}

func newRowGen(mem memory.Allocator) *rowGen {
	return &rowGen{b: array.NewRecordBuilder(mem, ingestSchema)}
}

// batch returns the next n rows; the caller releases it.
func (g *rowGen) batch(n int) arrow.RecordBatch {
	ids := g.b.Field(0).(*array.Int64Builder)
	amounts := g.b.Field(1).(*array.Float64Builder)
	regions := g.b.Field(2).(*array.StringBuilder)
	tss := g.b.Field(3).(*array.TimestampBuilder)
	ids.Reserve(n)
	amounts.Reserve(n)
	regions.Reserve(n)
	regions.ReserveData(n * 8)
	tss.Reserve(n)
	const base = int64(1_767_225_600_000_000) // 2026-01-01T00:00:00Z in µs
	for i := 0; i < n; i++ {
		id := g.next + int64(i)
		ids.UnsafeAppend(id)
		amounts.UnsafeAppend(float64(id%100_000) / 100)
		regions.Append(ingestRegions[id%int64(len(ingestRegions))])
		tss.UnsafeAppend(arrow.Timestamp(base + id*1000))
	}
	g.next += int64(n)
	return g.b.NewRecordBatch()
}

func (g *rowGen) release() { g.b.Release() }

// Environment of the memory test's child process.
const (
	memChildEnv  = "LAKESQL_MEMORY_CHILD_DIR" // the table directory the child writes
	memChildRows = "LAKESQL_MEMORY_CHILD_ROWS"
	memHWMPrefix = "lakesql-memory-child: VmHWM kB "
)

const (
	memRows       = 20_000_000
	memLimitMiB   = 1536
	memSinkMemory = "512MB"
)

// TestMemoryOneLargeEpoch writes 20M rows in one append epoch through the
// sink, in a child process, and checks that the child's peak RSS stays
// below 1.5 GiB: the buffer must flush and spill rather than hold the
// epoch in memory.
func TestMemoryOneLargeEpoch(t *testing.T) {
	if os.Getenv(memChildEnv) != "" {
		t.Skip("running as the child of TestMemoryOneLargeEpoch")
	}
	if testing.Short() {
		t.Skip("writes 20M rows in a child process; skipped in -short mode")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "orders")
	start := time.Now()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryChild$", "-test.v", "-test.count=1", "-test.timeout=15m")
	cmd.Env = append(os.Environ(), memChildEnv+"="+dir, memChildRows+"="+strconv.Itoa(memRows), "TMPDIR="+root)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("child failed after %s: %v\n%s", elapsed.Round(time.Millisecond), err, out.String())
	}
	if !strings.Contains(out.String(), "--- PASS: TestMemoryChild") {
		t.Fatalf("child did not run TestMemoryChild:\n%s", out.String())
	}
	// Maxrss is the child's peak RSS in KiB on Linux; the child also
	// reports its own VmHWM just before it exits. Take the larger.
	peakKiB := int64(0)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peakKiB = int64(ru.Maxrss)
	}
	hwm := int64(-1)
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	for sc.Scan() {
		l := sc.Text()
		if v, ok := strings.CutPrefix(l, memHWMPrefix); ok {
			hwm, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		} else if strings.Contains(l, "child: ") {
			t.Log(strings.TrimSpace(l))
		}
	}
	if hwm < 0 {
		t.Errorf("child did not report VmHWM:\n%s", out.String())
	}
	peakKiB = max(peakKiB, hwm)
	peakMiB := peakKiB / 1024
	line := fmt.Sprintf("memory: %d rows in one epoch, peak RSS %d MiB (limit %d MiB; sink memory_limit %s; child took %s)",
		memRows, peakMiB, memLimitMiB, memSinkMemory, elapsed.Round(time.Second))
	t.Log(line)
	fmt.Println(line)
	if peakMiB >= memLimitMiB {
		t.Errorf("peak RSS %d MiB, want < %d MiB\nchild output:\n%s", peakMiB, memLimitMiB, out.String())
	}

	// The committed table holds every row, counted from the add actions'
	// statistics of the latest snapshot.
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := delta.NewTable(store).Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, a := range snap.Files() {
		n, ok := a.NumRecords()
		if !ok {
			t.Fatalf("file %s has no numRecords statistic", a.Path)
		}
		rows += n
	}
	if rows != memRows || snap.Version != 1 {
		t.Fatalf("table at version %d holds %d rows in %d files, want version 1 with %d rows", snap.Version, rows, len(snap.Files()), memRows)
	}
	t.Logf("table: version %d, %d files, %d rows", snap.Version, len(snap.Files()), rows)
}

// TestMemoryChild is the child half of TestMemoryOneLargeEpoch; it runs
// only when the parent sets its environment.
func TestMemoryChild(t *testing.T) {
	dir := os.Getenv(memChildEnv)
	if dir == "" {
		t.Skip("child of TestMemoryOneLargeEpoch; runs only in that test's child process")
	}
	total, err := strconv.Atoi(os.Getenv(memChildRows))
	if err != nil || total <= 0 {
		t.Fatalf("bad %s: %q", memChildRows, os.Getenv(memChildRows))
	}
	e := newEnv(t)
	e.dir = dir
	cfg := e.config("memory")
	cfg.Table = catalogadapter.TableIdent{Name: dir}
	cfg.Schema = ingestSchema
	cfg.MemoryLimit = memSinkMemory
	s := e.open(cfg)

	ctx := context.Background()
	start := time.Now()
	if err := s.BeginEpoch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	gen := newRowGen(memory.NewGoAllocator())
	defer gen.release()
	for written := 0; written < total; {
		n := min(ingestBatchRows, total-written)
		rec := gen.batch(n)
		err := s.Write(ctx, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		written += n
	}
	writeDone := time.Since(start)
	if err := s.PreCommit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	res, err := s.CommitEpoch(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != int64(total) {
		t.Errorf("commit result %+v, want %d rows", res, total)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("child: %d rows, writes %s, total %s, %d files, version %d, %d flushes",
		total, writeDone.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), res.Files, res.Version, s.Metrics().Flushes)
	hwm, err := vmHWM()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%s%d\n", memHWMPrefix, hwm)
}

// vmHWM reads this process's peak resident set size (KiB) from /proc.
func vmHWM() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}
