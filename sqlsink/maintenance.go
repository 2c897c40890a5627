package sqlsink

// Table maintenance through the sink: OPTIMIZE, VACUUM, history and time
// travel, for the front ends, which reach the table through the sink and
// never its provider. Each runs through the provider's optional interface
// (catalogadapter/maintenance.go) and fails with ErrUnsupported when the
// provider has none.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lakesql/lakesql/catalogadapter"
)

// The maintenance types of the provider contract, as the sink passes them.
type (
	CompactOptions   = catalogadapter.CompactOptions
	CompactOutcome   = catalogadapter.CompactOutcome
	VacuumOptions    = catalogadapter.VacuumOptions
	VacuumOutcome    = catalogadapter.VacuumOutcome
	VacuumedFile     = catalogadapter.VacuumedFile
	HistoryEntry     = catalogadapter.HistoryEntry
	TableStats       = catalogadapter.TableStats
	VersionGoneError = catalogadapter.VersionUnavailableError
)

// Sentinels of maintenance.
var (
	// ErrVersionUnavailable: the version existed but was vacuumed or its
	// log cleaned up; the error names the oldest readable version.
	ErrVersionUnavailable = catalogadapter.ErrVersionUnavailable
	// ErrRetention: VACUUM with a retention below the table's, not allowed.
	ErrRetention = catalogadapter.ErrRetention
)

// MaintenanceRun is the outcome of the last OPTIMIZE (or auto-compaction)
// or VACUUM this sink ran.
type MaintenanceRun struct {
	At  time.Time // zero: never run
	Err error     // nil: it succeeded
}

// maintenance records the last runs; its own lock, so that status reads
// never wait for a commit.
type maintenance struct {
	mu               sync.Mutex
	optimize, vacuum MaintenanceRun
}

func (m *maintenance) record(run *MaintenanceRun, at time.Time, err error) {
	m.mu.Lock()
	*run = MaintenanceRun{At: at, Err: err}
	m.mu.Unlock()
}

// LastOptimize and LastVacuum report the last runs of this sink.
func (s *Sink) LastOptimize() MaintenanceRun {
	s.maint.mu.Lock()
	defer s.maint.mu.Unlock()
	return s.maint.optimize
}

// LastVacuum reports the last VACUUM this sink ran.
func (s *Sink) LastVacuum() MaintenanceRun {
	s.maint.mu.Lock()
	defer s.maint.mu.Unlock()
	return s.maint.vacuum
}

// Optimize compacts the table's small files (OPTIMIZE SINK), staging
// with q.
func (s *Sink) Optimize(ctx context.Context, q catalogadapter.Querier, opts CompactOptions) (CompactOutcome, error) {
	c, ok := s.cfg.Provider.(catalogadapter.Compactor)
	if !ok {
		return CompactOutcome{}, fmt.Errorf("optimize %s: %w: the table's backend cannot compact", s.cfg.Table, ErrUnsupported)
	}
	if opts.TargetFileSize == 0 {
		opts.TargetFileSize = s.cfg.TargetFileSize
	}
	// One compaction at a time per table in this process, auto-compaction's
	// included: two would rewrite the same files, and on Iceberg, whose
	// rewrite commit reads every manifest, could lose every race to each
	// other.
	unlock, err := lockTable(ctx, s.cfg.Table)
	if err != nil {
		return CompactOutcome{}, fmt.Errorf("optimize %s: %w", s.cfg.Table, err)
	}
	defer unlock()
	out, err := c.Compact(ctx, s.cfg.Table, q, opts)
	s.maint.record(&s.maint.optimize, s.cfg.Now(), err)
	if err != nil {
		return out, fmt.Errorf("optimize %s: %w", s.cfg.Table, err)
	}
	return out, nil
}

// Vacuum deletes what no version within the retention needs (VACUUM SINK).
func (s *Sink) Vacuum(ctx context.Context, opts VacuumOptions) (VacuumOutcome, error) {
	v, ok := s.cfg.Provider.(catalogadapter.Vacuumer)
	if !ok {
		return VacuumOutcome{}, fmt.Errorf("vacuum %s: %w: the table's backend cannot vacuum", s.cfg.Table, ErrUnsupported)
	}
	if opts.Now == nil {
		opts.Now = s.cfg.Now
	}
	out, err := v.Vacuum(ctx, s.cfg.Table, opts)
	if !opts.DryRun {
		s.maint.record(&s.maint.vacuum, s.cfg.Now(), err)
	}
	if err != nil {
		return out, fmt.Errorf("vacuum %s: %w", s.cfg.Table, err)
	}
	return out, nil
}

// History lists the table's versions newest first, at most limit (0: all).
func (s *Sink) History(ctx context.Context, limit int) ([]HistoryEntry, error) {
	h, ok := s.cfg.Provider.(catalogadapter.Historian)
	if !ok {
		return nil, fmt.Errorf("history of %s: %w: the table's backend keeps none", s.cfg.Table, ErrUnsupported)
	}
	return h.History(ctx, s.cfg.Table, limit)
}

// VersionAt returns the version current at t.
func (s *Sink) VersionAt(ctx context.Context, t time.Time) (int64, error) {
	h, ok := s.cfg.Provider.(catalogadapter.Historian)
	if !ok {
		return 0, fmt.Errorf("time travel on %s: %w: the table's backend keeps no history", s.cfg.Table, ErrUnsupported)
	}
	return h.VersionAt(ctx, s.cfg.Table, t)
}

// ScanSQLAt returns a DuckDB query over the rows of the table at version
// (a Delta version or an Iceberg snapshot id), run on q.
func (s *Sink) ScanSQLAt(ctx context.Context, q catalogadapter.Querier, version int64) (string, error) {
	sc, ok := s.cfg.Provider.(catalogadapter.Scanner)
	if !ok {
		return "", fmt.Errorf("time travel on %s: %w: the table's backend cannot scan", s.cfg.Table, ErrUnsupported)
	}
	if version < 0 {
		return "", fmt.Errorf("time travel on %s: %w: version %d", s.cfg.Table, ErrInvalid, version)
	}
	return sc.ScanSQL(ctx, s.cfg.Table, q, version, nil)
}

// TableStats describes the table's layout now; known is false when the
// provider cannot tell.
func (s *Sink) TableStats(ctx context.Context) (stats TableStats, known bool, err error) {
	in, ok := s.cfg.Provider.(catalogadapter.Inspector)
	if !ok {
		return TableStats{}, false, nil
	}
	st, err := in.Stats(ctx, s.cfg.Table, 0)
	return st, err == nil, err
}

// PartitionColumns lists the columns by which Files reports a file's
// partition values (DataFile.Partition): the table's identity partition
// columns, read from the table now. They are what OPTIMIZE ... WHERE may
// name; a column under another transform (day, bucket, ...) has no value
// of its own to compare.
func (s *Sink) PartitionColumns(ctx context.Context) ([]string, error) {
	spec, err := s.cfg.Provider.TableSpec(ctx, s.cfg.Table)
	if err != nil {
		return nil, fmt.Errorf("partition columns of %s: %w", s.cfg.Table, err)
	}
	var out []string
	for _, f := range spec.PartitionSpec.Fields {
		if f.Transform.Kind == catalogadapter.Identity || f.Transform.Kind == "" {
			out = append(out, f.Name)
		}
	}
	return out, nil
}
