package deltalake

import (
	"context"
	"testing"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
)

// TestTableDefSizes: the definition's target file size and checkpoint
// interval become Delta's table properties, over properties that spell
// them too.
func TestTableDefSizes(t *testing.T) {
	p := New(openDB(t), testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{
		TargetFileSize: 1 << 20, CheckpointInterval: 3,
		Properties: map[string]string{"delta.checkpointInterval": "9", "owner": "tests"},
	})
	spec, err := p.TableSpec(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"delta.targetFileSize": "1048576", "delta.checkpointInterval": "3", "owner": "tests"} {
		if got := spec.Properties[k]; got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}
