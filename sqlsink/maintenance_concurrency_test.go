package sqlsink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/apacheiceberg"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/internal/icebergtest"
	"github.com/lakesql/lakesql/internal/s3test"
	"github.com/lakesql/lakesql/internal/storageloc"
	"github.com/lakesql/lakesql/tableformat/delta"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
	"github.com/lakesql/lakesql/tableformat/objectstore"
)

// TestMaintenanceConcurrency: two writer processes (the many-writers
// children, writer ids w0 and w1, exactly-once epochs) append into one
// Delta table while this process, a third, runs OPTIMIZE and VACUUM
// RETAIN 0 HOURS (the short retention allowed) in a loop through a sink of
// its own, and a reader SELECTs the latest version over and over; on the
// local disk and on versitygw. Afterwards every acknowledged epoch's rows
// are in the table exactly once, the log is contiguous (0..N: every
// writer epoch once, the rest OPTIMIZE and VACUUM commits that change no
// row), every writer's txn is at its last epoch, and the maintenance loop
// saw no error but a documented conflict. The reader must never fail for
// a file that a live version names; with RETAIN 0 a read of a version that
// a later OPTIMIZE superseded can lose its files to the next VACUUM
// (as Spark warns about retentionDurationCheck), and such a read is only
// counted, after checking that every file it missed is one the latest
// version no longer names.
func TestMaintenanceConcurrency(t *testing.T) {
	epochs := int64(30)
	if mwStress {
		epochs = 150
	}
	forEachTarget(t, func(t *testing.T, tg mwTarget) {
		m := createMWTable(t, tg)
		ids := []string{"w0", "w1"}

		maint := openMaintenanceSink(t, tg)
		readStore := m.store
		if storageloc.IsLocation(tg.loc) {
			so := tg.so
			so.CacheDir = t.TempDir() // a cache of its own: what it holds it need not fetch
			s, err := objectstore.Open(context.Background(), tg.loc, so)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			readStore = s
		}
		rd := &maintReader{store: readStore, db: providertest.OpenDuckDB(t), writers: ids}

		writersDone := make(chan struct{})
		var wg sync.WaitGroup
		var loop maintLoopStats
		wg.Add(2)
		go func() {
			defer wg.Done()
			loop = runMaintenanceLoop(maint.sink, maint.db, writersDone)
		}()
		go func() {
			defer wg.Done()
			rd.run(writersDone)
		}()
		ph := runWriters(t, tg, mwAppend, ids, epochs, 0)
		close(writersDone)
		wg.Wait()

		loop.check(t, true)
		for _, err := range rd.errs {
			t.Errorf("reader: %v", err)
		}
		if rd.reads == 0 {
			t.Errorf("the reader read nothing")
		}
		checkMaintainedLog(t, m, ids, epochs)

		var want []row
		for _, w := range ids {
			for e := int64(1); e <= epochs; e++ {
				want = append(want, mwRows(mwAppend, w, e)...)
			}
		}
		sortRows(want)
		if diff := cmp.Diff(want, m.rows()); diff != "" {
			t.Errorf("rows after the run (-want +got):\n%s", diff)
		}
		t.Logf("%d writers x %d epochs in %v; maintenance: %d rounds, %d OPTIMIZE commits (%d while the writers ran, after %d lost races; %d files into %d), %d gave up on a conflict, %d VACUUMs deleted %d files; reader: %d reads, %d of a superseded version lost a vacuumed file",
			len(ids), epochs, ph.wall.Round(time.Millisecond), loop.rounds, loop.optimized, loop.optimizedDuring, loop.retries, loop.filesRemoved, loop.filesAdded,
			loop.conflicts, loop.vacuums, loop.deleted, rd.reads, rd.stale)
	})
}

// maintenanceSink is a sink that only maintains the table, on a provider
// and DuckDB of its own, as another lakesql process would.
type maintenanceSink struct {
	sink *Sink
	db   *sql.DB
}

func openMaintenanceSink(t *testing.T, tg mwTarget) maintenanceSink {
	t.Helper()
	db := providertest.OpenDuckDB(t)
	so := tg.so
	if storageloc.IsLocation(tg.loc) {
		so.CacheDir = t.TempDir()
	}
	p := deltalake.New(db, deltalake.Options{ObjectStorage: so})
	t.Cleanup(func() { p.Close() })
	s := openSink(t, Config{
		Name: "maint", WriterID: "maint", Provider: p, Table: catalogadapter.TableIdent{Name: tg.loc},
		Schema: orderSchema, TempDir: t.TempDir(), MemoryLimit: "256MB", Threads: 1,
	})
	return maintenanceSink{sink: s, db: db}
}

// maintLoopStats is what a maintenance loop did.
type maintLoopStats struct {
	rounds, optimized, conflicts, vacuums int
	optimizedDuring                       int // OPTIMIZE commits while the writers ran
	retries                               int // lost races OPTIMIZE retried
	filesRemoved, filesAdded, deleted     int
	errs                                  []error
}

// check fails the test when the loop saw an error, or tested nothing: no
// OPTIMIZE committed while the writers ran (during) or at all, or no
// VACUUM deleted a file.
func (st maintLoopStats) check(t *testing.T, during bool) {
	t.Helper()
	for _, err := range st.errs {
		t.Errorf("maintenance: %v", err)
	}
	if (during && st.optimizedDuring == 0) || st.optimized == 0 || st.deleted == 0 {
		t.Errorf("the maintenance loop committed %d OPTIMIZEs while the writers ran (%d in all) and its VACUUMs deleted %d files: it tested nothing",
			st.optimizedDuring, st.optimized, st.deleted)
	}
}

// runMaintenanceLoop runs OPTIMIZE (every partition with 2 small files or
// more) then VACUUM RETAIN 0 HOURS, round after round, until done is
// closed and it has both compacted and deleted at least once (or has
// tried for three minutes). An OPTIMIZE that gives up on a conflict is the
// contract's harmless outcome and only counted; any other error is kept.
func runMaintenanceLoop(s *Sink, q catalogadapter.Querier, done <-chan struct{}) maintLoopStats {
	ctx := context.Background()
	var st maintLoopStats
	start := time.Now()
	for {
		if writersDone(done) && st.optimized > 0 && st.deleted > 0 {
			return st
		}
		if time.Since(start) > 3*time.Minute {
			st.errs = append(st.errs, fmt.Errorf("gave up after %d rounds", st.rounds))
			return st
		}
		st.rounds++
		out, err := s.Optimize(ctx, q, CompactOptions{MinFiles: 2})
		switch {
		case errors.Is(err, catalogadapter.ErrConflict):
			st.conflicts++
		case err != nil:
			st.errs = append(st.errs, fmt.Errorf("round %d: OPTIMIZE: %w", st.rounds, err))
		case out.Committed:
			st.retries += out.Retries
			st.optimized++
			if !writersDone(done) {
				st.optimizedDuring++
			}
			st.filesRemoved += out.FilesRemoved
			st.filesAdded += out.FilesAdded
		}
		vout, err := s.Vacuum(ctx, VacuumOptions{Retain: 0, AllowShortRetention: true})
		if err != nil {
			st.errs = append(st.errs, fmt.Errorf("round %d: VACUUM: %w", st.rounds, err))
		} else {
			st.vacuums++
			st.deleted += len(vout.Files)
		}
		if len(st.errs) > 10 {
			return st
		}
	}
}

func writersDone(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// maintReader SELECTs the latest version of a table the many-writers
// children append to, until done is closed, and checks what it reads.
type maintReader struct {
	store   delta.Storage
	db      *sql.DB
	writers []string
	reads   int     // reads that succeeded
	stale   int     // reads of a superseded version that lost a vacuumed file
	errs    []error // what went wrong
}

func (r *maintReader) run(done <-chan struct{}) {
	ctx := context.Background()
	if err := delta.PrepareDuckDB(ctx, r.db); err != nil {
		r.errs = append(r.errs, err)
		return
	}
	tbl := delta.NewTable(r.store)
	for final := false; !final && len(r.errs) < 5; {
		select {
		case <-done:
			final = true // one last read, after the writers
		default:
		}
		snap, err := tbl.Latest(ctx)
		if err != nil {
			r.errs = append(r.errs, fmt.Errorf("latest snapshot: %w", err))
			continue
		}
		ids, err := r.read(ctx, snap)
		if err != nil {
			if why := r.explain(ctx, tbl, snap, err); why != nil || final {
				r.errs = append(r.errs, fmt.Errorf("version %d: %w (%v)", snap.Version, err, why))
			} else {
				r.stale++
			}
			continue
		}
		r.reads++
		if err := checkEpochPrefixes(ids, r.writers); err != nil {
			r.errs = append(r.errs, fmt.Errorf("version %d: %w", snap.Version, err))
		}
	}
}

// read returns the ids the version holds.
func (r *maintReader) read(ctx context.Context, snap *delta.Snapshot) ([]int64, error) {
	q, err := snap.ScanSQL(ctx, r.db)
	if err != nil {
		return nil, err
	}
	rs, err := r.db.QueryContext(ctx, "SELECT id FROM ("+q+")")
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var ids []int64
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rs.Err()
}

// explain returns nil when a failed read of snap is the documented
// outcome of VACUUM RETAIN 0: some of its files are gone, and every one
// of them the latest version no longer names. Otherwise it says what is
// wrong: a live file deleted, or a failure with every file in place.
func (r *maintReader) explain(ctx context.Context, tbl *delta.Table, snap *delta.Snapshot, readErr error) error {
	var missing []string
	for _, f := range snap.Files() {
		key, err := url.PathUnescape(f.Path)
		if err != nil {
			return err
		}
		if _, err := r.store.Stat(ctx, key); errors.Is(err, delta.ErrNotFound) {
			missing = append(missing, f.Path)
		} else if err != nil {
			return fmt.Errorf("stat %s: %w", f.Path, err)
		}
	}
	if len(missing) == 0 {
		return fmt.Errorf("the read failed with every file of the version in place")
	}
	latest, err := tbl.Latest(ctx)
	if err != nil {
		return err
	}
	live := map[string]bool{}
	for _, f := range latest.Files() {
		live[f.Path] = true
	}
	for _, p := range missing {
		if live[p] {
			return fmt.Errorf("file %s, which the latest version %d names, is gone", p, latest.Version)
		}
	}
	return nil
}

// checkEpochPrefixes checks ids read from a version of a table the
// many-writers children append to (mwAppend): for each writer, epochs
// 1..k for some k, each with its rows exactly once, and nothing else.
func checkEpochPrefixes(ids []int64, writers []string) error {
	want := map[int64]bool{}
	for _, w := range writers {
		want[mwWriterIndex(w)] = true
	}
	count := map[int64]map[int64]int{} // writer index -> epoch -> rows
	seen := map[int64]bool{}
	for _, id := range ids {
		if seen[id] {
			return fmt.Errorf("id %d read twice", id)
		}
		seen[id] = true
		w, e := id/1_000_000, id%1_000_000/100
		if !want[w] || id%100 >= 3 {
			return fmt.Errorf("id %d is no writer's", id)
		}
		if count[w] == nil {
			count[w] = map[int64]int{}
		}
		count[w][e]++
	}
	for w, byEpoch := range count {
		for e := int64(1); e <= int64(len(byEpoch)); e++ {
			if byEpoch[e] != 3 {
				return fmt.Errorf("writer w%d: epoch %d has %d rows of 3, with %d epochs seen: not a prefix of its epochs", w, e, byEpoch[e], len(byEpoch))
			}
		}
	}
	return nil
}

// checkMaintainedLog checks the log of a table that writers appended
// epochs 1..epochs to while OPTIMIZE and VACUUM ran: versions 0..N without
// a gap (readDeltaLog); every writer epoch recorded by exactly one WRITE;
// every other commit an OPTIMIZE whose adds and removes carry dataChange
// false, or a VACUUM commit that adds and removes nothing; every writer's
// txn at its last epoch.
func checkMaintainedLog(t *testing.T, m *mwTable, writers []string, epochs int64) {
	t.Helper()
	seen := map[writerEpoch]int64{}
	ops := map[string]int{}
	for _, le := range m.log()[1:] {
		ops[le.op]++
		if we, ok := le.recorded(); ok {
			if prev, dup := seen[we]; dup {
				t.Errorf("%+v is recorded by versions %d and %d", we, prev, le.version)
			}
			seen[we] = le.version
			if le.op != "WRITE" || len(le.removes) != 0 {
				t.Errorf("version %d records %+v as %s with %d removes, want a WRITE", le.version, we, le.op, len(le.removes))
			}
			continue
		}
		switch {
		case len(le.txns) > 1:
			t.Errorf("version %d (%s) records txns %+v", le.version, le.op, le.txns)
		case strings.HasPrefix(le.op, "OPTIMIZE") || le.op == "AUTO COMPACT":
			for _, a := range le.adds {
				if a.DataChange {
					t.Errorf("version %d (%s) adds %s with dataChange true", le.version, le.op, a.Path)
				}
			}
			for _, r := range le.removes {
				if r.DataChange {
					t.Errorf("version %d (%s) removes %s with dataChange true", le.version, le.op, r.Path)
				}
			}
			if len(le.adds) == 0 || len(le.removes) < 2 {
				t.Errorf("version %d (%s) adds %d files and removes %d", le.version, le.op, len(le.adds), len(le.removes))
			}
		case strings.HasPrefix(le.op, "VACUUM"):
			if len(le.adds)+len(le.removes) != 0 {
				t.Errorf("version %d (%s) adds %d files and removes %d", le.version, le.op, len(le.adds), len(le.removes))
			}
		default:
			t.Errorf("version %d: operation %q without an epoch", le.version, le.op)
		}
	}
	for _, w := range writers {
		for e := int64(1); e <= epochs; e++ {
			if _, ok := seen[writerEpoch{w, e}]; !ok {
				t.Errorf("no version records %s epoch %d", w, e)
			}
		}
	}
	snap := m.latest()
	for _, w := range writers {
		if v, ok := snap.TxnVersion(w); !ok || v != epochs {
			t.Errorf("txn version of %s is %d (%v), want %d", w, v, ok, epochs)
		}
	}
	t.Logf("log: %d versions after the creation, by operation %v", snap.Version, ops)
}

// TestMaintenanceConcurrencyIceberg is TestMaintenanceConcurrency on
// Iceberg: two writer processes (TestMultiWriterHelper, own writer ids)
// append through the SQLite catalog file they share with this process,
// which runs OPTIMIZE and VACUUM RETAIN 0 HOURS in a loop through a sink
// and catalog handle of its own, while a reader SELECTs the current
// snapshot over and over; the warehouse on the local disk and on
// versitygw. Afterwards every epoch's rows are in the table once (read by
// iceberg-go and by DuckDB) and every writer's last epoch survives the
// snapshots expired. A failed read is allowed only when the snapshot it
// read was no longer current by then: VACUUM makes no snapshot, so it may
// delete a file of the current one only by mistake. (Snapshot ids are not
// contiguous numbers, and expiry removes old ones: the snapshot checks of
// the Delta test have no Iceberg counterpart beyond the epochs recorded.)
func TestMaintenanceConcurrencyIceberg(t *testing.T) {
	epochs := 60
	if mwStress {
		epochs = 300
	}
	for _, mk := range []func(t *testing.T) icebergtest.Lake{
		func(t *testing.T) icebergtest.Lake { return icebergtest.Local(t) },
		func(t *testing.T) icebergtest.Lake { return icebergtest.S3(t, s3test.Start(t)) },
	} {
		l := mk(t)
		t.Run(l.Name, func(t *testing.T) {
			createOrders(t, lakeProvider(t, l))
			writers := []icemwWriter{{id: "writer-0", tag: "w0", base: 100000}, {id: "writer-1", tag: "w1", base: 200000}}
			mp := lakeProvider(t, l)
			maint := openSink(t, Config{Name: "maint", WriterID: "maint", Provider: mp, Table: ordersID,
				Schema: orderSchema, TempDir: t.TempDir(), MemoryLimit: "256MB", Threads: 1})
			rd := &icebergMaintReader{cat: l.Catalog(t), p: lakeProvider(t, l), db: providertest.OpenDuckDB(t)}

			writersDone := make(chan struct{})
			var wg sync.WaitGroup
			var loop maintLoopStats
			wg.Add(2)
			go func() {
				defer wg.Done()
				loop = runMaintenanceLoop(maint, providertest.OpenDuckDB(t), writersDone)
			}()
			go func() {
				defer wg.Done()
				rd.run(writersDone)
			}()
			start := time.Now()
			reports := runIcebergWriters(t, l, epochs, writers)
			close(writersDone)
			wg.Wait()

			// Two writers appending as fast as they can leave no room for
			// an Iceberg OPTIMIZE: every commit of its rewrite loses the
			// catalog's race to an append, and its backoff grows (up to 2 s)
			// until the appends stop. The plan survives the appends (they
			// are retried, not replanned: retries counts them); it only
			// lands late. So the rewrite is required to land, not to land
			// while the writers run.
			loop.check(t, false)
			if loop.retries == 0 && loop.optimizedDuring == 0 {
				t.Errorf("no OPTIMIZE raced a writer: the loop tested nothing")
			}
			for _, err := range rd.errs {
				t.Errorf("reader: %v", err)
			}
			if rd.reads == 0 {
				t.Errorf("the reader read nothing")
			}
			var want []string
			for i, w := range writers {
				if r := reports[i]; len(r.committed) != epochs || len(r.skipped) != 0 {
					t.Errorf("writer %s committed %v, skipped %v; want all %d epochs committed", w.id, r.committed, r.skipped, epochs)
				}
				for e := int64(1); e <= int64(epochs); e++ {
					want = append(want, rowStrings(icemwRows(w.base, e, w.tag)...)...)
				}
			}
			sort.Strings(want)
			if got := l.Rows(t, ordersID); !slices.Equal(got, want) {
				t.Errorf("iceberg-go reads (-want +got):\n%s", cmp.Diff(want, got))
			}
			if got := duckRows(t, rd.p); !slices.Equal(got, want) {
				t.Errorf("ScanSQL reads (-want +got):\n%s", cmp.Diff(want, got))
			}
			tbl := l.Table(t, ordersID)
			for _, w := range writers {
				rec, ok, err := icetable.LastEpoch(tbl.Metadata(), w.id)
				if err != nil || !ok || rec.Epoch != int64(epochs) {
					t.Errorf("writer %s: last recorded epoch %+v %v %v, want %d", w.id, rec, ok, err, epochs)
				}
			}
			t.Logf("%s: 2 writers x %d epochs in %v; maintenance: %d rounds, %d OPTIMIZE commits (%d while the writers ran, after %d lost races; %d files into %d), %d gave up on a conflict, %d VACUUMs deleted %d files; reader: %d reads, %d of a superseded snapshot failed; %d snapshots left",
				l.Name, epochs, time.Since(start).Round(time.Millisecond), loop.rounds, loop.optimized, loop.optimizedDuring, loop.retries, loop.filesRemoved, loop.filesAdded,
				loop.conflicts, loop.vacuums, loop.deleted, rd.reads, rd.stale, len(icebergtest.Snapshots(tbl)))
		})
	}
}

// icebergMaintReader reads the current snapshot of the orders table until
// done is closed.
type icebergMaintReader struct {
	cat   *icetable.Catalog
	p     *apacheiceberg.Provider
	db    *sql.DB
	reads int
	stale int
	errs  []error
}

func (r *icebergMaintReader) current(ctx context.Context) (int64, error) {
	tbl, err := r.cat.LoadTable(ctx, icebergtest.Ident(ordersID))
	if err != nil {
		return 0, err
	}
	if s := tbl.CurrentSnapshot(); s != nil {
		return s.SnapshotID, nil
	}
	return -1, nil
}

func (r *icebergMaintReader) run(done <-chan struct{}) {
	ctx := context.Background()
	for final := false; !final && len(r.errs) < 5; {
		select {
		case <-done:
			final = true
		default:
		}
		snap, err := r.current(ctx)
		if err != nil {
			r.errs = append(r.errs, err)
			continue
		}
		if snap < 0 {
			continue // no epoch yet
		}
		err = r.read(ctx, snap)
		if err == nil {
			r.reads++
			continue
		}
		now, cerr := r.current(ctx)
		switch {
		case cerr != nil:
			r.errs = append(r.errs, cerr)
		case now == snap || final:
			r.errs = append(r.errs, fmt.Errorf("snapshot %d, current all along: %w", snap, err))
		default:
			r.stale++
		}
	}
}

// read reads snapshot snap and checks that each writer's epochs form a
// prefix 1..k, each with its two rows once.
func (r *icebergMaintReader) read(ctx context.Context, snap int64) error {
	q, err := r.p.ScanSQL(ctx, ordersID, r.db, snap, nil)
	if err != nil {
		return err
	}
	rs, err := r.db.QueryContext(ctx, "SELECT id FROM ("+q+")")
	if err != nil {
		return err
	}
	defer rs.Close()
	perWriter := map[int64]map[int64]int{}
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			return err
		}
		w, e := id/100000, id%100000/10
		if perWriter[w] == nil {
			perWriter[w] = map[int64]int{}
		}
		perWriter[w][e]++
	}
	if err := rs.Err(); err != nil {
		return err
	}
	for w, byEpoch := range perWriter {
		for e := int64(1); e <= int64(len(byEpoch)); e++ {
			if byEpoch[e] != 2 {
				r.errs = append(r.errs, fmt.Errorf("snapshot %d: writer %d epoch %d has %d rows of 2 with %d epochs seen", snap, w, e, byEpoch[e], len(byEpoch)))
			}
		}
	}
	return nil
}
