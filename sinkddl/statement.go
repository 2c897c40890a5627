package sinkddl

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// Statement is a parsed lakesql statement. String renders it as canonical
// SQL: keywords in upper case, identifiers in backquotes, types in their
// canonical spelling. Parsing that text gives back an equal statement.
type Statement interface {
	fmt.Stringer
	lakesqlStatement()
}

// The table formats a sink writes.
const (
	FormatDelta   = "delta"
	FormatIceberg = "iceberg"
)

// The partition transforms, named as Iceberg names them. Delta tables
// partition by identity only; refusing the other transforms for a Delta sink
// belongs to the layer that resolves the definition against the format.
const (
	TransformIdentity = "identity"
	TransformYear     = "year"
	TransformMonth    = "month"
	TransformDay      = "day"
	TransformHour     = "hour"
	TransformBucket   = "bucket"
	TransformTruncate = "truncate"
)

// CreateSink is CREATE SINK [IF NOT EXISTS] name INTO DELTA|ICEBERG
// 'location' [(columns [, PRIMARY KEY (...)])] [PARTITION BY (...)]
// [WITH (key = value, ...)]. Without Columns the sink attaches to an
// existing table and takes its schema.
type CreateSink struct {
	IfNotExists bool
	Name        string // as written: names are case-preserving
	Format      string // FormatDelta or FormatIceberg
	Location    string // as written; resolving it against the data directory is the planner's job
	Columns     []ColumnDef
	// PrimaryKey lists the key columns in key order, whether they were
	// declared inline (ColumnDef.PrimaryKey) or with a table-level PRIMARY
	// KEY (...), spelled as their column definitions spell them.
	PrimaryKey  []string
	PartitionBy []PartitionExpr
	Options     []Option // in the order written; keys are unique
}

// ColumnDef is one column of CREATE SINK. A PRIMARY KEY column is NOT NULL,
// as in MySQL. DEFAULT, AUTO_INCREMENT, character sets and constraints other
// than NOT NULL and PRIMARY KEY are refused with ErrUnsupported.
type ColumnDef struct {
	Name    string
	SQLType string         // canonical MySQL spelling: "BIGINT", "VARCHAR(16)", "DECIMAL(10,2)", "INT UNSIGNED"
	Type    arrow.DataType // what the sink receives, see MySQLTypeTable
	NotNull bool
	// PrimaryKey records that the key was declared inline on this column, so
	// that String renders the statement the way it was written; the key
	// itself is CreateSink.PrimaryKey.
	PrimaryKey bool
	Comment    string
}

// PartitionExpr is one entry of PARTITION BY: a column, or a transform of
// one. Param is the bucket count of bucket(N, col) or the width of
// truncate(W, col), and 0 otherwise.
type PartitionExpr struct {
	Column    string
	Transform string // one of the Transform constants
	Param     int
}

// OptionKind is the kind of literal an option value was written as; it is
// kept so that SHOW CREATE SINK renders what the user wrote, and so that the
// consumer of an option can refuse the wrong kind with a clear error.
type OptionKind uint8

const (
	OptionString     OptionKind = iota // 'text' or "text"
	OptionInteger                      // 42, -1; Value holds the decimal digits
	OptionBoolean                      // TRUE or FALSE; Value is "true" or "false"
	OptionIdentifier                   // a bare or backquoted name, such as upsert; Value keeps its case
)

// Option is one key = value of WITH (...). Keys are case-insensitive and
// stored in lower case; dotted keys such as catalog.uri are one key.
// Whether a key means anything is decided by the sink, not by the parser.
type Option struct {
	Key   string
	Value string
	Kind  OptionKind
}

// DropSink is DROP SINK [IF EXISTS] name [PURGE]. Dropping a sink forgets
// its definition and leaves the table and its data where they are, so other
// engines keep reading it and a later CREATE SINK can attach to it again.
// PURGE also deletes the table: its data files and its log or metadata.
type DropSink struct {
	IfExists bool
	Name     string
	Purge    bool
}

// ShowSinks is SHOW SINKS: one row per sink.
type ShowSinks struct{}

// ShowCreateSink is SHOW CREATE SINK name: the sink's definition as a
// CREATE SINK statement, secrets masked.
type ShowCreateSink struct {
	Name string
}

// ShowSinkStatus is SHOW SINK STATUS [name]: metrics, last committed epoch,
// table version and health of one sink, or of every sink when Name is "".
type ShowSinkStatus struct {
	Name string
}

func (*CreateSink) lakesqlStatement()     {}
func (*DropSink) lakesqlStatement()       {}
func (*ShowSinks) lakesqlStatement()      {}
func (*ShowCreateSink) lakesqlStatement() {}
func (*ShowSinkStatus) lakesqlStatement() {}

// Sentinel errors a *DefinitionError wraps, besides ErrUnsupportedType.
var (
	// ErrUnsupported: valid MySQL that lakesql does not implement, such as
	// DEFAULT or AUTO_INCREMENT on a column.
	ErrUnsupported = errors.New("unsupported feature")
	// ErrInvalidDefinition: a definition that contradicts itself or breaks a
	// limit, such as a column defined twice or an option given twice.
	ErrInvalidDefinition = errors.New("invalid sink definition")
)

// SyntaxError is input that does not follow the grammar of a lakesql
// statement. Its text has the shape of go-mysql-server's parse errors, so
// that a client sees one style; the front end reports it as ER_PARSE_ERROR.
type SyntaxError struct {
	Pos  int    // 1-based byte offset of the offending token: it starts at sql[Pos-1:]
	Near string // the offending token as written, shortened; "" at the end of the input
	Msg  string // what lakesql expected instead
}

func (e *SyntaxError) Error() string {
	if e.Near == "" {
		return fmt.Sprintf("syntax error at position %d near end of input: %s", e.Pos, e.Msg)
	}
	return fmt.Sprintf("syntax error at position %d near '%s': %s", e.Pos, e.Near, e.Msg)
}

// DefinitionError is a statement that parses but cannot be accepted: an
// unsupported type or feature, or an invalid definition. Err is
// ErrUnsupportedType, ErrUnsupported or ErrInvalidDefinition, for errors.Is.
type DefinitionError struct {
	Pos  int    // 1-based byte offset of the token the error is about
	Near string // that token as written, shortened
	Msg  string // names the column or option concerned
	Err  error
}

func (e *DefinitionError) Error() string {
	return fmt.Sprintf("%v at position %d near '%s': %s", e.Err, e.Pos, e.Near, e.Msg)
}

func (e *DefinitionError) Unwrap() error { return e.Err }
