package apacheiceberg

// Automatic schema evolution in the same commit as the data: rows staged
// for the schema some changes produce (Source.Evolve) carry the
// field ids that schema gives the new columns, and their receipt records
// it; the commit (CommitOptions.SchemaChanges) makes the same changes in
// the same Iceberg transaction as the snapshot, and lands only if they
// produce that very schema again.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/catalogadapter"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// evolvedTable is tbl as changes leave it, uncommitted.
func evolvedTable(ctx context.Context, tbl *table.Table, changes []catalogadapter.SchemaChange) (*table.Table, error) {
	ch, err := icebergChanges(changes)
	if err != nil {
		return nil, err
	}
	out, err := icetable.EvolvedTable(ctx, tbl, ch)
	return out, mapErr(err)
}

// evolvedReceipt is receipt, recording the schema the files were
// written for.
func evolvedReceipt(meta table.Metadata, files []ice.DataFile) (catalogadapter.Receipt, error) {
	r, err := receipt(meta, files)
	if err != nil {
		return r, err
	}
	var rm receiptMeta
	if err := json.Unmarshal(r.Metadata, &rm); err != nil {
		return r, err
	}
	if rm.Schema, err = json.Marshal(meta.CurrentSchema()); err != nil {
		return r, err
	}
	r.Metadata, err = json.Marshal(rm)
	return r, err
}

// receiptSchemas are the schemas receipts were staged for (evolvedReceipt).
func receiptSchemas(receipts []catalogadapter.Receipt) ([]json.RawMessage, error) {
	var out []json.RawMessage
	for i, r := range receipts {
		if len(bytes.TrimSpace(r.Metadata)) == 0 {
			continue
		}
		var rm receiptMeta
		if err := json.Unmarshal(r.Metadata, &rm); err != nil {
			return nil, fmt.Errorf("%w: receipt %d: %w", catalogadapter.ErrInvalid, i, err)
		}
		if len(rm.Schema) > 0 {
			out = append(out, rm.Schema)
		}
	}
	return out, nil
}

// evolvedForCommit is tbl as the commit's schema changes leave it, which
// the staged files are decoded against. The changes must still apply and
// give the schema every evolved receipt was staged for; else the table's
// schema moved since (another writer's ALTER or evolution) and the rows
// must be staged again: ErrConflict. Without changes it is tbl, and no
// receipt may have been staged for a schema to come.
func evolvedForCommit(ctx context.Context, tbl *table.Table, changes []catalogadapter.SchemaChange, staged []json.RawMessage) (*table.Table, error) {
	if len(changes) == 0 {
		if len(staged) > 0 {
			return nil, fmt.Errorf("%w: files were staged for schema changes the commit does not make", catalogadapter.ErrInvalid)
		}
		return tbl, nil
	}
	next, err := evolvedTable(ctx, tbl, changes)
	if err != nil {
		return nil, fmt.Errorf("%w: the schema changes no longer apply: %w", catalogadapter.ErrConflict, err)
	}
	want, err := json.Marshal(next.Schema())
	if err != nil {
		return nil, err
	}
	for _, s := range staged {
		if !jsonEqual(s, want) {
			return nil, fmt.Errorf("%w: the table's schema moved since the rows were staged for %s; now the changes give %s",
				catalogadapter.ErrConflict, s, want)
		}
	}
	return next, nil
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ax, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return bytes.Equal(ax, by)
}

// commitSchemaChanges translates a commit's schema changes (none: nil).
func commitSchemaChanges(changes []catalogadapter.SchemaChange) ([]icetable.SchemaChange, error) {
	if len(changes) == 0 {
		return nil, nil
	}
	return icebergChanges(changes)
}

var _ catalogadapter.InCommitEvolver = (*Provider)(nil)

// EvolvesInCommit implements catalogadapter.InCommitEvolver: Commit makes
// CommitOptions.SchemaChanges in the snapshot's own transaction.
func (p *Provider) EvolvesInCommit() {}
