package iceberg

import (
	"fmt"

	ice "github.com/apache/iceberg-go"
)

// PartitionField derives one partition value from a source column, as
// PARTITION BY (col, day(ts), bucket(16, id), truncate(4, s), ...) says.
type PartitionField struct {
	Column    string
	SourceID  int // set when read from a table
	Transform ice.Transform
}

// PartitionSpec builds the spec of a new table from its fields. Each
// transform must accept its column's type (day of a timestamp or date,
// bucket of an int, long, decimal, date, time, timestamp, string, uuid or
// binary, truncate of an int, long, decimal, string or binary, ...).
func PartitionSpec(schema *ice.Schema, fields []PartitionField) (ice.PartitionSpec, error) {
	if len(fields) == 0 {
		return *ice.UnpartitionedSpec, nil
	}
	opts := make([]ice.PartitionOption, 0, len(fields))
	names := map[string]bool{}
	for _, f := range fields {
		src, ok := schema.FindFieldByName(f.Column)
		if !ok {
			return ice.PartitionSpec{}, fmt.Errorf("%w: partition column %q is not in the schema", ErrInvalid, f.Column)
		}
		tr := f.Transform
		if tr == nil {
			tr = ice.IdentityTransform{}
		}
		if !tr.CanTransform(src.Type) {
			return ice.PartitionSpec{}, fmt.Errorf("%w: partition transform %s cannot apply to column %q of type %s",
				ErrInvalid, tr, f.Column, src.Type)
		}
		name := partitionFieldName(f.Column, tr)
		if names[name] {
			return ice.PartitionSpec{}, fmt.Errorf("%w: partition field %s(%s) is given twice", ErrInvalid, tr, f.Column)
		}
		names[name] = true
		opts = append(opts, ice.AddPartitionFieldByName(f.Column, name, tr, schema, nil))
	}
	spec, err := ice.NewPartitionSpecOpts(opts...)
	if err != nil {
		return ice.PartitionSpec{}, fmt.Errorf("%w: partition spec: %w", ErrInvalid, err)
	}
	return spec, nil
}

// partitionFieldName follows Java Iceberg's names: the column for
// identity, else column_transform (id_bucket_16, s_trunc_4, ts_day).
func partitionFieldName(col string, tr ice.Transform) string {
	switch t := tr.(type) {
	case ice.IdentityTransform:
		return col
	case ice.BucketTransform:
		return fmt.Sprintf("%s_bucket_%d", col, t.NumBuckets)
	case ice.TruncateTransform:
		return fmt.Sprintf("%s_trunc_%d", col, t.Width)
	case ice.YearTransform:
		return col + "_year"
	case ice.MonthTransform:
		return col + "_month"
	case ice.DayTransform:
		return col + "_day"
	case ice.HourTransform:
		return col + "_hour"
	}
	return col + "_" + tr.String()
}

// SpecFields lists a spec's fields by source column name.
func SpecFields(schema *ice.Schema, spec ice.PartitionSpec) ([]PartitionField, error) {
	var out []PartitionField
	for _, f := range spec.Fields() {
		if len(f.SourceIDs) > 1 {
			return nil, fmt.Errorf("%w: multi-argument partition transform %s", ErrUnsupported, f.Transform)
		}
		name, ok := schema.FindColumnName(f.SourceID())
		if !ok {
			return nil, fmt.Errorf("%w: partition source field %d is not in the schema", ErrUnsupported, f.SourceID())
		}
		out = append(out, PartitionField{Column: name, SourceID: f.SourceID(), Transform: f.Transform})
	}
	return out, nil
}
