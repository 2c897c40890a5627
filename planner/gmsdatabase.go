package planner

// go-mysql-server's view of the sinks: a provider with one database,
// "lakesql", in which every sink is a table (gmstable.go), with the
// go-mysql-server schema of each.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/lakesql/lakesql/sinkddl"
	"github.com/lakesql/lakesql/sqlsink"
)

type provider struct{ engine *Engine }

func (p *provider) Database(_ *gms.Context, name string) (gms.Database, error) {
	if strings.EqualFold(name, DatabaseName) {
		return &database{engine: p.engine}, nil
	}
	return nil, gms.ErrDatabaseNotFound.New(name)
}

func (p *provider) HasDatabase(_ *gms.Context, name string) bool {
	return strings.EqualFold(name, DatabaseName)
}

func (p *provider) AllDatabases(*gms.Context) []gms.Database {
	return []gms.Database{&database{engine: p.engine}}
}

type database struct{ engine *Engine }

func (d *database) Name() string { return DatabaseName }

// GetTableInsensitive opens the sink on first use, so a definition that no
// longer matches its table fails with the reason on use (unreadable.go).
func (d *database) GetTableInsensitive(ctx *gms.Context, name string) (gms.Table, bool, error) {
	h, ok := d.engine.lookup(name)
	if !ok {
		return nil, false, nil
	}
	s, err := h.open(ctx)
	if err != nil {
		return newUnreadableTable(h, err), true, nil
	}
	sch, values, err := h.schemaFor(s)
	if err != nil {
		return newUnreadableTable(h, err), true, nil
	}
	t := &table{h: h, sink: s, values: values}
	if sess, ok := ctx.Session.(*Session); ok {
		if t.extra, err = sess.newColumns(ctx, h, s); err != nil {
			return nil, false, sess.fail(err)
		}
		if len(t.extra) > 0 {
			sch = sch.Copy()
			for _, f := range t.extra {
				ct, err := gmsType(f.Type)
				if err != nil {
					return nil, false, sess.fail(fmt.Errorf("sink %s: column %s: %w", h.rec.Name, f.Name, err))
				}
				sch = append(sch, &gms.Column{Name: f.Name, Type: ct, Nullable: true, Source: h.rec.Name, DatabaseSource: DatabaseName})
			}
		}
		if sess.opColumnShown(ctx) {
			sch = append(sch.Copy(), &gms.Column{Name: sqlsink.OpColumn, Type: types.LongText, Nullable: true,
				Source: h.rec.Name, DatabaseSource: DatabaseName})
		}
	}
	t.schema = sch
	if len(s.Config().Key) > 0 {
		return &keyedTable{t}, true, nil
	}
	return t, true, nil
}

func (d *database) GetTableNames(*gms.Context) ([]string, error) {
	return d.engine.sinkNames(), nil
}

// schemaFor returns the go-mysql-server schema of an opened sink, and what
// its columns accept before conversion (valuecheck.go).
func (h *sinkHandle) schemaFor(s *sqlsink.Sink) (gms.Schema, []valueRule, error) {
	h.openMu.Lock()
	defer h.openMu.Unlock()
	if h.gschema != nil {
		return h.gschema, h.values, nil
	}
	key := map[string]bool{}
	for _, k := range s.Config().Key {
		key[k] = true
	}
	var out gms.Schema
	declared := columnRules(h.def)
	precisions := fractionDigits(h.def)
	spelled := map[string]string{}
	if h.def != nil {
		for _, c := range h.def.Columns {
			spelled[c.Name] = c.SQLType
		}
	}
	// No rules at all (a sink of BIGINT, DOUBLE, ... columns, or one that
	// attached without columns) leaves nothing to check per row.
	h.rules = nil
	h.values = nil
	for _, f := range s.Schema().Fields() {
		h.values = append(h.values, valueRuleFor(f.Type, spelled[f.Name]))
		if len(declared) > 0 {
			h.rules = append(h.rules, declared[f.Name])
		}
		t, ok := declaredType(spelled[f.Name], f.Type)
		if !ok {
			var err error
			if t, err = gmsType(f.Type); err != nil {
				return nil, nil, fmt.Errorf("sink %s: column %s: %w", h.rec.Name, f.Name, err)
			}
		}
		if dt, ok := t.(gms.DatetimeType); ok {
			// DATETIME(p) and TIMESTAMP(p) keep their declared precision:
			// values are rounded to it and shown with it, as in MySQL.
			if p, ok := precisions[f.Name]; ok {
				t = types.MustCreateDatetimeType(dt.Type(), p)
			}
		}
		out = append(out, &gms.Column{Name: f.Name, Type: t, Nullable: f.Nullable, Source: h.rec.Name,
			DatabaseSource: DatabaseName, PrimaryKey: key[f.Name]})
	}
	h.gschema = out
	return out, h.values, nil
}

// withOpColumn returns the schema with the changelog column _op appended.
func withOpColumn(s *arrow.Schema) *arrow.Schema {
	fields := append(slices.Clone(s.Fields()), arrow.Field{Name: sqlsink.OpColumn, Type: arrow.BinaryTypes.String, Nullable: true})
	return arrow.NewSchema(fields, nil)
}

// gmsType maps an Arrow type of a sink column to go-mysql-server's type.
func gmsType(t arrow.DataType) (gms.Type, error) {
	if isNested(t) {
		return types.LongText, nil // JSON text (nested.go)
	}
	switch t := t.(type) {
	case *arrow.BooleanType:
		return types.Boolean, nil
	case *arrow.Int8Type:
		return types.Int8, nil
	case *arrow.Int16Type:
		return types.Int16, nil
	case *arrow.Int32Type:
		return types.Int32, nil
	case *arrow.Int64Type:
		return types.Int64, nil
	case *arrow.Float32Type:
		return types.Float32, nil
	case *arrow.Float64Type:
		return types.Float64, nil
	case *arrow.Decimal128Type:
		if wideDecimal(t) {
			return describeDecimal(t), nil
		}
		return types.CreateColumnDecimalType(uint8(t.Precision), uint8(t.Scale)) // shown with its scale, as MySQL does
	case *arrow.StringType, *arrow.LargeStringType:
		return types.LongText, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		return types.LongBlob, nil
	case *arrow.Date32Type:
		return types.Date, nil
	case *arrow.TimestampType:
		if t.TimeZone == "" {
			return types.DatetimeMaxPrecision, nil
		}
		return types.TimestampMaxPrecision, nil
	}
	return nil, fmt.Errorf("%w: %s", sinkddl.ErrUnsupportedType, t)
}
