package sqlsink

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestColumnMappingUpserts: upserts and deletes (copy-on-write merges,
// which read the old files by physical name) on a Delta table created
// with column mapping in each mode, and on one turned to name mode by
// SetTableProperties between epochs, keep every row right.
func TestColumnMappingUpserts(t *testing.T) {
	for _, c := range []struct{ name, create, set string }{
		{"created name", "name", ""}, {"created id", "id", ""}, {"set name", "", "name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			cfg := e.config("orders")
			cfg.Mode, cfg.Key = ModeUpsert, []string{"id"}
			if c.create != "" {
				cfg.TableProperties = map[string]string{"delta.columnMapping.mode": c.create}
			}
			s := e.open(cfg)
			e.epoch(s, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "us"}, row{ID: 3, Amount: 3}))
			if c.set != "" {
				if err := s.SetTableProperties(context.Background(), map[string]string{"delta.columnMapping.mode": c.set}, nil); err != nil {
					t.Fatal(err)
				}
			}
			e.epoch(s, 2, batch(t, row{Op: "U", ID: 2, Amount: 20, Region: "us"}, row{Op: "D", ID: 3}, row{Op: "I", ID: 4, Amount: 4, Region: "ap"}))
			e.epoch(s, 3, batch(t, row{Op: "U", ID: 1, Amount: 10, Region: "eu"}, row{Op: "D", ID: 4}))
			want := []row{{ID: 1, Amount: 10, Region: "eu"}, {ID: 2, Amount: 20, Region: "us"}}
			if d := cmp.Diff(want, e.rows()); d != "" {
				t.Fatalf("rows (-want +got):\n%s", d)
			}
			spec, err := e.provider.TableSpec(context.Background(), cfg.Table)
			if err != nil {
				t.Fatal(err)
			}
			mode := c.create + c.set
			if spec.Properties["delta.columnMapping.mode"] != mode || spec.Properties["delta.columnMapping.maxColumnId"] == "" {
				t.Errorf("properties %v, want mode %s with maxColumnId", spec.Properties, mode)
			}
		})
	}
}

// TestSetTablePropertiesRefusals: a refused property reaches the caller
// with its class, and an epoch holding staged files refuses the change.
func TestSetTablePropertiesRefusals(t *testing.T) {
	e := newEnv(t)
	s := e.open(e.config("orders"))
	ctx := context.Background()
	err := s.SetTableProperties(ctx, map[string]string{"delta.columnMapping.mode": "id"}, nil)
	if !errors.Is(err, ErrSchemaChange) {
		t.Errorf("id mode on an existing table: %v", err)
	}
	precommit(t, s, 1, batch(t, row{ID: 1, Amount: 1}))
	if err := s.SetTableProperties(ctx, map[string]string{"owner": "a"}, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("with staged files: %v", err)
	}
}
