package delta

// The rules a Delta table holds every new row to, as its log spells them:
// column invariants (PROTOCOL.md "Column Invariants"), CHECK constraints
// ("CHECK Constraints") and generation expressions ("Generated
// Columns"). The expressions are Spark SQL, kept as text here; whoever
// writes rows evaluates them (lakesql's sink does, with DuckDB).

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// ConstraintPrefix starts the configuration key of a CHECK constraint:
// delta.constraints.<name> holds its expression.
const ConstraintPrefix = "delta.constraints."

// generationKey is the column metadata key of a generation expression.
const generationKey = "delta.generationExpression"

// RowRules are a table's invariants, CHECK constraints and generated
// columns, those its protocol has on.
type RowRules struct {
	// Checks must be true for every new row: false or NULL refuses it.
	Checks []RowCheck
	// Generated columns must hold (value <=> expression) for every row.
	Generated []GeneratedColumn
}

// RowCheck is one CHECK constraint or column invariant.
type RowCheck struct {
	// Name is the constraint's name (the configuration key's suffix), or
	// for an invariant "invariant on <column>".
	Name string
	// Expr is the Spark SQL boolean expression.
	Expr string
	// Column is the column an invariant belongs to; "" for a CHECK.
	Column string
}

// GeneratedColumn is a column whose value the expression gives.
type GeneratedColumn struct {
	Column string
	Expr   string
}

// Empty tells whether no rule constrains new rows.
func (r RowRules) Empty() bool { return len(r.Checks) == 0 && len(r.Generated) == 0 }

// Fingerprint identifies the rules: two tables (or versions) with the same
// fingerprint check rows alike.
func (r RowRules) Fingerprint() string {
	parts := make([]string, 0, len(r.Checks)+len(r.Generated))
	for _, c := range r.Checks {
		parts = append(parts, "c\x00"+c.Name+"\x00"+c.Column+"\x00"+c.Expr)
	}
	for _, g := range r.Generated {
		parts = append(parts, "g\x00"+g.Column+"\x00"+g.Expr)
	}
	sort.Strings(parts)
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x01")))
	return hex.EncodeToString(sum[:8])
}

// Constraints returns the table's CHECK constraints by name.
func (m *Metadata) Constraints() map[string]string {
	out := map[string]string{}
	for k, v := range m.Configuration {
		if strings.HasPrefix(k, ConstraintPrefix) {
			out[strings.TrimPrefix(k, ConstraintPrefix)] = v
		}
	}
	return out
}

// featureOn tells whether a writer protocol supports a feature that
// legacy writer versions from..6 imply, or that version 7 lists.
func featureOn(p Protocol, from int, name string) bool {
	if p.MinWriterVersion < 7 {
		return p.MinWriterVersion >= from
	}
	for _, f := range p.WriterFeatures {
		if f == name {
			return true
		}
	}
	return false
}

// Rules reads the row rules the snapshot's protocol has on. A rule it
// cannot hand on (an invariant or generation expression on a nested field,
// an invariant that is not JSON) is refused with ErrUnsupportedFeature
// naming it.
func (s *Snapshot) Rules() (RowRules, error) {
	schema, err := s.Schema()
	if err != nil {
		return RowRules{}, err
	}
	return TableRules(s.Protocol, &s.Metadata, schema)
}

// TableRules reads the row rules of a table's protocol, metadata and schema.
func TableRules(p Protocol, m *Metadata, schema *StructType) (RowRules, error) {
	var r RowRules
	if featureOn(p, 2, "invariants") {
		if col := nestedKey(schema, invariantKey); col != "" {
			return RowRules{}, unsupported("writing a table with an invariant on nested field %q", col)
		}
		for _, f := range schema.Fields {
			raw, ok := f.Metadata[invariantKey]
			if !ok {
				continue
			}
			expr, err := invariantExpr(raw)
			if err != nil {
				return RowRules{}, unsupported("writing a table whose invariant on column %q is unreadable: %v", f.Name, err)
			}
			r.Checks = append(r.Checks, RowCheck{Name: "invariant on " + f.Name, Expr: expr, Column: f.Name})
		}
	}
	if featureOn(p, 3, "checkConstraints") {
		cs := m.Constraints()
		names := make([]string, 0, len(cs))
		for n := range cs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			r.Checks = append(r.Checks, RowCheck{Name: n, Expr: cs[n]})
		}
	}
	if featureOn(p, 4, "generatedColumns") {
		if col := nestedKey(schema, generationKey); col != "" {
			return RowRules{}, unsupported("writing a table with a generated nested field %q", col)
		}
		for _, f := range schema.Fields {
			if raw, ok := f.Metadata[generationKey]; ok {
				expr, isString := raw.(string)
				if !isString || strings.TrimSpace(expr) == "" {
					return RowRules{}, unsupported("writing a table whose generation expression of column %q is not a string", f.Name)
				}
				r.Generated = append(r.Generated, GeneratedColumn{Column: f.Name, Expr: expr})
			}
		}
	}
	return r, nil
}

// invariantExpr reads {"expression": {"expression": "<sql>"}}.
func invariantExpr(raw any) (string, error) {
	s, ok := raw.(string)
	if !ok {
		return "", fmt.Errorf("delta.invariants is %T, not a JSON string", raw)
	}
	var v struct {
		Expression struct {
			Expression string `json:"expression"`
		} `json:"expression"`
	}
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return "", err
	}
	if strings.TrimSpace(v.Expression.Expression) == "" {
		return "", fmt.Errorf("no expression.expression in %q", s)
	}
	return v.Expression.Expression, nil
}

// nestedKey returns the dotted path of the first nested field (not a
// top-level column) whose metadata holds key, or "".
func nestedKey(schema *StructType, key string) string {
	for _, f := range schema.Fields {
		if f == nil {
			continue
		}
		if col := keyedColumn(f.Type, f.Name, key); col != "" {
			return col
		}
	}
	return ""
}

// keyedColumn returns the path of the first field under t carrying key.
func keyedColumn(t DataType, path, key string) string {
	switch t := t.(type) {
	case *StructType:
		if t == nil {
			return ""
		}
		for _, f := range t.Fields {
			if f == nil {
				continue
			}
			p := childPath(path, f.Name)
			if _, ok := f.Metadata[key]; ok {
				return p
			}
			if col := keyedColumn(f.Type, p, key); col != "" {
				return col
			}
		}
	case *ArrayType:
		if t != nil {
			return keyedColumn(t.ElementType, childPath(path, "element"), key)
		}
	case *MapType:
		if t != nil {
			if col := keyedColumn(t.KeyType, childPath(path, "key"), key); col != "" {
				return col
			}
			return keyedColumn(t.ValueType, childPath(path, "value"), key)
		}
	}
	return ""
}

// WithConstraint returns the protocol a table needs for a CHECK
// constraint: itself when it supports them, else writer 3 (a legacy
// protocol) or, at writer 7, the checkConstraints feature added.
func WithConstraint(p Protocol) Protocol {
	if featureOn(p, 3, "checkConstraints") {
		return p
	}
	if p.MinWriterVersion < 7 {
		p.MinWriterVersion = 3
		return p
	}
	p.WriterFeatures = append(append([]string(nil), p.WriterFeatures...), "checkConstraints")
	return p
}
