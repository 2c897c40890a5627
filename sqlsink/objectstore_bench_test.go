package sqlsink

// Object storage against local disk, through the whole sink: the same
// epochs into a Delta table on the local file system and into one on a
// real S3 server (versitygw, internal/s3test, serving a directory of the
// same disk over loopback HTTP). Both sides run in one process, interleaved
// (blocks of epochs, or whole runs, A B A B), and the figures that matter
// are the ratios of one run: on 2 shared cores absolute times drift.
// Nothing here asserts on timing.
//
//	go test -tags=duckdb_arrow -run '^$' -bench 'ObjectStore' -benchtime 1x ./sqlsink
//	LAKESQL_BENCH_ROWS=10000000 go test -tags=duckdb_arrow -run '^$' -bench 'ObjectStoreIngest' -benchtime 1x ./sqlsink
//
// The server is bin/versitygw (`make bin/versitygw`). Benchmarks run only
// under -bench, so `make test` never starts them.
//
// BenchmarkObjectStoreCommitLatency: single-row epochs (BeginEpoch, a
// one-row Write, PreCommit, CommitEpoch) on one open sink per side, the
// table growing by a file per epoch and checkpointed every 10 versions
// (the default), as a streaming writer with a tiny epoch would do.
// LAKESQL_BENCH_EPOCHS epochs per side (default 200), in blocks of 50
// alternating between the sides, after 5 untimed warm-up epochs per side.
// Reports p50/p99 of the epoch latency in ms and epochs/s (epochs over the
// sum of their latencies) per side, s3-vs-local (s3 epochs/s over local
// epochs/s) and s3-vs-local-paired (the median of that ratio per pair of
// blocks); the log splits the latency into PreCommit (DuckDB's COPY of
// the row to a Parquet file, plus its upload on S3) and CommitEpoch.
//
// BenchmarkObjectStoreIngest: LAKESQL_BENCH_ROWS rows (default 1M so that
// a plain run is quick; the headline figure is 10M) in one epoch, into a
// fresh table per run: New, Open (creates the table), BeginEpoch, one
// Write per 64k-row batch, PreCommit, CommitEpoch, Close, all timed, as
// BenchmarkIngestArrow does. LAKESQL_BENCH_RUNS runs per side (default
// 3), interleaved. Reports the median rows/s per side, the ratio of the
// medians and the median of the per-pair ratios (s3 over local).
//
// On the S3 side every storage call the Delta provider makes is counted
// and timed (deltalake.Options.WrapStorage), by operation and kind of
// key, and so are the HTTP connections their requests dial or reuse; the
// per-epoch breakdown goes to the benchmark log, so wall time by request
// is in every run. (versitygw as internal/s3test starts it runs without
// --keep-alive and closes every connection: each request dials, which real
// S3 endpoints do not make clients do.) The epochs run under the pprof label side=local
// or side=s3, to tell the sides apart in a CPU profile:
//
//	go test -tags=duckdb_arrow -run '^$' -bench 'ObjectStoreCommitLatency' -benchtime 1x -cpuprofile cpu.out ./sqlsink
//	go tool pprof -tagfocus side=s3 -top sqlsink.test cpu.out
//
// (the profile shows this process only: versitygw's own CPU is not in it,
// and DuckDB's C++ threads show, if at all, as cgo calls.)

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/internal/s3test"
	"github.com/lakesql/lakesql/internal/storageloc"
	"github.com/lakesql/lakesql/tableformat/delta"
	"github.com/lakesql/lakesql/tableformat/objectstore"
)

const (
	osBenchEpochs    = 200       // epochs per side, LAKESQL_BENCH_EPOCHS
	osBenchBlock     = 50        // epochs per side before switching sides
	osBenchWarmUp    = 5         // untimed epochs per side first
	osBenchRows      = 1_000_000 // rows per ingest run, LAKESQL_BENCH_ROWS (headline: 10M)
	osBenchIngestRun = 3         // ingest runs per side, LAKESQL_BENCH_RUNS
)

// osEnvInt reads a positive integer from the environment, or returns def.
func osEnvInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.ReplaceAll(v, "_", ""))
	if err != nil || n < 1 {
		b.Fatalf("bad %s %q: want a positive integer", name, v)
	}
	return n
}

// osSide is one storage under test: where its tables go and how its
// provider reaches them.
type osSide struct {
	name string
	// table returns a fresh table location; run tells runs apart.
	table func(run string) string
	// storage is the provider's object storage options (zero for local).
	storage func(cacheDir string) objectstore.Options
	// cleanup removes what a table left on disk (data, server files).
	cleanup func(loc string)
	ops     *osOpStats // non-nil: storage calls are counted
}

// osSides are the two sides: local disk, and versitygw started for b.
func osSides(b *testing.B) (local, s3 *osSide) {
	srv := s3test.Start(b)
	so, err := objectstore.FromProperties(srv.Options())
	if err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	stamp := time.Now().UnixNano()
	local = &osSide{
		name:    "local",
		table:   func(run string) string { return filepath.Join(root, run, "orders") },
		storage: func(string) objectstore.Options { return objectstore.Options{} },
		cleanup: func(loc string) { os.RemoveAll(filepath.Dir(loc)) },
	}
	s3 = &osSide{
		name: "s3",
		table: func(run string) string {
			return srv.URL(fmt.Sprintf("bench-%d/%s/orders", stamp, run))
		},
		storage: func(cacheDir string) objectstore.Options {
			o := so
			o.CacheDir = cacheDir
			return o
		},
		cleanup: func(loc string) {
			// The posix backend keeps bucket B's key K at DataDir/B/K.
			l, err := storageloc.ParseLocation(loc)
			if err == nil && l.Prefix != "" {
				os.RemoveAll(filepath.Join(srv.DataDir, l.Bucket, filepath.FromSlash(filepath.Dir(l.Prefix))))
			}
		},
		ops: newOSOpStats(),
	}
	return local, s3
}

// osSink is one open sink on one side, with its provider's handles.
type osSink struct {
	*Sink
	db       *sql.DB
	provider *deltalake.Provider
	loc      string
	cacheDir string
}

// openOSSink creates the table at a fresh location of side and opens a sink
// on it. The sink's writer id is fixed, epochs start at 1.
func openOSSink(ctx context.Context, side *osSide, run, tmp string) (*osSink, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	cacheDir := filepath.Join(tmp, "cache-"+side.name+"-"+run)
	opts := deltalake.Options{ObjectStorage: side.storage(cacheDir)}
	if side.ops != nil {
		opts.WrapStorage = side.ops.wrap
	}
	p := deltalake.New(db, opts)
	loc := side.table(run)
	s, err := New(Config{
		Name: "osbench", Provider: p,
		Table:   catalogadapter.TableIdent{Name: loc},
		Schema:  ingestSchema,
		TempDir: filepath.Join(tmp, "spill-"+side.name+"-"+run),
	})
	if err == nil {
		err = s.Open(ctx)
	}
	if err != nil {
		p.Close()
		db.Close()
		return nil, err
	}
	return &osSink{Sink: s, db: db, provider: p, loc: loc, cacheDir: cacheDir}, nil
}

func (s *osSink) close() error {
	return errors.Join(s.Sink.Close(), s.provider.Close(), s.db.Close())
}

// epoch writes recs as epoch e and returns how long staging (PreCommit)
// and committing took, and the whole epoch.
func (s *osSink) epoch(ctx context.Context, e int64, recs []arrow.RecordBatch) (total, stage, commit time.Duration, err error) {
	t0 := time.Now()
	if err = s.BeginEpoch(ctx, e); err != nil {
		return
	}
	var want int64
	for _, r := range recs {
		if err = s.Write(ctx, r); err != nil {
			return
		}
		want += r.NumRows()
	}
	t1 := time.Now()
	if err = s.PreCommit(ctx, e); err != nil {
		return
	}
	t2 := time.Now()
	res, err := s.CommitEpoch(ctx, e)
	if err != nil {
		return
	}
	t3 := time.Now()
	if res.Skipped || res.Rows != want {
		err = fmt.Errorf("epoch %d: commit result %+v, want %d rows committed", e, res, want)
	}
	return t3.Sub(t0), t2.Sub(t1), t3.Sub(t2), err
}

func BenchmarkObjectStoreCommitLatency(b *testing.B) {
	ctx := context.Background()
	epochs := osEnvInt(b, "LAKESQL_BENCH_EPOCHS", osBenchEpochs)
	local, s3 := osSides(b)
	tmp := b.TempDir()
	type state struct {
		side                *osSide
		sink                *osSink
		gen                 *rowGen
		next                int64
		lat, stage, commit  []time.Duration
		blocks              []time.Duration // the sum of each timed block's epochs
		opsBefore, opsAfter map[string]osOpStat
	}
	var sides []*state
	for _, side := range []*osSide{local, s3} {
		s, err := openOSSink(ctx, side, "commit", tmp)
		if err != nil {
			b.Fatalf("%s: %v", side.name, err)
		}
		st := &state{side: side, sink: s, gen: newRowGen(memory.NewGoAllocator())}
		b.Cleanup(func() {
			st.gen.release()
			if err := s.close(); err != nil {
				b.Errorf("%s: close: %v", side.name, err)
			}
		})
		sides = append(sides, st)
	}
	run := func(st *state, n int, timed bool) {
		if timed {
			st.blocks = append(st.blocks, 0)
		}
		for range n {
			st.next++
			rec := st.gen.batch(1)
			var d, stage, commit time.Duration
			var err error
			pprof.Do(ctx, pprof.Labels("side", st.side.name), func(ctx context.Context) {
				d, stage, commit, err = st.sink.epoch(ctx, st.next, []arrow.RecordBatch{rec})
			})
			rec.Release()
			if err != nil {
				b.Fatalf("%s: %v", st.side.name, err)
			}
			if timed {
				st.lat, st.stage, st.commit = append(st.lat, d), append(st.stage, stage), append(st.commit, commit)
				st.blocks[len(st.blocks)-1] += d
			}
		}
	}
	for _, st := range sides {
		run(st, osBenchWarmUp, false)
	}
	load0 := loadAvg()
	b.ResetTimer()
	for _, st := range sides {
		st.opsBefore = st.side.ops.snapshot()
	}
	for range b.N {
		for done := 0; done < epochs; done += osBenchBlock {
			for _, st := range sides {
				run(st, min(osBenchBlock, epochs-done), true)
			}
		}
	}
	b.StopTimer()
	for _, st := range sides {
		st.opsAfter = st.side.ops.snapshot()
	}
	b.Logf("load average before: %s, after: %s; %d epochs per side in blocks of %d, after %d warm-up epochs",
		load0, loadAvg(), len(sides[0].lat), osBenchBlock, osBenchWarmUp)
	rate := map[string]float64{}
	for _, st := range sides {
		var sum time.Duration
		for _, d := range st.lat {
			sum += d
		}
		n := st.side.name
		rate[n] = float64(len(st.lat)) / sum.Seconds()
		b.ReportMetric(osMs(osQuantile(st.lat, .50)), n+"-p50-ms")
		b.ReportMetric(osMs(osQuantile(st.lat, .99)), n+"-p99-ms")
		b.ReportMetric(rate[n], n+"-epochs/s")
		b.Logf("%-5s epoch p50 %.2fms p99 %.2fms max %.2fms, %.1f epochs/s; PreCommit (DuckDB COPY + upload) p50 %.2fms p99 %.2fms; CommitEpoch p50 %.2fms p99 %.2fms",
			n, osMs(osQuantile(st.lat, .5)), osMs(osQuantile(st.lat, .99)), osMs(osQuantile(st.lat, 1)), rate[n],
			osMs(osQuantile(st.stage, .5)), osMs(osQuantile(st.stage, .99)), osMs(osQuantile(st.commit, .5)), osMs(osQuantile(st.commit, .99)))
		if st.side.ops != nil {
			osLogOps(b, n, "epoch", osDiffOps(st.opsAfter, st.opsBefore), len(st.lat), sum)
			b.ReportMetric(float64(osCountOps(osDiffOps(st.opsAfter, st.opsBefore)))/float64(len(st.lat)), n+"-requests/epoch")
		}
	}
	b.ReportMetric(rate["s3"]/rate["local"], "s3-vs-local")
	// The same ratio per pair of blocks (same epoch count on both sides),
	// the steadier figure when the machine's load moves during the run.
	var paired []float64
	for i := range sides[0].blocks {
		paired = append(paired, sides[0].blocks[i].Seconds()/sides[1].blocks[i].Seconds())
	}
	b.ReportMetric(median(paired), "s3-vs-local-paired")
	b.ReportMetric(0, "ns/op") // one op is the whole interleaved run: meaningless
}

func BenchmarkObjectStoreIngest(b *testing.B) {
	ctx := context.Background()
	rows := osEnvInt(b, "LAKESQL_BENCH_ROWS", osBenchRows)
	runs := osEnvInt(b, "LAKESQL_BENCH_RUNS", osBenchIngestRun)
	recs := ingestBatches(rows)
	defer releaseAll(recs)
	local, s3 := osSides(b)
	tmp := b.TempDir()
	one := func(side *osSide, run string, recs []arrow.RecordBatch) (ph osPhases, err error) {
		pprof.Do(ctx, pprof.Labels("side", side.name), func(ctx context.Context) {
			ph, err = osIngest(ctx, side, run, tmp, recs)
		})
		return ph, err
	}
	rateOf := func(ph osPhases) float64 { return float64(rows) / ph.total.Seconds() }
	// An untimed warm-up pair of one batch each: the first sink of a
	// process pays one-time costs (DuckDB's start, the first table).
	for _, side := range []*osSide{local, s3} {
		if _, err := one(side, "warmup", recs[:1]); err != nil {
			b.Fatalf("%s warm-up: %v", side.name, err)
		}
	}
	var localRates, s3Rates, ratios []float64
	var s3Total time.Duration
	opsBefore := s3.ops.snapshot()
	load0 := loadAvg()
	b.ResetTimer()
	for i := range b.N {
		for r := range runs {
			run := fmt.Sprintf("ingest%d-%d", i, r)
			lp, err := one(local, run, recs)
			if err != nil {
				b.Fatalf("local: %v", err)
			}
			sp, err := one(s3, run, recs)
			if err != nil {
				b.Fatalf("s3: %v", err)
			}
			s3Total += sp.total
			localRates, s3Rates = append(localRates, rateOf(lp)), append(s3Rates, rateOf(sp))
			ratios = append(ratios, rateOf(sp)/rateOf(lp))
			b.Logf("run %d: local %.2fs %.0f rows/s (open %s, writes incl. in-write flushes %s, PreCommit %s, CommitEpoch %s) | s3 %.2fs %.0f rows/s (open %s, writes %s, PreCommit %s, CommitEpoch %s)",
				r+1, lp.total.Seconds(), rateOf(lp), ms(lp.open), ms(lp.writes), ms(lp.precommit), ms(lp.commit),
				sp.total.Seconds(), rateOf(sp), ms(sp.open), ms(sp.writes), ms(sp.precommit), ms(sp.commit))
		}
	}
	b.StopTimer()
	opsAfter := s3.ops.snapshot()
	b.Logf("load average before: %s, after: %s; %d rows per run, %d runs per side, interleaved local, s3, ...",
		load0, loadAvg(), rows, len(localRates))
	osLogOps(b, "s3", "run (open, create, one epoch, close)", osDiffOps(opsAfter, opsBefore), len(s3Rates), s3Total)
	ml, ms3 := median(localRates), median(s3Rates)
	b.ReportMetric(ml, "local-rows/s")
	b.ReportMetric(ms3, "s3-rows/s")
	b.ReportMetric(ms3/ml, "s3-vs-local")
	b.ReportMetric(median(ratios), "s3-vs-local-paired")
	b.ReportMetric(0, "ns/op")
}

// osPhases is where one ingest run's time went.
type osPhases struct{ total, open, writes, precommit, commit time.Duration }

// osIngest writes recs as one epoch into a fresh table of side, timing
// the sink's whole life (New to Close), then deletes the table.
func osIngest(ctx context.Context, side *osSide, run, tmp string, recs []arrow.RecordBatch) (osPhases, error) {
	var ph osPhases
	t0 := time.Now()
	s, err := openOSSink(ctx, side, run, tmp)
	if err != nil {
		return ph, err
	}
	ph.open = time.Since(t0)
	// epoch's stage time is PreCommit alone: in-write flushes (every 4M
	// rows by default) count as writes.
	var total time.Duration
	total, ph.precommit, ph.commit, err = s.epoch(ctx, 1, recs)
	ph.writes = total - ph.precommit - ph.commit
	if cerr := s.close(); err == nil {
		err = cerr
	}
	ph.total = time.Since(t0)
	side.cleanup(s.loc)
	os.RemoveAll(s.cacheDir)
	return ph, err
}

// osQuantile is the nearest-rank q-quantile of ds (q=1: the maximum).
func osQuantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*q+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func osMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// osOpStat is the count and time of one kind of storage call.
type osOpStat struct {
	n     int
	d     time.Duration
	bytes int64 // uploaded, for UPLOAD
}

// Pseudo-kinds of a snapshot: HTTP connections dialed and reused.
const (
	osDials  = "new TCP connections"
	osReuses = "reused connections"
)

// osOpStats counts a provider's storage calls by operation and kind of key.
type osOpStats struct {
	mu sync.Mutex
	m  map[string]osOpStat
	// dials and reuses count the HTTP connections the calls' requests got:
	// new ones, and kept-alive ones.
	dials, reuses atomic.Int64
}

// trace makes the requests made under ctx count their connections.
func (o *osOpStats) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if i.Reused {
			o.reuses.Add(1)
		} else {
			o.dials.Add(1)
		}
	}})
}

func newOSOpStats() *osOpStats { return &osOpStats{m: map[string]osOpStat{}} }

// wrap is a deltalake.Options.WrapStorage.
func (o *osOpStats) wrap(s delta.Storage) delta.Storage {
	return &osCountingStorage{Storage: s, ops: o}
}

func (o *osOpStats) add(op, key string, err error, d time.Duration, bytes int64) {
	k := op + " " + osKeyKind(key)
	if errors.Is(err, delta.ErrNotFound) {
		k += " (not found)"
	} else if err != nil {
		k += " (failed)"
	}
	o.mu.Lock()
	st := o.m[k]
	st.n++
	st.d += d
	st.bytes += bytes
	o.m[k] = st
	o.mu.Unlock()
}

func (o *osOpStats) snapshot() map[string]osOpStat {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[string]osOpStat, len(o.m)+2)
	for k, v := range o.m {
		out[k] = v
	}
	out[osDials] = osOpStat{n: int(o.dials.Load())}
	out[osReuses] = osOpStat{n: int(o.reuses.Load())}
	return out
}

func osDiffOps(after, before map[string]osOpStat) map[string]osOpStat {
	out := map[string]osOpStat{}
	for k, a := range after {
		b := before[k]
		if a.n > b.n {
			out[k] = osOpStat{a.n - b.n, a.d - b.d, a.bytes - b.bytes}
		}
	}
	return out
}

// osCountOps is the number of storage calls, each one S3 request or more
// (PutFile of a large file is a multipart upload).
func osCountOps(m map[string]osOpStat) int {
	n := 0
	for k, v := range m {
		if k != osDials && k != osReuses {
			n += v.n
		}
	}
	return n
}

// osLogOps logs the calls per epoch, slowest kind first, with their time
// each and their share of the epochs' wall time (total), on one line:
// benchmark logs are cut after 10 lines.
func osLogOps(b *testing.B, side, per string, m map[string]osOpStat, epochs int, total time.Duration) {
	if epochs == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != osDials && k != osReuses {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]].d > m[keys[j]].d })
	var parts []string
	var all time.Duration
	for _, k := range keys {
		v := m[k]
		all += v.d
		p := fmt.Sprintf("%s %.2f x %.2fms (%.1f%%)",
			k, float64(v.n)/float64(epochs), osMs(v.d)/float64(v.n), 100*v.d.Seconds()/total.Seconds())
		if v.bytes > 0 {
			p += fmt.Sprintf(" [%.1f kB each, %.1f MB/s]", float64(v.bytes)/float64(v.n)/1e3, float64(v.bytes)/1e6/v.d.Seconds())
		}
		parts = append(parts, p)
	}
	b.Logf("%s storage calls per %s: %.2f calls, %.2fms, %.1f%% of wall time; HTTP connections: %.2f new, %.2f reused: %s",
		side, per, float64(osCountOps(m))/float64(epochs), osMs(all)/float64(epochs), 100*all.Seconds()/total.Seconds(),
		float64(m[osDials].n)/float64(epochs), float64(m[osReuses].n)/float64(epochs), strings.Join(parts, "; "))
}

// osKeyKind names what a storage key is, for the call breakdown.
func osKeyKind(key string) string {
	switch {
	case key == "_delta_log/_last_checkpoint":
		return "_last_checkpoint"
	case strings.HasPrefix(key, "_delta_log/") && strings.Contains(key, ".checkpoint"):
		return "checkpoint"
	case strings.HasPrefix(key, "_delta_log/") && strings.HasSuffix(key, ".json"):
		return "log entry"
	case strings.HasPrefix(key, "_delta_log"):
		return "log (" + key + ")"
	case strings.HasSuffix(key, ".parquet"):
		return "data file"
	}
	return "other"
}

// osCountingStorage times every call of the delta.Storage it wraps.
type osCountingStorage struct {
	delta.Storage
	ops *osOpStats
}

func (c *osCountingStorage) Get(ctx context.Context, key string) ([]byte, error) {
	ctx = c.ops.trace(ctx)
	t := time.Now()
	data, err := c.Storage.Get(ctx, key)
	c.ops.add("GET", key, err, time.Since(t), 0)
	return data, err
}

func (c *osCountingStorage) List(ctx context.Context, prefix, startAfter string) ([]delta.ObjectInfo, error) {
	ctx = c.ops.trace(ctx)
	t := time.Now()
	out, err := c.Storage.List(ctx, prefix, startAfter)
	c.ops.add("LIST", prefix, err, time.Since(t), 0)
	return out, err
}

func (c *osCountingStorage) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	ctx = c.ops.trace(ctx)
	t := time.Now()
	err := c.Storage.PutIfAbsent(ctx, key, data)
	c.ops.add("PUT-IF-ABSENT", key, err, time.Since(t), 0)
	return err
}

func (c *osCountingStorage) Put(ctx context.Context, key string, data []byte) error {
	ctx = c.ops.trace(ctx)
	t := time.Now()
	err := c.Storage.Put(ctx, key, data)
	c.ops.add("PUT", key, err, time.Since(t), 0)
	return err
}

func (c *osCountingStorage) Delete(ctx context.Context, key string) error {
	ctx = c.ops.trace(ctx)
	t := time.Now()
	err := c.Storage.Delete(ctx, key)
	c.ops.add("DELETE", key, err, time.Since(t), 0)
	return err
}

func (c *osCountingStorage) Stat(ctx context.Context, key string) (delta.ObjectInfo, error) {
	ctx = c.ops.trace(ctx)
	t := time.Now()
	info, err := c.Storage.Stat(ctx, key)
	c.ops.add("HEAD", key, err, time.Since(t), 0)
	return info, err
}

func (c *osCountingStorage) PutFile(ctx context.Context, key, path string) error {
	ctx = c.ops.trace(ctx)
	var size int64
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	t := time.Now()
	err := c.Storage.PutFile(ctx, key, path)
	c.ops.add("UPLOAD", key, err, time.Since(t), size)
	return err
}

func (c *osCountingStorage) LocalFile(ctx context.Context, key string) (string, error) {
	ctx = c.ops.trace(ctx)
	t := time.Now()
	p, err := c.Storage.LocalFile(ctx, key)
	c.ops.add("LOCALFILE", key, err, time.Since(t), 0)
	return p, err
}

// ingestBatches builds rows rows as 64k-row batches; the caller releases
// them.
func ingestBatches(rows int) []arrow.RecordBatch {
	gen := newRowGen(memory.NewGoAllocator())
	defer gen.release()
	var out []arrow.RecordBatch
	for done := 0; done < rows; {
		n := min(ingestBatchRows, rows-done)
		out = append(out, gen.batch(n))
		done += n
	}
	return out
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// loadAvg is the machine's load average, to tell a quiet run from a busy
// one.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread is (max - min) / median, in percent.
func spread(xs []float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return 100 * (hi - lo) / median(xs)
}
