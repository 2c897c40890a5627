package delta

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTableRules: each rule counts only where the protocol has its
// feature on (PROTOCOL.md: invariants from writer 2, CHECK constraints
// from 3, generated columns from 4, or listed at writer 7).
func TestTableRules(t *testing.T) {
	schema := &StructType{Fields: []*StructField{
		{Name: "x", Type: TypeInteger, Nullable: true, Metadata: map[string]any{invariantKey: `{"expression": {"expression": "x > 3"}}`}},
		{Name: "g", Type: TypeInteger, Nullable: true, Metadata: map[string]any{generationKey: "x + 1"}},
	}}
	md := &Metadata{Configuration: map[string]string{ConstraintPrefix + "b": "x < 9", ConstraintPrefix + "a": "g > 0", "delta.appendOnly": "false"}}
	inv := RowCheck{Name: "invariant on x", Expr: "x > 3", Column: "x"}
	checks := []RowCheck{{Name: "a", Expr: "g > 0"}, {Name: "b", Expr: "x < 9"}}
	gen := []GeneratedColumn{{Column: "g", Expr: "x + 1"}}
	for _, c := range []struct {
		p    Protocol
		want RowRules
	}{
		{Protocol{MinReaderVersion: 1, MinWriterVersion: 1}, RowRules{}},
		{Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, RowRules{Checks: []RowCheck{inv}}},
		{Protocol{MinReaderVersion: 1, MinWriterVersion: 3}, RowRules{Checks: append([]RowCheck{inv}, checks...)}},
		{Protocol{MinReaderVersion: 1, MinWriterVersion: 4}, RowRules{Checks: append([]RowCheck{inv}, checks...), Generated: gen}},
		{Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"generatedColumns"}}, RowRules{Generated: gen}},
		{Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"checkConstraints"}}, RowRules{Checks: checks}},
	} {
		got, err := TableRules(c.p, md, schema)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%+v (-want +got):\n%s", c.p, d)
		}
	}
	a, _ := TableRules(Protocol{MinWriterVersion: 3}, md, schema)
	md2 := &Metadata{Configuration: map[string]string{ConstraintPrefix + "b": "x < 10", ConstraintPrefix + "a": "g > 0"}}
	b, _ := TableRules(Protocol{MinWriterVersion: 3}, md2, schema)
	if a.Fingerprint() == b.Fingerprint() {
		t.Fatal("a changed constraint keeps the fingerprint")
	}
	bad := &StructType{Fields: []*StructField{{Name: "x", Type: TypeInteger, Metadata: map[string]any{invariantKey: "not json"}}}}
	if _, err := TableRules(Protocol{MinWriterVersion: 2}, md, bad); !errors.Is(err, ErrUnsupportedFeature) {
		t.Fatalf("unreadable invariant: %v", err)
	}
}

// TestWithConstraint: the protocol ADD CONSTRAINT commits.
func TestWithConstraint(t *testing.T) {
	for _, c := range []struct{ in, want Protocol }{
		{Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, Protocol{MinReaderVersion: 1, MinWriterVersion: 3}},
		{Protocol{MinReaderVersion: 1, MinWriterVersion: 4}, Protocol{MinReaderVersion: 1, MinWriterVersion: 4}},
		{Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors"}},
			Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors", "checkConstraints"}}},
		{Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"checkConstraints"}}, Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"checkConstraints"}}},
	} {
		if d := cmp.Diff(c.want, WithConstraint(c.in)); d != "" {
			t.Errorf("%+v (-want +got):\n%s", c.in, d)
		}
	}
}
