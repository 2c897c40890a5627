package deltalake

import (
	"context"
	"slices"
	"testing"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
)

// Turning deletion vectors on for an existing table upgrades its protocol
// to list the feature, keeping what writer 2 implied; the table then takes
// deletion vectors.
func TestSetPropertiesTurnsOnDeletionVectors(t *testing.T) {
	ctx := context.Background()
	p := New(openDB(t), testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	if on, err := p.DeletionVectors(ctx, id); err != nil || on {
		t.Fatalf("a new table takes DVs: %v %v", on, err)
	}
	if _, err := p.SetProperties(ctx, id, map[string]string{"delta.enableDeletionVectors": "true"}, nil); err != nil {
		t.Fatal(err)
	}
	if on, err := p.DeletionVectors(ctx, id); err != nil || !on {
		t.Fatalf("after SetProperties: %v %v", on, err)
	}
	_, snap, _ := p.latest(ctx, id)
	pr := snap.Protocol
	if pr.MinReaderVersion != 3 || pr.MinWriterVersion != 7 || !slices.Contains(pr.ReaderFeatures, "deletionVectors") ||
		!slices.Contains(pr.WriterFeatures, "deletionVectors") || !slices.Contains(pr.WriterFeatures, "invariants") ||
		!slices.Contains(pr.WriterFeatures, "appendOnly") {
		t.Fatalf("protocol %+v", pr)
	}
	if _, err := p.SetProperties(ctx, id, map[string]string{"delta.enableDeletionVectors": "yes"}, nil); err == nil {
		t.Fatal("a value other than true or false was taken")
	}
}
