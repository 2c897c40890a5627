package apacheiceberg

import (
	"context"
	"fmt"
	"time"

	ice "github.com/apache/iceberg-go"

	"github.com/lakesql/lakesql/catalogadapter"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// Files implements catalogadapter.Scanner: the live data files of the
// current snapshot, by the paths Commit's Removes expects. Min and Max
// come from the files' lower and upper bounds (numbers and strings only;
// string bounds may be truncated, which keeps them bounds). Partition
// holds identity partition values by column; other transforms' values
// are not column values and are left out. Rows is -1 for a file that
// delete files apply to.
func (p *Provider) Files(ctx context.Context, id catalogadapter.TableIdent) (int64, []catalogadapter.DataFile, error) {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	tbl, _, err := p.load(ctx, id)
	if err != nil {
		return 0, nil, err
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return -1, nil, nil
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return 0, nil, fmt.Errorf("files of %s: %w", id, err)
	}
	schema := tbl.Schema()
	identity := identityColumns(tbl)
	spec := tbl.Spec()
	seen := map[string]bool{}
	out := make([]catalogadapter.DataFile, 0, len(tasks))
	for _, t := range tasks {
		f := t.File
		if seen[f.FilePath()] {
			continue
		}
		seen[f.FilePath()] = true
		df := catalogadapter.DataFile{Path: f.FilePath(), Rows: f.Count()}
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			df.Rows = -1
		}
		df.Min = bounds(schema, f.LowerBoundValues())
		df.Max = bounds(schema, f.UpperBoundValues())
		if pv := partitionValues(f, identity); int(f.SpecID()) == spec.ID() && len(pv) > 0 {
			df.Partition = pv
		}
		out = append(out, df)
	}
	return snap.SnapshotID, out, nil
}

// bounds decodes top-level numeric and string bounds by column name.
func bounds(schema *ice.Schema, raw map[int][]byte) map[string]any {
	out := map[string]any{}
	for _, f := range schema.Fields() {
		b, ok := raw[f.ID]
		if !ok {
			continue
		}
		lit, err := ice.LiteralFromBytes(f.Type, b)
		if err != nil {
			continue
		}
		switch v := lit.(type) {
		case ice.Int32Literal:
			out[f.Name] = int64(v)
		case ice.Int64Literal:
			out[f.Name] = int64(v)
		case ice.Float32Literal:
			out[f.Name] = float64(v)
		case ice.Float64Literal:
			out[f.Name] = float64(v)
		case ice.StringLiteral:
			out[f.Name] = string(v)
		}
	}
	return out
}

// plainValue turns a partition value into what the sink compares, as the
// Delta backend reports the same types: numbers, strings, booleans, a date
// or timestamp as a UTC time.Time (a date at its midnight), a decimal as
// its digits. The rest (time of day, uuid, binary) becomes nil, which
// prunes nothing and matches no OPTIMIZE WHERE.
func plainValue(v any) any {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case int64, float64, string, bool:
		return x
	case float32:
		return float64(x)
	case ice.Date:
		return x.ToTime().UTC()
	case ice.Timestamp:
		return x.ToTime().UTC()
	case ice.TimestampNano:
		return x.ToTime().UTC()
	case ice.Decimal:
		return x.String()
	case ice.DecimalLiteral:
		return ice.Decimal(x).String()
	case time.Time:
		return x.UTC()
	}
	return nil
}

// ScanSQL implements catalogadapter.Scanner: a DuckDB query over the rows
// of a snapshot (version is its id; below 0 the current one), with delete
// files applied, restricted to paths unless nil. The files of a table on
// object storage are downloaded into the catalog's cache folder first
// (once: a copy is kept), and the query reads the copies.
func (p *Provider) ScanSQL(ctx context.Context, id catalogadapter.TableIdent, q catalogadapter.Querier, version int64, paths []string) (string, error) {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	if q == nil {
		return "", fmt.Errorf("scan %s: %w: nil querier", id, catalogadapter.ErrInvalid)
	}
	tbl, _, err := p.load(ctx, id)
	if err != nil {
		return "", err
	}
	if version >= 0 && tbl.SnapshotByID(version) == nil {
		return "", fmt.Errorf("scan %s: %w", id, missingVersion(ctx, tbl, version))
	}
	query, _, err := icetable.ScanSQL(ctx, tbl, icetable.ScanOptions{SnapshotID: version, Paths: paths, CacheDir: p.cat.CacheDir(),
		AllowedRoots: p.opts.AllowedRoots})
	if err != nil {
		return "", fmt.Errorf("scan %s: %w", id, mapErr(err))
	}
	return query, nil
}
