package sqlsink

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/internal/icebergtest"
	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// The maintenance model test: two writers (an append sink and an upsert
// sink with changelog deletes, both with auto-compaction on) share one
// table partitioned by region, and random steps interleave their epochs
// with OPTIMIZE, VACUUM (short retentions, a clock moved forward), Delta
// log cleanup, reopens and replays. A plain Go model holds the rows of
// every version. After every step: the table equals the model, read with
// the sink's scan and with an independent reader (DuckDB read_parquet over
// the live files the Delta log names; iceberg-go's own scan); every
// version the backend still calls readable reads as the model's version
// (ScanSQLAt); and every writer's last epoch survives (LastEpoch, and a
// replay of an old epoch is skipped).

var (
	maintSeed  = flag.Uint64("maint.seed", 0, "TestMaintenanceModel: the random seed run after the fixed ones (0: from the clock)")
	maintSeeds = flag.Int("maint.seeds", 1, "TestMaintenanceModel: how many random seeds after the fixed ones")
	maintSteps = flag.Int("maint.steps", 40, "TestMaintenanceModel: steps per run")
)

// offsetClock is the real clock moved forward by what the test adds: the
// backends stamp versions and staged files with the real time, and vacuum
// counts its retention back from this clock.
type offsetClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *offsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *offsetClock) advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// logCleaner is what Delta's log cleanup offers the test: remove the log
// entries and checkpoints older than the retention, counted back from now.
type logCleaner interface {
	CleanupLog(ctx context.Context, id catalogadapter.TableIdent, retain time.Duration, now time.Time) error
}

// maintModel is the expected table: append rows (ids from appendBase) and
// upserted rows by key, and the rows of every version seen.
type maintModel struct {
	appended []row
	upserted map[int64]row
	versions map[int64][]row // version -> its rows, sorted
}

const appendBase = 1000

func (m *maintModel) rows() []row {
	out := append([]row{}, m.appended...)
	for _, r := range m.upserted {
		out = append(out, r)
	}
	sortRows(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

type maintWriter struct {
	name string
	cfg  Config
	s    *Sink
	last int64 // last epoch committed
}

type maintRun struct {
	t      *testing.T
	e      *env
	seed   uint64
	rng    *rand.Rand
	clock  *offsetClock
	db     *sql.DB
	model  *maintModel
	app    *maintWriter
	ups    *maintWriter
	log    []string
	nextID int64
	counts map[string]int
}

func TestMaintenanceModel(t *testing.T) {
	extra := *maintSeed
	if extra == 0 {
		extra = uint64(time.Now().UnixNano())
	}
	seeds := []uint64{1, 2}
	for i := 0; i < *maintSeeds; i++ {
		seeds = append(seeds, extra+uint64(i))
	}
	t.Logf("seeds %v (rerun the random ones with -maint.seed=%d -maint.seeds=%d; longer with -maint.steps)", seeds, extra, *maintSeeds)
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			for _, seed := range seeds {
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					runMaintModel(t, l, seed, *maintSteps)
				})
			}
		})
	}
}

func runMaintModel(t *testing.T, l lake, seed uint64, steps int) {
	e := newLakeEnv(t, l)
	r := &maintRun{t: t, e: e, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x6d61696e74)),
		clock: &offsetClock{}, db: providertest.OpenDuckDB(t),
		model:  &maintModel{upserted: map[int64]row{}, versions: map[int64][]row{}},
		nextID: appendBase, counts: map[string]int{}}
	mk := func(name string, mode Mode) *maintWriter {
		cfg := e.autoConfig(name, 3)
		cfg.WriterID, cfg.Mode, cfg.PartitionColumns, cfg.Now = name, mode, []string{"region"}, r.clock.Now
		if mode == ModeUpsert {
			cfg.Key = []string{"id"}
		}
		w := &maintWriter{name: name, cfg: cfg}
		w.s = r.open(cfg)
		return w
	}
	r.app, r.ups = mk("append", ModeAppend), mk("upsert", ModeUpsert)
	r.mustMaint()
	r.record()

	for i := 0; i < steps; i++ {
		switch n := r.rng.IntN(20); {
		case n < 6:
			r.appendEpoch()
		case n < 12:
			r.upsertEpoch()
		case n < 14:
			r.optimize()
		case n < 16:
			r.vacuum()
		case n < 17 && l.name == deltaLake.name:
			r.cleanLog()
		case n < 19:
			r.replay()
		default:
			r.reopen()
		}
		r.check(fmt.Sprintf("step %d (%s)", i, r.log[len(r.log)-1]))
	}
	t.Logf("seed %d: %d steps %v; %d versions recorded, %d rows", seed, steps, r.counts, len(r.model.versions), len(r.model.rows()))
}

func (r *maintRun) fatalf(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("seed %d: %s\nsteps:\n%s", r.seed, fmt.Sprintf(format, args...), strings.Join(r.log, "\n"))
}

func (r *maintRun) note(format string, args ...any) {
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

func (r *maintRun) open(cfg Config) *Sink {
	r.t.Helper()
	s, err := New(cfg)
	if err != nil {
		r.fatalf("new %s: %v", cfg.Name, err)
	}
	if err := s.Open(context.Background()); err != nil {
		r.fatalf("open %s: %v", cfg.Name, err)
	}
	r.t.Cleanup(func() { s.Close() })
	return s
}

// mustMaint fails loudly while a backend lacks what the test drives.
func (r *maintRun) mustMaint() {
	p := r.e.provider
	for what, ok := range map[string]bool{
		"catalogadapter.Compactor": is[catalogadapter.Compactor](p),
		"catalogadapter.Vacuumer":  is[catalogadapter.Vacuumer](p),
		"catalogadapter.Historian": is[catalogadapter.Historian](p),
	} {
		if !ok {
			r.t.Fatalf("the %s provider (%T) implements no %s", r.e.lake.name, p, what)
		}
	}
}

func is[T any](v any) bool { _, ok := v.(T); return ok }

func (r *maintRun) amount() float64 { return float64(r.rng.IntN(10000)) / 100 }

func (r *maintRun) commit(w *maintWriter, rows []row) CommitResult {
	r.t.Helper()
	n := w.last + 1
	res := epoch(r.t, w.s, n, batch(r.t, rows...))
	if res.Skipped {
		r.fatalf("%s epoch %d skipped", w.name, n)
	}
	w.last = n
	return res
}

func (r *maintRun) appendEpoch() {
	var rows []row
	for k := 1 + r.rng.IntN(3); k > 0; k-- {
		rows = append(rows, row{ID: r.nextID, Amount: r.amount(), Region: regions[r.rng.IntN(3)]})
		r.nextID++
	}
	r.note("append epoch %d: %v", r.app.last+1, rows)
	r.commit(r.app, rows)
	r.model.appended = append(r.model.appended, rows...)
	r.counts["append"]++
}

func (r *maintRun) upsertEpoch() {
	var rows []row
	seen := map[int64]bool{}
	for k := 1 + r.rng.IntN(4); k > 0; k-- {
		id := int64(r.rng.IntN(12))
		if seen[id] {
			continue // one change per key keeps the model's order plain
		}
		seen[id] = true
		if _, live := r.model.upserted[id]; live && r.rng.IntN(3) == 0 {
			rows = append(rows, row{Op: "D", ID: id, Region: regions[id%3]})
			continue
		}
		rows = append(rows, row{Op: "U", ID: id, Amount: r.amount(), Region: regions[r.rng.IntN(3)]})
	}
	r.note("upsert epoch %d: %v", r.ups.last+1, rows)
	r.commit(r.ups, rows)
	for _, x := range rows {
		if x.Op == "D" {
			delete(r.model.upserted, x.ID)
			r.counts["delete"]++
			continue
		}
		x.Op = ""
		r.model.upserted[x.ID] = x
	}
	r.counts["upsert"]++
}

func (r *maintRun) optimize() {
	w := []*maintWriter{r.app, r.ups}[r.rng.IntN(2)]
	q, cleanup, err := openCompactDB(context.Background(), w.cfg)
	if err != nil {
		r.fatalf("%v", err)
	}
	defer cleanup()
	out, err := w.s.Optimize(context.Background(), q, CompactOptions{MinFiles: 2})
	r.note("optimize through %s: %+v", w.name, out)
	if err != nil {
		r.fatalf("optimize: %v", err)
	}
	r.counts["optimize"]++
}

func (r *maintRun) vacuum() {
	ctx := context.Background()
	// The clock moves past the stage lifetime, so vacuum may delete what
	// the retention gives up; the retention ends at a version drawn from
	// the history, or keeps nothing but the current one.
	r.clock.advance(catalogadapter.StageLifetime + time.Hour)
	hist, err := r.ups.s.History(ctx, 0)
	if err != nil {
		r.fatalf("history: %v", err)
	}
	retain := time.Duration(0)
	if len(hist) > 0 && r.rng.IntN(3) > 0 {
		retain = r.clock.Now().Sub(hist[r.rng.IntN(len(hist))].Timestamp)
	}
	out, err := r.ups.s.Vacuum(ctx, VacuumOptions{Retain: retain, AllowShortRetention: true, Now: r.clock.Now})
	r.note("vacuum retaining %v: %d files, %d snapshots expired, oldest version %d", retain, len(out.Files), out.SnapshotsExpired, out.OldestVersion)
	if err != nil {
		r.fatalf("vacuum: %v", err)
	}
	for v := range r.model.versions {
		if r.older(v, out.OldestVersion) {
			delete(r.model.versions, v)
		}
	}
	r.counts["vacuum"]++
}

// older says whether version v comes before oldest: Delta's versions
// count up; Iceberg's snapshot ids do not, so they are ordered by the
// history.
func (r *maintRun) older(v, oldest int64) bool {
	if r.e.lake.name == deltaLake.name {
		return v < oldest
	}
	hist, err := r.ups.s.History(context.Background(), 0)
	if err != nil {
		r.fatalf("history: %v", err)
	}
	for _, h := range hist { // newest first: v is older unless met first
		if h.Version == v {
			return false
		}
		if h.Version == oldest {
			return true
		}
	}
	return true // no longer in the history at all
}

func (r *maintRun) cleanLog() {
	c, ok := r.e.provider.(logCleaner)
	if !ok {
		r.t.Fatalf("the %s provider (%T) has no log cleanup (logCleaner)", r.e.lake.name, r.e.provider)
	}
	r.clock.advance(31 * 24 * time.Hour)
	err := c.CleanupLog(context.Background(), r.e.table, 30*24*time.Hour, r.clock.Now())
	r.note("log cleanup")
	if err != nil {
		r.fatalf("log cleanup: %v", err)
	}
	r.counts["log cleanup"]++
}

// replay sends a writer's last epoch again, with other rows: skipped.
func (r *maintRun) replay() {
	w := []*maintWriter{r.app, r.ups}[r.rng.IntN(2)]
	if w.last == 0 {
		r.note("no epoch of %s to replay", w.name)
		return
	}
	old := w.last - int64(r.rng.IntN(int(w.last)))
	r.note("replay of %s epoch %d", w.name, old)
	rows := []row{{ID: 999, Amount: 1, Region: "eu"}}
	if w.cfg.Mode == ModeUpsert {
		rows[0].Op = "U"
	}
	if res := epoch(r.t, w.s, old, batch(r.t, rows...)); !res.Skipped {
		r.fatalf("replay of %s epoch %d was written: %+v", w.name, old, res)
	}
	r.counts["replay"]++
}

// reopen closes a writer (cancelling its auto-compaction) and opens it
// again: it recovers its last epoch from the table.
func (r *maintRun) reopen() {
	w := []*maintWriter{r.app, r.ups}[r.rng.IntN(2)]
	r.note("reopen %s", w.name)
	if err := w.s.Close(); err != nil {
		r.fatalf("close %s: %v", w.name, err)
	}
	w.s = r.open(w.cfg)
	if last, ok := w.s.LastCommittedEpoch(); w.last > 0 && (!ok || last != w.last) {
		r.fatalf("%s recovered epoch %d %v, want %d", w.name, last, ok, w.last)
	}
	r.counts["reopen"]++
}

// record gives the versions made since the last step the model's rows: a
// step changes the rows at most once (an epoch), and what the sinks ran
// after it (auto-compaction) keeps them.
func (r *maintRun) record() {
	hist, err := r.ups.s.History(context.Background(), 0)
	if err != nil {
		r.fatalf("history: %v", err)
	}
	rows := r.model.rows()
	for _, h := range hist {
		if _, ok := r.model.versions[h.Version]; ok {
			break // older ones are recorded
		}
		r.model.versions[h.Version] = rows
	}
}

func (r *maintRun) check(what string) {
	r.t.Helper()
	r.app.s.auto.settle()
	r.ups.s.auto.settle()
	for _, w := range []*maintWriter{r.app, r.ups} {
		if h := w.s.Health(); h.Status != Healthy {
			r.fatalf("after %s: %s is %+v", what, w.name, h)
		}
	}
	r.record()
	want := r.model.rows()
	if diff := cmp.Diff(want, r.sorted(r.e.rows())); diff != "" {
		r.fatalf("after %s: the sink's scan (-model +table):\n%s", what, diff)
	}
	if diff := cmp.Diff(want, r.sorted(r.independentRows())); diff != "" {
		r.fatalf("after %s: the independent reader (-model +table):\n%s", what, diff)
	}
	for v, rows := range r.model.versions {
		q, err := r.ups.s.ScanSQLAt(context.Background(), r.db, v)
		if err != nil {
			r.fatalf("after %s: version %d, in retention: %v", what, v, err)
		}
		if diff := cmp.Diff(rows, r.sorted(queryRows(r.t, r.db, q))); diff != "" {
			r.fatalf("after %s: version %d (-model +table):\n%s", what, v, diff)
		}
	}
	for _, w := range []*maintWriter{r.app, r.ups} {
		last, ok, err := r.e.provider.LastEpoch(context.Background(), r.e.table, w.name)
		if err != nil {
			r.fatalf("last epoch of %s: %v", w.name, err)
		}
		if w.last > 0 && (!ok || last != w.last) || w.last == 0 && ok {
			r.fatalf("after %s: the table's last epoch of %s is %d %v, want %d", what, w.name, last, ok, w.last)
		}
	}
}

func (r *maintRun) sorted(rows []row) []row {
	sortRows(rows)
	if len(rows) == 0 {
		return nil
	}
	return rows
}

// queryRows runs a scan query and reads its rows.
func queryRows(t testing.TB, db *sql.DB, q string) []row {
	t.Helper()
	rs, err := db.Query("SELECT id, amount, region FROM (" + q + ")")
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rs.Close()
	var out []row
	for rs.Next() {
		var x row
		var amount sql.NullFloat64
		var region sql.NullString
		if err := rs.Scan(&x.ID, &amount, &region); err != nil {
			t.Fatal(err)
		}
		x.Amount, x.Region = amount.Float64, region.String
		out = append(out, x)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// independentRows reads the table without the provider: the Delta log's
// live files with DuckDB's read_parquet (partition values from the log),
// or iceberg-go's own scan.
func (r *maintRun) independentRows() []row {
	r.t.Helper()
	if r.e.lake.name != deltaLake.name {
		var out []row
		lake := icebergtest.Lake{Dir: r.e.root}
		for _, s := range lake.Rows(r.t, r.e.table) {
			out = append(out, parseRow(r.t, s))
		}
		return out
	}
	store, err := delta.NewLocalStorage(r.e.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	snap, err := delta.NewTable(store).Latest(context.Background())
	if err != nil {
		r.fatalf("read the log: %v", err)
	}
	var parts []string
	for _, f := range snap.Files() {
		if f.DeletionVector != nil {
			r.fatalf("%s has a deletion vector, which this reader does not apply", f.Path)
		}
		region := "region"
		if v, ok := f.PartitionValues["region"]; ok {
			region = "NULL::VARCHAR"
			if v != nil {
				region = sqlquote.String(*v)
			}
		}
		parts = append(parts, fmt.Sprintf("SELECT id, amount, %s AS region FROM read_parquet(%s)",
			region, sqlquote.String(diskPath(r.t, r.e.dir, f.Path))))
	}
	if len(parts) == 0 {
		return nil
	}
	return queryRows(r.t, r.db, strings.Join(parts, " UNION ALL "))
}

// parseRow reads back a row icebergtest.Rows printed as id|amount|region.
func parseRow(t testing.TB, s string) row {
	var x row
	f := strings.SplitN(s, "|", 3)
	if len(f) != 3 {
		t.Fatalf("row %q", s)
	}
	if _, err := fmt.Sscan(f[0], &x.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(f[1], &x.Amount); err != nil {
		t.Fatal(err)
	}
	x.Region = f[2]
	return x
}
