package iceberg

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// DefaultFormatVersion is the format version of the tables lakesql
// creates: 2 has row-level deletes, which upserts use.
const DefaultFormatVersion = 2

// TableDef is what a new table is made of.
type TableDef struct {
	Schema        *ice.Schema
	Partition     []PartitionField
	Properties    map[string]string
	FormatVersion int // 0: DefaultFormatVersion
}

// CreateTable creates an empty table, and its namespace when missing. A
// table already there is ErrTableExists.
func (c *Catalog) CreateTable(ctx context.Context, ident table.Identifier, def TableDef) (*table.Table, error) {
	ctx = c.WithIO(ctx)
	name := strings.Join(ident, ".")
	if len(ident) < 2 {
		return nil, fmt.Errorf("%w: table %q needs a namespace (namespace.table)", ErrInvalid, name)
	}
	if def.Schema == nil || def.Schema.NumFields() == 0 {
		return nil, fmt.Errorf("%w: table %s needs at least one column", ErrInvalid, name)
	}
	spec, err := PartitionSpec(def.Schema, def.Partition)
	if err != nil {
		return nil, fmt.Errorf("create Iceberg table %s: %w", name, err)
	}
	props := ice.Properties{}
	for k, v := range def.Properties {
		props[k] = v
	}
	fv := def.FormatVersion
	if v, ok := props[table.PropertyFormatVersion]; ok && fv == 0 {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %s = %q is not a number", ErrInvalid, table.PropertyFormatVersion, v)
		}
		fv = n
	}
	if fv == 0 {
		fv = DefaultFormatVersion
	}
	if fv < 1 || fv > 3 {
		return nil, fmt.Errorf("%w: format version %d (1, 2 or 3)", ErrInvalid, fv)
	}
	props[table.PropertyFormatVersion] = strconv.Itoa(fv)
	if err := c.EnsureNamespace(ctx, catalog.NamespaceFromIdent(ident)); err != nil {
		return nil, err
	}
	call, cancel := c.Bound(ctx)
	defer cancel()
	t, err := c.cat.CreateTable(call, ident, def.Schema, catalog.WithPartitionSpec(&spec), catalog.WithProperties(props))
	if err = c.Timed(call, ctx, err); err != nil {
		if errors.Is(err, catalog.ErrTableAlreadyExists) {
			return nil, c.Scrub(fmt.Errorf("create Iceberg table %s: %w: %w", name, ErrTableExists, err))
		}
		return nil, c.Scrub(fmt.Errorf("create Iceberg table %s: %w", name, err))
	}
	return t, nil
}
