// Package catalogadapter is the contract every table format serves to the
// epoch sink: describe a table, stage data files invisibly, make them
// visible in one atomic commit whose preconditions travel as data, throw
// away what will not be committed, and recover the exactly-once record.
// One backend per format or catalog implements Provider, and the optional
// interfaces it can serve (creating, scanning, row deltas, Arrow staging,
// credentials, health, row counts).
package catalogadapter

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Provider serves tables of one format or catalog: the operations the epoch
// sink cannot run without. Implementations are safe for concurrent use and
// never panic on any input. What a backend may lack lives in optional.go,
// and the conformance suite catalogadapter/providertest checks the promises
// below against a backend.
type Provider interface {
	// TableSpec describes the table as it is now. It is idempotent.
	TableSpec(ctx context.Context, id TableIdent) (TableSpec, error)
	// StageSQL stages the rows of a DuckDB query, run on q, as data files
	// that stay invisible until Commit makes them part of the table. The
	// sink buffers every epoch in DuckDB, so this is its only way to stage.
	StageSQL(ctx context.Context, id TableIdent, q Querier, src Source) (Receipt, error)
	// Commit makes the receipts visible atomically, with the removals of
	// opts, as one table version, if opts.Requires all hold. Compare-and-swap
	// backends retry a lost race here, with backoff.
	Commit(ctx context.Context, id TableIdent, receipts []Receipt, opts CommitOptions) (CommitOutcome, error)
	// Discard deletes staged data that will not be committed: the files of
	// a rolled-back epoch, of a merge that must be redone, or of a crashed
	// run's journal. Files a landed commit references stay.
	Discard(ctx context.Context, id TableIdent, receipts []Receipt) error
	// LastEpoch returns the last epoch writerID committed to the table: the
	// exactly-once record a restarted sink recovers from.
	LastEpoch(ctx context.Context, id TableIdent, writerID string) (epoch int64, ok bool, err error)
}

// Querier runs SQL on DuckDB; *sql.DB, *sql.Conn and *sql.Tx satisfy it.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Source is a DuckDB query whose rows StageSQL stages.
type Source struct {
	Query string
	// Columns, when the caller knows them, are the names and DuckDB types
	// Query yields, as DESCRIBE would report them. A stager asks DuckDB
	// when they are nil: a call that costs a small epoch a tenth of its
	// time.
	Columns []SourceColumn
	// Evolve stages the rows for the table as it will be after these
	// schema changes, which the commit makes (CommitOptions.SchemaChanges).
	Evolve []SchemaChange
}

// SourceColumn is one column of a Source.
type SourceColumn struct {
	Name       string
	DuckDBType string
}

// Sentinel errors callers branch on.
var (
	// ErrConflict: another writer changed what this commit depends on, and
	// retrying the same commit cannot succeed; redo the work on a fresh read.
	ErrConflict = errors.New("commit conflict")
	// ErrUnsupported: the table or the request uses something the backend
	// does not implement.
	ErrUnsupported = errors.New("unsupported")
	// ErrCorrupt: the table's log or metadata cannot be replayed (bad
	// JSON, a missing version); the table is refused, never guessed at.
	ErrCorrupt = errors.New("table is corrupt")
	// ErrNoTable: the table does not exist.
	ErrNoTable = errors.New("table does not exist")
	// ErrInvalid: the request itself is malformed.
	ErrInvalid = errors.New("invalid request")
	// ErrTableExists: CreateTable found the table already there.
	ErrTableExists = errors.New("table already exists")
	// ErrTimeout: the catalog or storage did not answer in time; the call
	// may be tried again.
	ErrTimeout = errors.New("catalog did not answer in time")
)

// TableIdent names a table: a catalog, a namespace path and a name. For
// path-based tables the name is the location and the rest is empty.
type TableIdent struct {
	Catalog   string
	Namespace []string
	Name      string
}

// String renders the identifier as catalog.ns1.ns2.name, omitting empty parts.
func (t TableIdent) String() string {
	parts := make([]string, 0, len(t.Namespace)+2)
	if t.Catalog != "" {
		parts = append(parts, t.Catalog)
	}
	parts = append(parts, t.Namespace...)
	parts = append(parts, t.Name)
	return strings.Join(parts, ".")
}

// Validate rejects identifiers no backend can serve.
func (t TableIdent) Validate() error {
	if strings.TrimSpace(t.Name) == "" {
		return fmt.Errorf("%w: table identifier without a name", ErrInvalid)
	}
	for _, n := range t.Namespace {
		if n == "" {
			return fmt.Errorf("%w: empty namespace element in %q", ErrInvalid, t.String())
		}
	}
	if strings.ContainsRune(t.String(), 0) {
		return fmt.Errorf("%w: NUL byte in table identifier", ErrInvalid)
	}
	return nil
}

// TableSpec describes a table.
type TableSpec struct {
	Schema        *arrow.Schema
	SchemaSpec    SchemaSpec
	PartitionSpec PartitionSpec
	Properties    map[string]string
	// Version is the current table version (Delta) or snapshot id (Iceberg);
	// -1 when the table has none.
	Version int64
}

// SchemaSpec is the schema with its version and the fields' metadata.
type SchemaSpec struct {
	Version   int64
	Timestamp time.Time
	Fields    []FieldSpec
}

// FieldSpec is one top-level column.
type FieldSpec struct {
	ID       int
	Name     string
	Type     string // the format's own type name, e.g. "long", "decimal(10,2)"
	Nullable bool
	Doc      string
}

// PartitionSpec lists how rows are partitioned.
type PartitionSpec struct {
	Fields []PartitionField
}

// PartitionField derives one partition value from a source column.
type PartitionField struct {
	SourceID  int
	Name      string
	Transform Transform
}

// TransformKind names a partition transform.
type TransformKind string

// The partition transforms of DESIGN.md (Iceberg's set; Delta has identity).
const (
	Identity TransformKind = "identity"
	Bucket   TransformKind = "bucket"
	Truncate TransformKind = "truncate"
	Year     TransformKind = "year"
	Month    TransformKind = "month"
	Day      TransformKind = "day"
	Hour     TransformKind = "hour"
)

// Transform is a partition transform; Param is N of bucket(N) or W of truncate(W).
type Transform struct {
	Kind  TransformKind
	Param int
}

// String renders the transform as SQL spells it: day, bucket(16), ...
func (t Transform) String() string {
	if t.Kind == Bucket || t.Kind == Truncate {
		return fmt.Sprintf("%s(%d)", t.Kind, t.Param)
	}
	return string(t.Kind)
}

// ParseTransform reads "identity", "bucket(16)", "truncate(4)", "day", ...
func ParseTransform(s string) (Transform, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch TransformKind(s) {
	case Identity, Year, Month, Day, Hour:
		return Transform{Kind: TransformKind(s)}, nil
	}
	for _, k := range []TransformKind{Bucket, Truncate} {
		prefix := string(k) + "("
		if strings.HasPrefix(s, prefix) && strings.HasSuffix(s, ")") {
			var n int
			arg := strings.TrimSpace(s[len(prefix) : len(s)-1])
			if _, err := fmt.Sscanf(arg, "%d", &n); err != nil || n <= 0 || fmt.Sprint(n) != arg {
				return Transform{}, fmt.Errorf("%w: %s needs a positive integer, got %q", ErrInvalid, k, arg)
			}
			return Transform{Kind: k, Param: n}, nil
		}
	}
	return Transform{}, fmt.Errorf("%w: unknown partition transform %q", ErrInvalid, s)
}

// Receipt is what StageSQL (or an ArrowStager) staged: backend metadata (for Delta, the add
// actions) plus counts. It survives a JSON round trip, so it can be logged
// or handed to another process.
type Receipt struct {
	Metadata json.RawMessage `json:"metadata"`
	Files    int             `json:"files"`
	Rows     int64           `json:"rows"`
	Bytes    int64           `json:"bytes"`
	// InProcess is the backend's own in-memory form of Metadata, for a
	// Commit in the process that staged the receipt: it spares decoding
	// Metadata and what the backend can vouch for itself. It is never
	// encoded, so a receipt from elsewhere (a journal read back) carries
	// none and is checked in full. Only the backend that made it reads it.
	InProcess any `json:"-"`
}

// CommitOptions carry the exactly-once record and the removals of an upsert.
type CommitOptions struct {
	// WriterID and Epoch are recorded with the commit (Delta txn appId and
	// version); a commit whose epoch the table already holds for this
	// writer is skipped, never applied twice. Epoch < 0 records nothing.
	WriterID string
	Epoch    int64
	// Removes names data files (as the backend spells them in receipts and
	// specs) that this commit takes out: the copy-on-write half of an upsert.
	Removes []string
	// Operation names the commit for the table's history.
	Operation string
	// MaxRetries bounds the retry loop on lost races (0: a default).
	MaxRetries int
	// Requires are the preconditions of the commit (see Requirement): it
	// lands only if each still holds when it is made.
	Requires []Requirement
	// SchemaChanges evolve the table's schema in the same version as the
	// data (automatic evolution); the receipts were staged with the same
	// changes (Source.Evolve). Only an InCommitEvolver reads them: the
	// sink sends them to no other backend.
	SchemaChanges []SchemaChange
}

// CommitOutcome reports a commit.
type CommitOutcome struct {
	Version    int64
	CommitTime time.Time
	Retries    int
	// Skipped: the table already held this writer's epoch; nothing was written.
	Skipped bool
}
