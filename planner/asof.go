package planner

// Time travel: SELECT ... FROM sink AS OF <version> | AS OF TIMESTAMP(...).
// go-mysql-server parses AS OF and asks the database for the table at that
// revision (sql.VersionedDatabase); the table it gets reads that version
// through the sink (Sink.ScanSQLAt) and is read-only. A time is read in
// the session's time_zone (+00:00 unless the session sets another), the
// zone SHOW SINK HISTORY shows its timestamps in.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/lakesql/lakesql/sqlsink"
)

var _ gms.VersionedDatabase = (*database)(nil)

// GetTableInsensitiveAsOf implements sql.VersionedDatabase. asOf is what
// go-mysql-server evaluated: a string (AS OF 3, AS OF '2026-12-01
// 10:00:00') or a time (AS OF TIMESTAMP('...')).
func (d *database) GetTableInsensitiveAsOf(ctx *gms.Context, name string, asOf any) (gms.Table, bool, error) {
	tbl, ok, err := d.GetTableInsensitive(ctx, name)
	if err != nil || !ok {
		return tbl, ok, err
	}
	var base *table
	switch t := tbl.(type) {
	case *table:
		base = t
	case *keyedTable:
		base = t.table
	default:
		return tbl, true, nil // unreadable: it fails with its reason on use
	}
	version, err := resolveAsOf(ctx, base.sink, asOf)
	if err != nil {
		return nil, false, failed(ctx, asOfError(base.h.rec.Name, err))
	}
	scan, err := base.sink.ScanSQLAt(ctx, d.engine.db, version)
	if err != nil {
		return nil, false, failed(ctx, asOfError(base.h.rec.Name, err))
	}
	at := *base
	at.at = scan
	return &asOfTable{t: &at, version: version}, true, nil
}

// GetTableNamesAsOf implements sql.VersionedDatabase: the sinks are the
// same at every version.
func (d *database) GetTableNamesAsOf(ctx *gms.Context, _ any) ([]string, error) {
	return d.GetTableNames(ctx)
}

// resolveAsOf turns an AS OF value into a version (Delta) or snapshot id
// (Iceberg): an integer is one; a time is the version current then.
func resolveAsOf(ctx *gms.Context, s *sqlsink.Sink, asOf any) (int64, error) {
	var at time.Time
	switch v := asOf.(type) {
	case string:
		text := strings.TrimSpace(v)
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return n, nil
		}
		t, err := parseAsOfTime(text, sessionLocation(ctx))
		if err != nil {
			return 0, err
		}
		at = t
	case time.Time:
		// go-mysql-server's DATETIME values are wall clocks labelled UTC.
		at = time.Date(v.Year(), v.Month(), v.Day(), v.Hour(), v.Minute(), v.Second(), v.Nanosecond(), sessionLocation(ctx))
	default:
		return 0, fmt.Errorf("%w: AS OF takes a version number or a time, not %T", sqlsink.ErrInvalid, asOf)
	}
	return s.VersionAt(ctx, at)
}

// asOfLayouts are the times AS OF '...' takes.
var asOfLayouts = []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"}

func parseAsOfTime(text string, loc *time.Location) (time.Time, error) {
	for _, layout := range asOfLayouts {
		if t, err := time.ParseInLocation(layout, text, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: AS OF %q is neither a version number nor a time (YYYY-MM-DD [hh:mm:ss[.ffffff]])",
		sqlsink.ErrInvalid, text)
}

// asOfError gives an AS OF failure its code: a version no longer readable
// is ER_TABLE_DEF_CHANGED (1412, MySQL's code for a snapshot older than
// what the table keeps); one that never existed, or a time before the
// table's first version, ER_WRONG_ARGUMENTS (1210). Other errors keep
// theirs.
func asOfError(sink string, err error) error {
	var gone *sqlsink.VersionGoneError
	switch {
	case errors.As(err, &gone), errors.Is(err, sqlsink.ErrVersionUnavailable):
		return mysql.NewSQLError(erTableDefChanged, mysql.SSUnknownSQLState, "sink %s AS OF: %s", sink, err.Error())
	case errors.Is(err, sqlsink.ErrInvalid):
		return mysql.NewSQLError(mysql.ERWrongArguments, mysql.SSUnknownSQLState, "Incorrect arguments to AS OF: sink %s: %s", sink, err.Error())
	}
	return fmt.Errorf("sink %s AS OF: %w", sink, err)
}

// erTableDefChanged is MySQL's ER_TABLE_DEF_CHANGED, which vitess does not name.
const erTableDefChanged = 1412

// asOfTable is a sink at one version: read-only, so that an UPDATE or
// DELETE ... AS OF is refused by go-mysql-server (the table is neither
// updatable nor deletable).
type asOfTable struct {
	t       *table // its at is the version's scan
	version int64
}

var (
	_ gms.Table          = (*asOfTable)(nil)
	_ gms.TemporaryTable = (*asOfTable)(nil)
)

func (a *asOfTable) Name() string               { return a.t.Name() }
func (a *asOfTable) String() string             { return fmt.Sprintf("%s AS OF %d", a.t.Name(), a.version) }
func (a *asOfTable) Schema() gms.Schema         { return a.t.schema }
func (a *asOfTable) Collation() gms.CollationID { return gms.Collation_Default }
func (a *asOfTable) IsTemporary() bool          { return false }

func (a *asOfTable) Partitions(ctx *gms.Context) (gms.PartitionIter, error) {
	return a.t.Partitions(ctx)
}

// PartitionRows reads the version; it takes no lock: no write goes with it.
func (a *asOfTable) PartitionRows(ctx *gms.Context, _ gms.Partition) (gms.RowIter, error) {
	iter, err := a.t.scan(ctx)
	return iter, failed(ctx, err)
}

// sessionLocation is the session's time_zone as a location; UTC when it
// cannot tell (lakesql's default time_zone is +00:00).
func sessionLocation(ctx context.Context) *time.Location {
	gctx, ok := ctx.(*gms.Context)
	if !ok || gctx.Session == nil {
		return time.UTC
	}
	zone, err := function.SessionTimeZone(gctx)
	if err != nil {
		return time.UTC
	}
	return zoneLocation(zone)
}

// zoneLocation reads a MySQL time zone: an offset (+05:30) or a name.
func zoneLocation(zone string) *time.Location {
	if zone == "UTC" || zone == "+00:00" || zone == "" {
		return time.UTC
	}
	if len(zone) == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':' {
		h, herr := strconv.Atoi(zone[1:3])
		m, merr := strconv.Atoi(zone[4:6])
		if herr == nil && merr == nil {
			off := h*3600 + m*60
			if zone[0] == '-' {
				off = -off
			}
			return time.FixedZone(zone, off)
		}
	}
	if loc, err := time.LoadLocation(zone); err == nil {
		return loc
	}
	return time.UTC
}

// wallClock is t as go-mysql-server shows a DATETIME: the wall clock in
// loc, labelled UTC.
func wallClock(t time.Time, loc *time.Location) time.Time {
	w := t.In(loc)
	return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
}
