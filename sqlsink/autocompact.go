package sqlsink

// Auto-compaction: a worker per sink that compacts the table in the
// background once the sink's commits have added enough small files. It
// never runs on the commit path: a commit only adds to a counter and, when
// compaction is due, drops a signal the worker picks up (signals coalesce,
// so a burst of commits makes one run). The worker has a DuckDB of its
// own, since the buffer's connection belongs to the epoch in flight, and
// runs one compaction at a time per table in this process. A failure
// degrades the sink, with its reason, until a later run succeeds; a
// conflict with another writer is no failure and is retried on the next
// signal.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/sqlquote"
)

// AutoCompactOperation names auto-compaction's commits in the table's history.
const AutoCompactOperation = "AUTO COMPACT"

// defaultTarget is the target file size the small-file count assumes when
// neither the sink nor the table says (Delta's default; Iceberg's is
// larger, which only makes more files count as small).
const defaultTarget = 128 << 20

// autoCompactor is a sink's background compaction worker.
type autoCompactor struct {
	s        *Sink
	c        catalogadapter.Compactor
	minFiles int
	small    int64 // a committed file below this many bytes is small

	// pending counts the small files this sink committed since the last
	// run that succeeded (seeded from the table's Stats when it opens).
	pending atomic.Int64
	wake    chan struct{} // capacity 1: signals coalesce
	// settled takes a channel the worker closes once no signal is left
	// and no run is in flight (settle).
	settled chan chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
	runs    atomic.Int64 // runs finished, whatever their outcome
	db      *compactDB   // opened by the first run, closed when the worker ends
}

// startAutoCompact starts the worker when the provider can compact and
// the sink does not disable it. s.mu is held.
func (s *Sink) startAutoCompact() {
	c, ok := s.cfg.Provider.(catalogadapter.Compactor)
	if !ok || s.cfg.DisableAutoCompact || s.auto != nil {
		return
	}
	target := s.cfg.TargetFileSize
	if target <= 0 {
		target = defaultTarget
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &autoCompactor{s: s, c: c, minFiles: s.cfg.CompactMinFiles,
		small: int64(float64(target) * catalogadapter.DefaultSmallFileFraction),
		wake:  make(chan struct{}, 1), settled: make(chan chan struct{}),
		cancel: cancel, done: make(chan struct{})}
	s.auto = a
	go a.loop(ctx)
}

// committed counts the small files of a commit and signals the worker
// when compaction is due. It never blocks.
func (a *autoCompactor) committed(rs []catalogadapter.Receipt) {
	var n int64
	for _, r := range rs {
		if r.Files > 0 && r.Bytes/int64(r.Files) < a.small {
			n += int64(r.Files)
		}
	}
	if n > 0 && a.pending.Add(n) >= int64(a.minFiles) {
		a.signal()
	}
}

func (a *autoCompactor) signal() {
	select {
	case a.wake <- struct{}{}:
	default: // a signal is pending already
	}
}

// stop cancels a run in flight and waits for the worker to end.
func (a *autoCompactor) stop() {
	a.cancel()
	<-a.done
}

func (a *autoCompactor) loop(ctx context.Context) {
	defer close(a.done)
	defer func() {
		if a.db != nil {
			a.db.Close()
		}
	}()
	a.seed(ctx)
	for {
		// A pending signal goes before a settle request, so a settle
		// answers only when the signals before it have run.
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
			a.run(ctx)
			continue
		default:
		}
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
			a.run(ctx)
		case ch := <-a.settled:
			close(ch)
		}
	}
}

// settle waits until the runs the commits so far have signalled are done
// (or the worker stopped): what tests wait on instead of sleeping.
func (a *autoCompactor) settle() {
	ch := make(chan struct{})
	select {
	case a.settled <- ch:
		<-ch
	case <-a.done:
	}
}

// seed counts the small files the table holds already, so that a table
// left with many (by a run without auto-compaction, or other writers) is
// compacted without waiting for this sink's commits to add as many.
func (a *autoCompactor) seed(ctx context.Context) {
	in, ok := a.s.cfg.Provider.(catalogadapter.Inspector)
	if !ok {
		return
	}
	st, err := in.Stats(ctx, a.s.cfg.Table, 0)
	if err != nil {
		return // the first due commit will try; a failure there is reported
	}
	// The sink may have committed (and counted) files before Stats read
	// the table: taking the larger count, not the sum, never counts one
	// twice. A double count made a run come due early, find too few files
	// to compact, and reset the count while they stayed.
	for {
		cur := a.pending.Load()
		n := max(cur, st.SmallFiles)
		if a.pending.CompareAndSwap(cur, n) {
			if n >= int64(a.minFiles) {
				a.signal()
			}
			return
		}
	}
}

// tableLocks holds, per table, the lock its auto-compactions take: one
// run at a time per table in this process (the sinks of one table would
// otherwise rewrite the same files and all but one lose the race).
var tableLocks sync.Map // table ident string -> chan struct{} (capacity 1)

func lockTable(ctx context.Context, id catalogadapter.TableIdent) (unlock func(), err error) {
	l, _ := tableLocks.LoadOrStore(id.String(), make(chan struct{}, 1))
	ch := l.(chan struct{})
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run compacts once and records the outcome.
func (a *autoCompactor) run(ctx context.Context) {
	defer a.runs.Add(1)
	before := a.pending.Load()
	out, err := a.compact(ctx)
	if ctx.Err() != nil {
		return // the sink is closing: not an outcome
	}
	if errors.Is(err, catalogadapter.ErrConflict) {
		return // another writer won; the next signal plans again
	}
	s := a.s
	if err != nil {
		s.maint.record(&s.maint.optimize, s.cfg.Now(), fmt.Errorf("auto-compaction: %w", err))
		s.mu.Lock()
		s.m.MaintenanceFailed("auto-compaction failed: " + err.Error())
		s.mu.Unlock()
		return
	}
	// Files committed while it ran stay counted.
	a.pending.Add(-before)
	if out.Committed {
		s.maint.record(&s.maint.optimize, s.cfg.Now(), nil)
	}
	s.mu.Lock()
	s.m.MaintenanceSucceeded()
	s.mu.Unlock()
}

func (a *autoCompactor) compact(ctx context.Context) (catalogadapter.CompactOutcome, error) {
	unlock, err := lockTable(ctx, a.s.cfg.Table)
	if err != nil {
		return catalogadapter.CompactOutcome{}, err
	}
	defer unlock()
	if a.db == nil {
		if a.db, err = newCompactDB(a.s.cfg); err != nil {
			return catalogadapter.CompactOutcome{}, err
		}
	}
	conn, err := a.db.conn(ctx, a.s.cfg)
	if err != nil {
		return catalogadapter.CompactOutcome{}, err
	}
	defer conn.Close()
	return a.c.Compact(ctx, a.s.cfg.Table, conn, catalogadapter.CompactOptions{
		TargetFileSize: a.s.cfg.TargetFileSize,
		MinFiles:       a.minFiles,
		Operation:      AutoCompactOperation,
		// OPTIMIZE purges deletion vectors; compacting small files must
		// not rewrite every file an upsert marked.
		KeepDeletionVectors: true,
	})
}

// compactDB is the DuckDB compactions run in, with its spill folder. A
// worker keeps one for its life: opening a DuckDB costs more CPU than a
// small compaction (a third of the sink's CPU in commit-latency when
// opened per run).
type compactDB struct {
	db      *sql.DB
	tempDir string
}

// newCompactDB opens a DuckDB spilling to a folder of its own under
// cfg.TempDir, which Close removes.
func newCompactDB(cfg Config) (*compactDB, error) {
	tempDir, err := os.MkdirTemp(cfg.TempDir, "lakesql-compact-")
	if err != nil {
		return nil, fmt.Errorf("compaction temp dir: %w", err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		os.RemoveAll(tempDir)
		return nil, fmt.Errorf("open DuckDB for compaction: %w", err)
	}
	return &compactDB{db: db, tempDir: tempDir}, nil
}

// conn gives a connection configured as the sink's buffer is (memory
// limit, threads, UTC), set anew each time since ALTER SINK may have
// changed them.
func (c *compactDB) conn(ctx context.Context, cfg Config) (*sql.Conn, error) {
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("DuckDB connection for compaction: %w", err)
	}
	settings := []string{
		"SET memory_limit = " + sqlquote.String(cfg.MemoryLimit),
		"SET temp_directory = " + sqlquote.String(filepath.Clean(c.tempDir)),
		"SET preserve_insertion_order = false",
		"SET TimeZone = 'UTC'",
	}
	if cfg.Threads > 0 {
		settings = append(settings, fmt.Sprintf("SET threads = %d", cfg.Threads))
	}
	for _, q := range settings {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			conn.Close()
			return nil, fmt.Errorf("configure DuckDB for compaction (%s): %w", q, err)
		}
	}
	return conn, nil
}

// Close closes the DuckDB and removes its spill folder.
func (c *compactDB) Close() error {
	err := c.db.Close()
	return errors.Join(err, os.RemoveAll(c.tempDir))
}

// openCompactDB opens a DuckDB for one compaction (OPTIMIZE in tests):
// the connection, and the cleanup that closes both.
func openCompactDB(ctx context.Context, cfg Config) (*sql.Conn, func(), error) {
	c, err := newCompactDB(cfg)
	if err != nil {
		return nil, nil, err
	}
	conn, err := c.conn(ctx, cfg)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return conn, func() { conn.Close(); c.Close() }, nil
}
