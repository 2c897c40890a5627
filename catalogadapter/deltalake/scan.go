package deltalake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// Files implements catalogadapter.Scanner. Paths are the add actions' own
// spelling, which is what Commit's Removes expects back.
func (p *Provider) Files(ctx context.Context, id catalogadapter.TableIdent) (int64, []catalogadapter.DataFile, error) {
	_, snap, err := p.latest(ctx, id)
	if err != nil {
		return 0, nil, err
	}
	schema, err := snap.Schema()
	if err != nil {
		return 0, nil, readError(id.Name, err)
	}
	// Under column mapping, stats and partition values are keyed by the
	// physical column names.
	mode := snap.Metadata.Configuration["delta.columnMapping.mode"]
	mapped := mode != "" && mode != "none"
	logical := map[string]*delta.StructField{}
	for _, f := range schema.Fields {
		logical[physicalName(f, mapped)] = f
	}
	out := make([]catalogadapter.DataFile, 0, len(snap.Files()))
	for _, a := range snap.Files() {
		df := catalogadapter.DataFile{Path: a.Path, Rows: -1}
		if n, ok := a.NumRecords(); ok {
			if a.DeletionVector != nil {
				n -= a.DeletionVector.Cardinality
			}
			df.Rows = n
		}
		df.Min, df.Max = bounds(a.Stats, logical)
		if df.Partition, err = typedPartition(snap, schema, a); err != nil {
			return 0, nil, fmt.Errorf("files of %s: %w", id.Name, err)
		}
		out = append(out, df)
	}
	return snap.Version, out, nil
}

// partitionKeys are the keys of snap's partitionValues: the partition
// columns' physical names under column mapping, else their names.
func partitionKeys(snap *delta.Snapshot) ([]string, error) {
	mode := snap.Metadata.Configuration["delta.columnMapping.mode"]
	if mode == "" || mode == "none" {
		return snap.Metadata.PartitionColumns, nil
	}
	schema, err := snap.Schema()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(snap.Metadata.PartitionColumns))
	for i, c := range snap.Metadata.PartitionColumns {
		f := schema.Field(c)
		if f == nil {
			return nil, fmt.Errorf("%w: partition column %q is not in the schema", catalogadapter.ErrUnsupported, c)
		}
		out[i] = physicalName(f, true)
	}
	return out, nil
}

// typedPartition is a's partition values, typed, by logical column name;
// nil for an unpartitioned table.
func typedPartition(snap *delta.Snapshot, schema *delta.StructType, a *delta.Add) (map[string]any, error) {
	cols := snap.Metadata.PartitionColumns
	if len(cols) == 0 {
		return nil, nil
	}
	mode := snap.Metadata.Configuration["delta.columnMapping.mode"]
	mapped := mode != "" && mode != "none"
	out := make(map[string]any, len(cols))
	for _, c := range cols {
		f := schema.Field(c)
		if f == nil {
			return nil, fmt.Errorf("%w: partition column %q is not in the schema", catalogadapter.ErrUnsupported, c)
		}
		v, err := delta.ParsePartitionValue(f.Type, a.PartitionValues[physicalName(f, mapped)])
		if err != nil {
			return nil, fmt.Errorf("file %s: %w: %w", a.Path, catalogadapter.ErrUnsupported, err)
		}
		out[c] = v
	}
	return out, nil
}

func physicalName(f *delta.StructField, mapped bool) string {
	if mapped {
		if p, ok := f.Metadata["delta.columnMapping.physicalName"].(string); ok && p != "" {
			return p
		}
	}
	return f.Name
}

// bounds reads the top-level minValues and maxValues of a file's stats,
// renamed to logical column names. Nested columns and nulls have no bound.
// A float column's bound is the float32 its text stands for: read as a
// float64, "1.1" is below the float32 1.1 it bounds, and an upsert of that
// key would skip the file that holds it.
func bounds(stats string, logical map[string]*delta.StructField) (minV, maxV map[string]any) {
	if stats == "" {
		return nil, nil
	}
	var st struct {
		MinValues map[string]any `json:"minValues"`
		MaxValues map[string]any `json:"maxValues"`
	}
	dec := json.NewDecoder(strings.NewReader(stats))
	dec.UseNumber()
	if err := dec.Decode(&st); err != nil {
		return nil, nil
	}
	pick := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			f, ok := logical[k]
			if !ok {
				continue
			}
			switch x := v.(type) {
			case nil, map[string]any, []any:
				continue
			case json.Number:
				bits := 64
				if f.Type == delta.TypeFloat {
					bits = 32
				}
				n, err := strconv.ParseFloat(x.String(), bits)
				if err != nil {
					continue
				}
				if bits == 32 {
					out[f.Name] = float32(n)
				} else {
					out[f.Name] = n
				}
				continue
			}
			out[f.Name] = v
		}
		return out
	}
	return pick(st.MinValues), pick(st.MaxValues)
}

// ScanSQL implements catalogadapter.Scanner. version < 0 reads the latest
// version. The session of q is switched to TimeZone 'UTC', which the
// query's timestamp casts rely on.
func (p *Provider) ScanSQL(ctx context.Context, id catalogadapter.TableIdent, q catalogadapter.Querier, version int64, paths []string) (string, error) {
	if q == nil {
		return "", fmt.Errorf("scan %s: %w: nil querier", id.Name, catalogadapter.ErrInvalid)
	}
	t, tpath, err := p.table(id)
	if err != nil {
		return "", err
	}
	var snap *delta.Snapshot
	if version < 0 {
		snap, err = p.fresh(ctx, t, tpath)
	} else {
		snap, err = t.At(ctx, version)
	}
	if err == nil && version >= 0 {
		err = p.checkReadable(ctx, t, tpath, snap)
		if err != nil {
			return "", fmt.Errorf("scan %s: %w", tpath, err)
		}
	}
	if err != nil {
		if ve := p.versionUnavailable(ctx, t, tpath, version, err); ve != nil {
			return "", fmt.Errorf("scan %s: %w", tpath, ve)
		}
		err = readError(tpath, err)
		if version >= 0 {
			// At past the end is the caller's mistake, not the table's.
			if latest, lerr := t.Latest(ctx); lerr == nil && version > latest.Version {
				return "", fmt.Errorf("scan %s: %w: version %d is past the latest version %d",
					tpath, catalogadapter.ErrInvalid, version, latest.Version)
			}
		}
		return "", err
	}
	if err := delta.PrepareDuckDB(ctx, q); err != nil {
		return "", fmt.Errorf("scan %s: prepare DuckDB: %w", tpath, err)
	}
	var query string
	if paths == nil {
		query, err = snap.ScanSQL(ctx, q)
	} else {
		root := filepath.ToSlash(tpath)
		live := make(map[string]*delta.Add, len(snap.Files()))
		for _, f := range snap.Files() {
			live[delta.CanonicalPath(root, f.Path)] = f
		}
		files := make([]*delta.Add, 0, len(paths))
		seen := map[*delta.Add]bool{}
		for _, pth := range paths {
			f, ok := live[delta.CanonicalPath(root, pth)]
			if !ok {
				return "", fmt.Errorf("scan %s: %w: file %s is not in the table at version %d",
					tpath, catalogadapter.ErrConflict, pth, snap.Version)
			}
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
		query, err = snap.ScanFilesSQL(ctx, q, files)
	}
	if err != nil {
		switch {
		case errors.Is(err, delta.ErrUnsupportedFeature):
			return "", fmt.Errorf("scan %s at version %d: %w: %w", tpath, snap.Version, catalogadapter.ErrUnsupported, err)
		case errors.Is(err, delta.ErrCorruptLog):
			return "", fmt.Errorf("scan %s at version %d: %w: %w", tpath, snap.Version, catalogadapter.ErrCorrupt, err)
		}
		return "", fmt.Errorf("scan %s at version %d: %w", tpath, snap.Version, err)
	}
	return query, nil
}
