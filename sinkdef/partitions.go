package sinkdef

// PARTITION BY against the table: what it asks the catalog adapter for,
// and whether an existing table is partitioned that way. Delta sinks take
// plain columns only (sinkConfig refuses transforms for them); Iceberg
// sinks take Iceberg's transforms.

import (
	"fmt"
	"strings"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/sinkddl"
)

// partitionSpec is PARTITION BY as the catalog adapter spells it.
func partitionSpec(exprs []sinkddl.PartitionExpr) catalogadapter.PartitionSpec {
	var spec catalogadapter.PartitionSpec
	for _, p := range exprs {
		kind := catalogadapter.TransformKind(p.Transform)
		if kind == "" {
			kind = catalogadapter.Identity
		}
		spec.Fields = append(spec.Fields, catalogadapter.PartitionField{
			Name: p.Column, Transform: catalogadapter.Transform{Kind: kind, Param: p.Param}})
	}
	return spec
}

// samePartitioning checks the table's partitioning against PARTITION BY:
// a sink that declares one must get it, not an existing table's other one.
func samePartitioning(want []sinkddl.PartitionExpr, got catalogadapter.PartitionSpec) error {
	w := partitionSpec(want).Fields
	same := len(w) == len(got.Fields)
	for i := 0; same && i < len(w); i++ {
		g := got.Fields[i]
		same = strings.EqualFold(w[i].Name, g.Name) && w[i].Transform.Kind == g.Transform.Kind && w[i].Transform.Param == g.Transform.Param
	}
	if same {
		return nil
	}
	show := func(fs []catalogadapter.PartitionField) string {
		if len(fs) == 0 {
			return "not partitioned"
		}
		parts := make([]string, len(fs))
		for i, f := range fs {
			parts[i] = sinkddl.PartitionExpr{Column: f.Name, Transform: string(f.Transform.Kind), Param: f.Transform.Param}.String()
		}
		return "PARTITION BY (" + strings.Join(parts, ", ") + ")"
	}
	return fmt.Errorf("%w: the table is %s, the sink says %s", sinkddl.ErrInvalidDefinition, show(got.Fields), show(w))
}
