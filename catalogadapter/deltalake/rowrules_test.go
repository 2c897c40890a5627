package deltalake

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// TestConstraintCommits: ADD CONSTRAINT writes delta.constraints.<name>
// with the protocol upgrade (writer 3, or the checkConstraints feature at
// writer 7), refuses a check of an older version after which data was
// added (the rows added were not checked), a taken name, and DROP of an
// unknown one; RowRules then give the constraint translated, and a commit
// requiring the old rules is a conflict.
func TestConstraintCommits(t *testing.T) {
	ctx := context.Background()
	p := New(openDB(t), Options{})
	for _, c := range []struct {
		name  string
		def   catalogadapter.TableDef
		check func(delta.Protocol) bool
	}{
		{"legacy", catalogadapter.TableDef{}, func(pr delta.Protocol) bool { return pr.MinWriterVersion == 3 }},
		{"writer 7", catalogadapter.TableDef{Properties: map[string]string{"delta.enableDeletionVectors": "true"}}, func(pr delta.Protocol) bool {
			return pr.MinWriterVersion == 7 && strings.Contains(strings.Join(pr.WriterFeatures, ","), "checkConstraints")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := newTable(t, p, c.def)
			before, err := p.RowRules(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			r := writeRows(t, p, id, idRows(1, 3))
			if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := p.AddConstraint(ctx, id, "pos", "amount > 0", 0); !errors.Is(err, catalogadapter.ErrConflict) {
				t.Fatalf("a check of version 0, data added at 1: want ErrConflict, got %v", err)
			}
			spec, err := p.AddConstraint(ctx, id, "Pos", "amount > 0", 1)
			if err != nil {
				t.Fatal(err)
			}
			if spec.Properties["delta.constraints.pos"] != "amount > 0" {
				t.Fatalf("properties %v", spec.Properties)
			}
			_, snap, err := p.latest(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(snap.Protocol) {
				t.Fatalf("protocol %+v", snap.Protocol)
			}
			if _, err := p.AddConstraint(ctx, id, "POS", "id > 0", snap.Version); !errors.Is(err, catalogadapter.ErrConstraintExists) {
				t.Fatalf("a name taken: %v", err)
			}
			rules, err := p.RowRules(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if len(rules.Checks) != 1 || rules.Checks[0].Predicate != `("amount" > 0)` || rules.Fingerprint == before.Fingerprint {
				t.Fatalf("rules %+v (before %+v)", rules, before)
			}
			r = writeRows(t, p, id, idRows(10, 1))
			_, err = p.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{
				Requires: []catalogadapter.Requirement{catalogadapter.RowRulesAre(before.Fingerprint)}})
			if !errors.Is(err, catalogadapter.ErrConflict) || !errors.Is(err, catalogadapter.ErrRowRulesChanged) {
				t.Fatalf("a commit checked against the old rules: %v", err)
			}
			if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{
				Requires: []catalogadapter.Requirement{catalogadapter.RowRulesAre(rules.Fingerprint)}}); err != nil {
				t.Fatal(err)
			}
			if _, err := p.DropConstraint(ctx, id, "nope"); !errors.Is(err, catalogadapter.ErrNoConstraint) {
				t.Fatalf("drop unknown: %v", err)
			}
			spec, err = p.DropConstraint(ctx, id, "POS")
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := spec.Properties["delta.constraints.pos"]; ok {
				t.Fatalf("still there: %v", spec.Properties)
			}
		})
	}
}
