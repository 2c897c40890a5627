package sinkdef

// ALTER SINK against a definition: which SET options are the sink's own
// (kept in the definition, taken when the sink is opened again), which
// are the table's (properties the table format stores), which cannot
// change on a live sink; the column changes in the types the table's
// format stores; and the definition that follows a change.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/bytesize"
	"github.com/lakesql/lakesql/sinkddl"
	"github.com/lakesql/lakesql/sqlsink"
)

// ErrAlterRefused marks an ALTER SINK that cannot be done on a live sink
// (an option fixed when the sink was created, dropping its key column,
// ...); the error names what and why.
var ErrAlterRefused = errors.New("ALTER SINK refused")

// AlterOptions is ALTER SINK ... SET (...) sorted by owner.
type AlterOptions struct {
	// Sink are the options the definition keeps: the sink's own, and
	// target_file_size and checkpoint_interval, which the table records too.
	Sink []sinkddl.Option
	// Table are table properties, keys as the format spells them.
	Table map[string]string
}

// liveOptions are the sink's own options that may change on a live sink:
// the sink takes them between epochs. delete_mode and schema_evolution
// are the sink's behaviour, read by parseOptions when it knows them.
var liveOptions = map[string]bool{
	"flush_rows": true, "flush_bytes": true, "flush_age": true, "auto_compact": true,
	"compact_min_files": true, "memory_limit": true, "target_file_size": true,
	"checkpoint_interval": true, "delete_mode": true, "schema_evolution": true,
}

// fixedOptions cannot change on a live sink, with the reason.
var fixedOptions = map[string]string{
	"mode":           "a sink's mode is fixed when it is created: DROP SINK and CREATE SINK again (the table stays)",
	"delivery":       "a sink's delivery is fixed when it is created: DROP SINK and CREATE SINK again (the table stays)",
	"writer_id":      "the writer id names the sink's exactly-once record in the table: changing it would replay epochs already committed",
	"format_version": "upgrading an Iceberg table's format version is not built",
}

// deltaFeatures are the table options of a Delta sink besides those of
// deltaFeatureOptions: each sets one table property, whose owner (the
// Delta provider) upgrades the protocol where the property needs a table
// feature.
var deltaFeatures = map[string]string{
	"column_mapping":   "delta.columnMapping.mode",
	"deletion_vectors": "delta.enableDeletionVectors",
	"type_widening":    "delta.enableTypeWidening",
	"append_only":      "delta.appendOnly",
}

// icebergNative says why a Delta table option has no Iceberg counterpart.
var icebergNative = map[string]string{
	"column_mapping":       "Iceberg maps columns by field id natively",
	"deletion_vectors":     "Iceberg tables take deletion vectors from format version 3, set when the table is created",
	"row_tracking":         "Iceberg row lineage is not built",
	"in_commit_timestamps": "Iceberg snapshots carry their timestamps natively",
	"v2_checkpoints":       "an Iceberg table has no checkpoints",
	"type_widening":        "Iceberg widens types natively (MODIFY COLUMN)",
	"append_only":          "Iceberg has no append-only property",
}

// SplitAlterOptions reads ALTER SINK ... SET (...) for a sink of the
// format. An unknown option is ErrOption naming it; one that cannot change
// on a live sink is ErrAlterRefused naming it.
func SplitAlterOptions(format string, opts []sinkddl.Option) (AlterOptions, error) {
	out := AlterOptions{Table: map[string]string{}}
	for _, o := range opts {
		bad := func(msg string, args ...any) error {
			return fmt.Errorf("%w: option %s: %s", ErrOption, o.Key, fmt.Sprintf(msg, args...))
		}
		switch {
		case strings.HasPrefix(o.Key, catalogPrefix), strings.HasPrefix(o.Key, storagePrefix):
			return out, fmt.Errorf("%w: option %s: where a sink's table lives is fixed when it is created: DROP SINK and CREATE SINK again", ErrAlterRefused, o.Key)
		case fixedOptions[o.Key] != "":
			return out, fmt.Errorf("%w: option %s cannot change on a live sink: %s", ErrAlterRefused, o.Key, fixedOptions[o.Key])
		case liveOptions[o.Key]:
			out.Sink = append(out.Sink, o)
			if err := tableOfSinkOption(format, o, out.Table); err != nil {
				return out, err
			}
		case icebergNative[o.Key] != "" && format == sinkddl.FormatIceberg:
			return out, fmt.Errorf("%w: option %s is for Delta sinks: %s", ErrAlterRefused, o.Key, icebergNative[o.Key])
		case deltaFeatureOptions[o.Key] != "":
			if o.Kind == sinkddl.OptionInteger {
				return out, bad("%s is not TRUE or FALSE", o.Value)
			}
			prop, v, _, err := DeltaFeatureProperty(o.Key, o.Value)
			if err != nil {
				return out, err
			}
			out.Table[prop] = v
		case deltaFeatures[o.Key] != "":
			v, err := featureValue(o)
			if err != nil {
				return out, bad("%v", err)
			}
			out.Table[deltaFeatures[o.Key]] = v
		default:
			known := slices.Concat(slices.Collect(maps.Keys(liveOptions)), slices.Collect(maps.Keys(deltaFeatures)),
				slices.Collect(maps.Keys(deltaFeatureOptions)))
			slices.Sort(known)
			return out, fmt.Errorf("%w: unknown option %s (ALTER SINK ... SET knows: %s)", ErrOption, o.Key, strings.Join(known, ", "))
		}
	}
	return out, nil
}

// tableOfSinkOption adds the table property a kept option also sets:
// the target file size every writer of the table reads, and Delta's
// checkpoint interval.
func tableOfSinkOption(format string, o sinkddl.Option, props map[string]string) error {
	switch o.Key {
	case "target_file_size":
		n, err := bytesize.Parse(o.Value)
		if err != nil {
			return fmt.Errorf("%w: option %s: %v", ErrOption, o.Key, err)
		}
		if format == sinkddl.FormatIceberg {
			props["write.target-file-size-bytes"] = strconv.FormatInt(n, 10)
		} else {
			props["delta.targetFileSize"] = strconv.FormatInt(n, 10)
		}
	case "checkpoint_interval":
		if format != sinkddl.FormatDelta {
			return fmt.Errorf("%w: option %s: Delta only (an Iceberg table has no checkpoints)", ErrOption, o.Key)
		}
		n, err := strconv.Atoi(o.Value)
		if err != nil || n <= 0 {
			return fmt.Errorf("%w: option %s: %q is not a positive number of commits", ErrOption, o.Key, o.Value)
		}
		props["delta.checkpointInterval"] = strconv.Itoa(n)
	}
	return nil
}

// featureValue is the property value of a Delta table option.
func featureValue(o sinkddl.Option) (string, error) {
	if o.Key == "column_mapping" {
		switch v := strings.ToLower(o.Value); v {
		case "name", "id", "none":
			return v, nil
		}
		return "", fmt.Errorf("%q is not a column mapping mode (name, id or none)", o.Value)
	}
	switch {
	case o.Kind != sinkddl.OptionInteger && strings.EqualFold(o.Value, "true"):
		return "true", nil
	case o.Kind != sinkddl.OptionInteger && strings.EqualFold(o.Value, "false"):
		return "false", nil
	}
	return "", fmt.Errorf("%s is not TRUE or FALSE", o.Value)
}

// WithOptions returns a copy of the definition with opts set, each
// replacing the option of its key or added after the others, and checks
// that the result reads as a definition: the sink opens from it after a
// restart.
func WithOptions(cs *sinkddl.CreateSink, opts []sinkddl.Option) (*sinkddl.CreateSink, error) {
	c := *cs
	c.Options = slices.Clone(cs.Options)
	for _, o := range opts {
		i := slices.IndexFunc(c.Options, func(x sinkddl.Option) bool { return x.Key == o.Key })
		if i >= 0 {
			c.Options[i] = o
		} else {
			c.Options = append(c.Options, o)
		}
	}
	if _, err := parseOptions(c.Format, c.Options); err != nil {
		return nil, err
	}
	return &c, nil
}

// SchemaChanges turns ALTER SINK's column changes into the sink's, with
// the types a table of the definition's format stores (an Iceberg table
// has no 8- or 16-bit integers).
func SchemaChanges(cs *sinkddl.CreateSink, changes []sinkddl.ColumnChange) ([]sqlsink.SchemaChange, error) {
	out := make([]sqlsink.SchemaChange, len(changes))
	for i, c := range changes {
		sc := sqlsink.SchemaChange{Column: c.Column, NewName: c.NewName, Type: c.Type, Comment: c.Comment}
		switch c.Kind {
		case sinkddl.ColumnAdd:
			sc.Kind = catalogadapter.AddColumn
		case sinkddl.ColumnModify:
			sc.Kind = catalogadapter.WidenColumn
		case sinkddl.ColumnRename:
			sc.Kind = catalogadapter.RenameColumn
		case sinkddl.ColumnDrop:
			sc.Kind = catalogadapter.DropColumn
		}
		if c.Type != nil && cs.Format == sinkddl.FormatIceberg {
			s, err := icebergSchema([]sinkddl.ColumnDef{{Name: c.Column, Type: c.Type}})
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", c.Kind, c.Column, err)
			}
			sc.Type = s.Field(0).Type
		}
		out[i] = sc
	}
	return out, nil
}

// WithColumns returns a copy of the definition whose columns follow the
// table's schema after changes: an added or modified column takes the
// type as ALTER SINK spelled it, a renamed one its new name (in the key
// and the partitioning too), a dropped one is gone; a column the changes
// do not name keeps its definition. A definition without columns (it
// attached to a table) stays without: it takes the table's schema.
func WithColumns(cs *sinkddl.CreateSink, changes []sinkddl.ColumnChange, now *arrow.Schema) *sinkddl.CreateSink {
	c := *cs
	if len(cs.Columns) == 0 {
		return &c
	}
	cols := slices.Clone(cs.Columns)
	c.PrimaryKey = slices.Clone(cs.PrimaryKey)
	c.PartitionBy = slices.Clone(cs.PartitionBy)
	find := func(name string) int {
		return slices.IndexFunc(cols, func(d sinkddl.ColumnDef) bool { return strings.EqualFold(d.Name, name) })
	}
	for _, ch := range changes {
		i := find(ch.Column)
		switch ch.Kind {
		case sinkddl.ColumnAdd:
			if i < 0 {
				cols = append(cols, sinkddl.ColumnDef{Name: ch.Column, SQLType: ch.SQLType, Type: ch.Type, Comment: ch.Comment})
			}
		case sinkddl.ColumnModify:
			if i >= 0 {
				cols[i].SQLType, cols[i].Type = ch.SQLType, ch.Type
			}
		case sinkddl.ColumnRename:
			if i >= 0 {
				old := cols[i].Name
				cols[i].Name = ch.NewName
				for k, name := range c.PrimaryKey {
					if name == old {
						c.PrimaryKey[k] = ch.NewName
					}
				}
				for k := range c.PartitionBy {
					if c.PartitionBy[k].Column == old {
						c.PartitionBy[k].Column = ch.NewName
					}
				}
			}
		case sinkddl.ColumnDrop:
			if i >= 0 {
				cols = slices.Delete(cols, i, i+1)
			}
		}
	}
	// The table's order and nullability decide: a backend may place or
	// mark a column its own way.
	if now != nil {
		ordered := make([]sinkddl.ColumnDef, 0, len(cols))
		for _, f := range now.Fields() {
			if i := find(f.Name); i >= 0 {
				d := cols[i]
				d.NotNull = !f.Nullable
				ordered = append(ordered, d)
			}
		}
		if len(ordered) == len(now.Fields()) {
			cols = ordered
		}
	}
	c.Columns = cols
	return &c
}
