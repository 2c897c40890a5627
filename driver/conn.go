package driver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lakesql/lakesql/planner"
)

// conn is one connection: one planner session.
type conn struct {
	engine  *planner.Engine
	dir     string
	session *planner.Session
	closed  bool
}

var (
	_ driver.Conn               = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
)

func (c *conn) exec(ctx context.Context, query string, args []driver.NamedValue) (*planner.Result, error) {
	if c.closed {
		return nil, driver.ErrBadConn
	}
	q, err := interpolate(query, args)
	if err != nil {
		return nil, err
	}
	res, err := c.engine.Exec(ctx, c.session, q)
	if err != nil {
		return nil, wrapErr(err)
	}
	return res, nil
}

// ExecContext runs a statement.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	res, err := c.exec(ctx, query, args)
	if err != nil {
		return nil, err
	}
	return result{affected: int64(res.RowsAffected)}, nil
}

// QueryContext runs a statement and returns its rows.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	res, err := c.exec(ctx, query, args)
	if err != nil {
		return nil, err
	}
	return &rows{columns: res.Columns, types: res.Types, data: res.Rows}, nil
}

// Prepare returns a statement whose placeholders are filled at execution.
func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext checks the placeholders; the statement is parsed when run.
func (c *conn) PrepareContext(_ context.Context, query string) (driver.Stmt, error) {
	if c.closed {
		return nil, driver.ErrBadConn
	}
	return &stmt{conn: c, query: query, n: len(placeholders(query))}, nil
}

// Begin starts a transaction.
func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx runs BEGIN: the session's next writes form one epoch per sink.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.Isolation != driver.IsolationLevel(sql.LevelDefault) {
		return nil, fmt.Errorf("lakesql driver: isolation level %v is not supported; lakesql transactions have one isolation level (use the default)",
			sql.IsolationLevel(opts.Isolation))
	}
	if opts.ReadOnly {
		return nil, errors.New("lakesql driver: read-only transactions are not supported; SELECT outside a transaction reads the last committed version")
	}
	if _, err := c.exec(ctx, "BEGIN", nil); err != nil {
		return nil, err
	}
	return &tx{conn: c}, nil
}

// Ping reports whether the connection is usable.
func (c *conn) Ping(context.Context) error {
	if c.closed {
		return driver.ErrBadConn
	}
	return nil
}

// IsValid tells database/sql whether to keep the connection in its pool.
func (c *conn) IsValid() bool { return !c.closed }

// Close ends the session (rolling back an open transaction) and drops the
// connection's reference to the engine.
func (c *conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	err := c.session.Close()
	return errors.Join(err, release(c.dir))
}

type tx struct{ conn *conn }

// Commit runs COMMIT: one table version per sink written.
func (t *tx) Commit() error {
	_, err := t.conn.exec(context.Background(), "COMMIT", nil)
	return err
}

// Rollback runs ROLLBACK: nothing the transaction wrote remains.
func (t *tx) Rollback() error {
	_, err := t.conn.exec(context.Background(), "ROLLBACK", nil)
	return err
}

type stmt struct {
	conn  *conn
	query string
	n     int
}

var (
	_ driver.StmtExecContext  = (*stmt)(nil)
	_ driver.StmtQueryContext = (*stmt)(nil)
)

func (s *stmt) Close() error  { return nil }
func (s *stmt) NumInput() int { return s.n }

func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.conn.ExecContext(ctx, s.query, args)
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.conn.QueryContext(ctx, s.query, args)
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

type result struct{ affected int64 }

func (r result) LastInsertId() (int64, error) {
	return 0, errors.New("lakesql driver: LastInsertId is not supported (sinks have no auto-increment columns)")
}

func (r result) RowsAffected() (int64, error) { return r.affected, nil }

// rows is a fully read result.
type rows struct {
	columns []string
	types   []planner.ColumnType
	data    [][]any
	next    int
}

func (r *rows) Columns() []string { return r.columns }

// ColumnTypeDatabaseTypeName implements driver.RowsColumnTypeDatabaseTypeName
// with MySQL's type names, as go-sql-driver/mysql gives them.
func (r *rows) ColumnTypeDatabaseTypeName(i int) string {
	if i < len(r.types) {
		return r.types[i].Name
	}
	return ""
}

// ColumnTypePrecisionScale implements driver.RowsColumnTypePrecisionScale
// for DECIMAL, DATETIME and TIMESTAMP columns: the scale, or the
// fractional-second digits, as go-sql-driver/mysql gives them (the
// precision is not known here and is reported as 0).
func (r *rows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	if i >= len(r.types) {
		return 0, 0, false
	}
	switch r.types[i].Name {
	case "DECIMAL", "DATETIME", "TIMESTAMP":
		return 0, int64(r.types[i].Scale), true
	}
	return 0, 0, false
}

func (r *rows) Close() error { r.next = len(r.data); return nil }

func (r *rows) Next(dest []driver.Value) error {
	if r.next >= len(r.data) {
		return io.EOF
	}
	row := r.data[r.next]
	r.next++
	for i := range dest {
		if i < len(row) {
			dest[i] = toValue(row[i])
			// A DECIMAL as the wire sends it: text with the column's scale.
			if i < len(r.types) && r.types[i].Name == "DECIMAL" {
				if s, ok := r.types[i].Text(row[i]); ok {
					dest[i] = s
				}
			}
		} else {
			dest[i] = nil
		}
	}
	return nil
}

// toValue converts an engine value to a driver.Value.
func toValue(v any) driver.Value {
	switch v := v.(type) {
	case nil:
		return nil
	case int64, float64, string, []byte, time.Time, bool:
		return v
	case int:
		return int64(v)
	case int8:
		return int64(v)
	case int16:
		return int64(v)
	case int32:
		return int64(v)
	case uint:
		return uintValue(uint64(v))
	case uint8:
		return int64(v)
	case uint16:
		return int64(v)
	case uint32:
		return int64(v)
	case uint64:
		return uintValue(v)
	case float32:
		return float64(v)
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprint(v)
}

func uintValue(u uint64) driver.Value {
	if u > math.MaxInt64 {
		return strconv.FormatUint(u, 10)
	}
	return int64(u)
}

// placeholders returns the byte offsets of the '?' placeholders of query:
// those outside string literals, quoted identifiers and comments.
func placeholders(query string) []int {
	var out []int
	for i := 0; i < len(query); i++ {
		switch ch := query[i]; ch {
		case '\'', '"', '`':
			i = skipQuoted(query, i)
		case '#':
			i = skipLine(query, i)
		case '-':
			if strings.HasPrefix(query[i:], "--") && (i+2 == len(query) || isSpace(query[i+2])) {
				i = skipLine(query, i)
			}
		case '/':
			if strings.HasPrefix(query[i:], "/*") {
				if end := strings.Index(query[i+2:], "*/"); end >= 0 {
					i += 2 + end + 1
				} else {
					i = len(query)
				}
			}
		case '?':
			out = append(out, i)
		}
	}
	return out
}

// skipQuoted returns the index of the closing quote of the quoted text
// starting at i (or the end): backslash escapes in strings, doubled quotes.
func skipQuoted(q string, i int) int {
	quote := q[i]
	for j := i + 1; j < len(q); j++ {
		switch q[j] {
		case '\\':
			if quote != '`' {
				j++
			}
		case quote:
			if j+1 < len(q) && q[j+1] == quote {
				j++
				continue
			}
			return j
		}
	}
	return len(q)
}

func skipLine(q string, i int) int {
	if end := strings.IndexByte(q[i:], '\n'); end >= 0 {
		return i + end
	}
	return len(q)
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// interpolate replaces the placeholders of query with args as SQL literals.
func interpolate(query string, args []driver.NamedValue) (string, error) {
	if len(args) == 0 {
		return query, nil
	}
	pos := placeholders(query)
	if len(pos) != len(args) {
		return "", fmt.Errorf("lakesql driver: the statement has %d placeholders, %d arguments given", len(pos), len(args))
	}
	var b strings.Builder
	last := 0
	for i, p := range pos {
		a := args[i]
		if a.Name != "" {
			return "", fmt.Errorf("lakesql driver: named argument %q: only '?' placeholders are supported", a.Name)
		}
		b.WriteString(query[last:p])
		if err := writeLiteral(&b, a.Value); err != nil {
			return "", fmt.Errorf("lakesql driver: argument %d: %w", i+1, err)
		}
		last = p + 1
	}
	b.WriteString(query[last:])
	return b.String(), nil
}

// writeLiteral writes v as a SQL literal.
func writeLiteral(b *strings.Builder, v driver.Value) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("NULL")
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case uint64:
		b.WriteString(strconv.FormatUint(v, 10))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%v has no SQL literal", v)
		}
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			// an integral value stays a float: 1 -> 1e0
			s += "e0"
		}
		b.WriteString(s)
	case bool:
		if v {
			b.WriteString("TRUE")
		} else {
			b.WriteString("FALSE")
		}
	case string:
		writeString(b, v)
	case []byte:
		if v == nil {
			b.WriteString("NULL")
			return nil
		}
		b.WriteString("X'")
		b.WriteString(hex.EncodeToString(v))
		b.WriteString("'")
	case time.Time:
		writeString(b, v.UTC().Format("2006-01-02 15:04:05.999999"))
	default:
		return fmt.Errorf("unsupported type %T", v)
	}
	return nil
}

func writeString(b *strings.Builder, s string) {
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			b.WriteString("''")
		case '\\':
			b.WriteString(`\\`)
		case 0:
			b.WriteString(`\0`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case 0x1a:
			b.WriteString(`\Z`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
}
