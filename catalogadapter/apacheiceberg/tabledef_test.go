package apacheiceberg

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/catalogadapter"
)

// TestTableDefSizes: the definition's target file size becomes
// write.target-file-size-bytes; its checkpoint interval means nothing to
// Iceberg and leaves no property.
func TestTableDefSizes(t *testing.T) {
	p := openProvider(t, t.TempDir())
	if err := p.CreateTable(context.Background(), ordersID, catalogadapter.TableDef{
		Schema: ordersSchema, TargetFileSize: 1 << 20, CheckpointInterval: 3}); err != nil {
		t.Fatal(err)
	}
	spec, err := p.TableSpec(context.Background(), ordersID)
	if err != nil {
		t.Fatal(err)
	}
	if got := spec.Properties[table.WriteTargetFileSizeBytesKey]; got != "1048576" {
		t.Errorf("%s = %q, want 1048576", table.WriteTargetFileSizeBytesKey, got)
	}
	for k := range spec.Properties {
		if strings.Contains(strings.ToLower(k), "checkpoint") {
			t.Errorf("property %s on an Iceberg table", k)
		}
	}
}
