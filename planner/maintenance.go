package planner

// OPTIMIZE SINK, VACUUM SINK and SHOW SINK HISTORY. OPTIMIZE and VACUUM
// are table operations, not epochs: they take no part in the session's
// transaction and never hold the sink's epoch lock (sinkHandle.acquire),
// so other sessions' commits go on while they run; the backend resolves
// a conflict with a concurrent commit. Like MySQL's OPTIMIZE TABLE, they
// first commit the session's open transaction (an implicit commit).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/lakesql/lakesql/internal/intconv"
	"github.com/lakesql/lakesql/internal/secret"
	"github.com/lakesql/lakesql/sinkddl"
	"github.com/lakesql/lakesql/sqlsink"
)

// VacuumRetentionCheckVariable is the session variable that, when OFF,
// lets VACUUM SINK ... RETAIN go below the table's retention (Spark's
// spark.databricks.delta.retentionDurationCheck.enabled).
const VacuumRetentionCheckVariable = "lakesql_vacuum_retention_check"

// The result columns of the maintenance statements.
var (
	optimizeColumns = []string{"Sink", "Version", "Partitions", "Files_removed", "Files_added",
		"Bytes_removed", "Bytes_added", "Delete_files_removed"}
	vacuumColumns = []string{"Sink", "Files_deleted", "Bytes_deleted", "Snapshots_expired",
		"Manifests_rewritten", "Oldest_version"}
	vacuumDryRunColumns = []string{"Path", "Size", "Reason"}
	historyColumns      = []string{"Version", "Timestamp", "Operation", "Writer_id", "Epoch",
		"Rows_added", "Rows_removed", "Files_added", "Files_removed"}
	// maintenanceStatusColumns follow SHOW SINK STATUS's first columns.
	maintenanceStatusColumns = []string{"Live_files", "Small_files", "Table_bytes", "Versions_since_checkpoint",
		"Last_optimize", "Optimize_outcome", "Last_vacuum", "Vacuum_outcome", "Warning"}
)

// maintenanceSchema is the result schema of a maintenance statement; nil
// for other statements.
func maintenanceSchema(st sinkddl.Statement) gms.Schema {
	col := func(name string, t gms.Type) *gms.Column {
		return &gms.Column{Name: name, Type: t, Nullable: true}
	}
	ints := func(names ...string) gms.Schema {
		var s gms.Schema
		for _, n := range names {
			s = append(s, col(n, types.Int64))
		}
		return s
	}
	switch st := st.(type) {
	case *sinkddl.OptimizeSink:
		return append(gms.Schema{col("Sink", types.LongText)}, ints(optimizeColumns[1:]...)...)
	case *sinkddl.VacuumSink:
		if st.DryRun {
			return gms.Schema{col("Path", types.LongText), col("Size", types.Int64), col("Reason", types.LongText)}
		}
		return append(gms.Schema{col("Sink", types.LongText)}, ints(vacuumColumns[1:]...)...)
	case *sinkddl.ShowSinkHistory:
		return gms.Schema{col("Version", types.Int64), col("Timestamp", types.DatetimeMaxPrecision),
			col("Operation", types.LongText), col("Writer_id", types.LongText), col("Epoch", types.Int64),
			col("Rows_added", types.Int64), col("Rows_removed", types.Int64),
			col("Files_added", types.Int64), col("Files_removed", types.Int64)}
	}
	return nil
}

// maintenanceStatusSchema are the types of maintenanceStatusColumns.
func maintenanceStatusSchema() gms.Schema {
	s := gms.Schema{}
	for i, n := range maintenanceStatusColumns {
		t := gms.Type(types.Int64)
		switch i {
		case 4, 6:
			t = types.DatetimeMaxPrecision
		case 5, 7, 8:
			t = types.LongText
		}
		s = append(s, &gms.Column{Name: n, Type: t, Nullable: true})
	}
	return s
}

// maintainedSink returns the opened sink a maintenance statement names.
func (e *Engine) maintainedSink(ctx context.Context, name string) (*sinkHandle, *sqlsink.Sink, error) {
	h, ok := e.lookup(name)
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s", ErrNoSink, name)
	}
	s, err := h.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	return h, s, nil
}

func (e *Engine) optimizeSink(ctx context.Context, st *sinkddl.OptimizeSink) (*Result, error) {
	h, s, err := e.maintainedSink(ctx, st.Name)
	if err != nil {
		return nil, err
	}
	var opts sqlsink.CompactOptions
	if st.Where != nil {
		if err := checkPartitionColumns(ctx, h, s, st.Where); err != nil {
			return nil, err
		}
		where := st.Where
		opts.Partitions = func(partition map[string]any) (bool, error) {
			ok, err := where.Eval(partition)
			if err != nil {
				return false, fmt.Errorf("OPTIMIZE SINK %s WHERE %s: %w", h.rec.Name, where, err)
			}
			return ok, nil
		}
	}
	out, err := s.Optimize(ctx, e.db, opts)
	if err != nil {
		return nil, err
	}
	var version any
	if out.Committed {
		version = out.Version
	}
	return &Result{Columns: optimizeColumns, Rows: [][]any{{h.rec.Name, version, int64(out.Partitions),
		int64(out.FilesRemoved), int64(out.FilesAdded), out.BytesRemoved, out.BytesAdded, int64(out.DeleteFilesRemoved)}}}, nil
}

// checkPartitionColumns refuses a WHERE that names a column other than
// the table's partition columns, as MySQL refuses an unknown column
// (1054); the predicate's names are matched case-insensitively.
func checkPartitionColumns(ctx context.Context, h *sinkHandle, s *sqlsink.Sink, where *sinkddl.Predicate) error {
	parts, err := s.PartitionColumns(ctx)
	if err != nil {
		return err
	}
	for _, c := range where.Columns() {
		found := false
		for _, p := range parts {
			found = found || strings.EqualFold(p, c)
		}
		if found {
			continue
		}
		which := "it has no partition columns"
		if len(parts) > 0 {
			which = "its partition columns are " + strings.Join(parts, ", ")
		}
		return mysql.NewSQLError(mysql.ERBadFieldError, "42S22",
			"Unknown column '%s' in 'where clause': OPTIMIZE SINK %s WHERE may name the table's partition columns only, and %s",
			c, h.rec.Name, which)
	}
	return nil
}

func (e *Engine) vacuumSink(ctx context.Context, st *sinkddl.VacuumSink) (*Result, error) {
	name, out, err := e.vacuum(ctx, st)
	if err != nil {
		return nil, err
	}
	if st.DryRun {
		res := &Result{Columns: vacuumDryRunColumns, Rows: [][]any{}}
		for _, f := range out.Files {
			res.Rows = append(res.Rows, []any{f.Path, f.Size, f.Reason})
		}
		return res, nil
	}
	return vacuumSummary(name, out), nil
}

// vacuumSummary is VACUUM's one row; of a dry run, what it would delete.
func vacuumSummary(name string, out sqlsink.VacuumOutcome) *Result {
	bytes := out.BytesDeleted
	if bytes == 0 {
		for _, f := range out.Files {
			bytes += f.Size
		}
	}
	return &Result{Columns: vacuumColumns, Rows: [][]any{{name, int64(len(out.Files)), bytes,
		int64(out.SnapshotsExpired), int64(out.ManifestsRewritten), out.OldestVersion}}}
}

// vacuum runs VACUUM SINK and returns the sink's name and the outcome.
func (e *Engine) vacuum(ctx context.Context, st *sinkddl.VacuumSink) (string, sqlsink.VacuumOutcome, error) {
	var none sqlsink.VacuumOutcome
	h, s, err := e.maintainedSink(ctx, st.Name)
	if err != nil {
		return "", none, err
	}
	opts := sqlsink.VacuumOptions{Retain: -1, DryRun: st.DryRun}
	if st.HasRetain {
		if opts.Retain, err = retention(h.rec.Name, st.RetainHours); err != nil {
			return "", none, err
		}
	}
	opts.AllowShortRetention = !retentionCheck(ctx)
	out, err := s.Vacuum(ctx, opts)
	if errors.Is(err, sqlsink.ErrRetention) {
		return "", none, mysql.NewSQLError(mysql.ERWrongArguments, mysql.SSUnknownSQLState,
			"Incorrect arguments to VACUUM SINK %s: %s (a shorter retention can break readers of older versions and stages in flight; SET %s = OFF allows it)",
			h.rec.Name, secret.MaskURI(err.Error()), VacuumRetentionCheckVariable)
	}
	return h.rec.Name, out, err
}

// retention turns RETAIN n HOURS into a duration: a negative one, or one
// beyond what a duration holds (292 years), is refused (1210).
func retention(sink string, hours float64) (time.Duration, error) {
	d := hours * float64(time.Hour)
	if hours < 0 || math.IsNaN(d) || d >= math.MaxInt64 {
		return 0, mysql.NewSQLError(mysql.ERWrongArguments, mysql.SSUnknownSQLState,
			"Incorrect arguments to VACUUM SINK %s: RETAIN %v HOURS: the retention must be between 0 and %d hours",
			sink, hours, int64(math.MaxInt64/int64(time.Hour)))
	}
	return time.Duration(d), nil
}

// retentionCheck reads lakesql_vacuum_retention_check: on unless the
// session turned it off.
func retentionCheck(ctx context.Context) bool {
	gctx, ok := ctx.(*gms.Context)
	if !ok || gctx.Session == nil {
		return true
	}
	v, err := gctx.GetSessionVariable(gctx, VacuumRetentionCheckVariable)
	if err != nil {
		return true
	}
	n, ok := intconv.ToInt64(v)
	return !ok || n != 0
}

func (e *Engine) showSinkHistory(ctx context.Context, st *sinkddl.ShowSinkHistory) (*Result, error) {
	_, s, err := e.maintainedSink(ctx, st.Name)
	if err != nil {
		return nil, err
	}
	res := &Result{Columns: historyColumns, Rows: [][]any{}}
	if st.HasLimit && st.Limit == 0 {
		return res, nil
	}
	limit := 0
	if st.HasLimit && st.Limit < math.MaxInt32 {
		limit = int(st.Limit)
	}
	entries, err := s.History(ctx, limit)
	if err != nil {
		return nil, err
	}
	loc := sessionLocation(ctx)
	for _, h := range entries {
		var writer, epoch any
		if h.WriterID != "" {
			writer = h.WriterID
		}
		if h.Epoch >= 0 {
			epoch = h.Epoch
		}
		res.Rows = append(res.Rows, []any{h.Version, wallClock(h.Timestamp, loc), h.Operation, writer, epoch,
			orNull(h.RowsAdded), orNull(h.RowsRemoved), orNull(h.FilesAdded), orNull(h.FilesRemoved)})
	}
	return res, nil
}

// orNull is n, or NULL for the -1 of a count the table does not record.
func orNull(n int64) any {
	if n < 0 {
		return nil
	}
	return n
}

// maintenanceStatus is the part of a SHOW SINK STATUS row about the
// table's layout and its last OPTIMIZE and VACUUM, and the table's
// current version as its statistics read it (nil when they do not tell):
// a version OPTIMIZE, VACUUM or another writer made since this sink's
// last commit.
func maintenanceStatus(ctx context.Context, s *sqlsink.Sink) (row []any, version any) {
	row = make([]any, len(maintenanceStatusColumns))
	var warnings []string
	stats, known, err := s.TableStats(ctx)
	switch {
	case err != nil:
		warnings = append(warnings, "table statistics: "+secret.MaskURI(err.Error()))
	case known:
		if stats.Version >= 0 {
			version = stats.Version
		}
		row[0], row[1], row[2] = stats.LiveFiles, stats.SmallFiles, stats.Bytes
		row[3] = orNull(stats.VersionsSinceCheckpoint)
		if stats.TxnRetention > 0 {
			warnings = append(warnings, fmt.Sprintf(
				"the table sets delta.setTransactionRetentionDuration (%v): a writer's exactly-once record older than that may be dropped, and a replay of an epoch older than it would be applied twice",
				stats.TxnRetention))
		}
	}
	loc := sessionLocation(ctx)
	for i, run := range []sqlsink.MaintenanceRun{s.LastOptimize(), s.LastVacuum()} {
		if run.At.IsZero() {
			continue
		}
		row[4+2*i] = wallClock(run.At, loc)
		row[5+2*i] = "ok"
		if run.Err != nil {
			row[5+2*i] = secret.MaskURI(run.Err.Error())
		}
	}
	if len(warnings) > 0 {
		row[8] = strings.Join(warnings, "; ")
	}
	return row, version
}
