package sqlsink

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/catalogadapter"
)

// Mode is how rows land in the table.
type Mode string

// Modes.
const (
	// ModeAppend adds every row; it needs no key and refuses deletes.
	ModeAppend Mode = "append"
	// ModeUpsert collapses an epoch per primary key (last arrival wins) and
	// replaces the key's row in the table, or deletes it.
	ModeUpsert Mode = "upsert"
)

// Delivery is the guarantee a sink gives for replays.
type Delivery string

// Delivery guarantees.
const (
	// ExactlyOnce records (writer id, epoch) with every commit; an epoch the
	// table already holds is skipped.
	ExactlyOnce Delivery = "exactly-once"
	// AtLeastOnce records nothing in the table: an epoch replayed after a
	// restart is written again (within one open sink, an epoch at or below
	// the last committed one is still skipped). For upstreams that
	// deduplicate themselves, or upsert sinks, where a replay rewrites the
	// same rows.
	AtLeastOnce Delivery = "at-least-once"
)

// ErrConfig marks an invalid configuration.
var ErrConfig = errors.New("invalid sink configuration")

// Config configures a sink. Zero values take the defaults below.
type Config struct {
	// Name names the sink; the default writer id derives from it.
	Name string
	// Provider and Table say where the table is.
	Provider catalogadapter.Provider
	Table    catalogadapter.TableIdent
	// Schema creates the table when it does not exist; nil attaches to an
	// existing table and takes its schema.
	Schema *arrow.Schema
	// PartitionColumns partitions a created table by these columns'
	// values; PartitionSpec does it with transforms (day, bucket, ...),
	// for formats that have them. At most one of the two is set.
	PartitionColumns []string
	PartitionSpec    catalogadapter.PartitionSpec
	// TableProperties are passed to the table on create.
	TableProperties map[string]string

	Mode Mode
	// Key is the primary key, required in upsert mode.
	Key      []string
	Delivery Delivery
	// WriterID identifies this writer in the table's exactly-once record.
	// It must be stable across restarts; the default is "lakesql-" + Name.
	WriterID string

	// TargetFileSize is the size data files aim at (bytes), recorded on
	// create with the table (catalogadapter.TableDef.TargetFileSize, which
	// each backend spells as its format does), so that writers of the
	// table (this one included) honour it.
	TargetFileSize int64
	// Append mode stages Parquet files before the commit when the buffer
	// holds this many rows or bytes, or is this old. Upsert epochs stay in
	// DuckDB until PreCommit (DuckDB spills them to TempDir).
	FlushRows  int64
	FlushBytes int64
	FlushAge   time.Duration

	// CheckpointInterval is the table's checkpoint interval on create.
	CheckpointInterval int

	// MemoryLimit bounds DuckDB's memory ("1GB"); beyond it the buffer
	// spills to TempDir.
	MemoryLimit string
	TempDir     string
	// StateDir keeps the sink's staging journal, so that files staged by a
	// run that crashed are deleted when the sink opens again. Optional.
	StateDir string
	// Threads bounds DuckDB's threads (0: DuckDB's default).
	Threads int
	// Buffers, when set, is the pool that bounds the write buffers of the
	// sinks sharing it (see BufferPool); nil: the buffer stays open.
	Buffers *BufferPool

	// DisableAutoCompact turns off background compaction (autocompact.go),
	// which is on by default when the provider can compact. Once this
	// sink's commits have added CompactMinFiles small files (or the table
	// held as many when the sink opened), a partition holding at least
	// that many is compacted in the background; 0 takes
	// DefaultCompactMinFiles.
	DisableAutoCompact bool
	CompactMinFiles    int

	// DeleteMode is how upserts and deletes take rows out of existing
	// files (deletemode.go); "" takes deletion vectors when the table has
	// them on, and copy-on-write otherwise.
	DeleteMode DeleteMode

	// SchemaEvolution is EvolveAddColumns or EvolveNone ("" is none): with
	// add_columns, a batch's columns the table lacks are added as nullable
	// and its wider types widen the columns, in its epoch's commit.
	SchemaEvolution string

	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Defaults.
const (
	DefaultFlushRows   = 4 << 20
	DefaultFlushBytes  = 512 << 20
	DefaultFlushAge    = 5 * time.Minute
	DefaultMemoryLimit = "1GB"
	// DefaultCompactMinFiles: see README, Auto-compaction, for the
	// measurement behind it.
	DefaultCompactMinFiles = 10
	// MaxCompactMinFiles bounds CompactMinFiles (and compact_min_files).
	MaxCompactMinFiles = 100000
)

// withDefaults returns a copy with defaults filled in.
func (c Config) withDefaults() Config {
	if c.Mode == "" {
		c.Mode = ModeAppend
	}
	if c.Delivery == "" {
		c.Delivery = ExactlyOnce
	}
	if c.WriterID == "" && c.Name != "" {
		c.WriterID = "lakesql-" + c.Name
	}
	if c.FlushRows == 0 {
		c.FlushRows = DefaultFlushRows
	}
	if c.FlushBytes == 0 {
		c.FlushBytes = DefaultFlushBytes
	}
	if c.FlushAge == 0 {
		c.FlushAge = DefaultFlushAge
	}
	if c.MemoryLimit == "" {
		c.MemoryLimit = DefaultMemoryLimit
	}
	if c.CompactMinFiles == 0 {
		c.CompactMinFiles = DefaultCompactMinFiles
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// validate checks what can be checked without the table.
func (c Config) validate() error {
	var errs []string
	if c.Name == "" {
		errs = append(errs, "name is required")
	}
	if c.Provider == nil {
		errs = append(errs, "provider is required")
	}
	if err := c.Table.Validate(); err != nil {
		errs = append(errs, err.Error())
	}
	switch c.Mode {
	case ModeAppend:
	case ModeUpsert:
		if len(c.Key) == 0 {
			errs = append(errs, "upsert mode requires a primary key")
		}
	default:
		errs = append(errs, fmt.Sprintf("unknown mode %q (append or upsert)", c.Mode))
	}
	switch c.Delivery {
	case ExactlyOnce, AtLeastOnce:
	default:
		errs = append(errs, fmt.Sprintf("unknown delivery %q (exactly-once or at-least-once)", c.Delivery))
	}
	if c.Delivery == ExactlyOnce && c.WriterID == "" {
		errs = append(errs, "exactly-once delivery requires a writer id")
	}
	if c.TargetFileSize < 0 || c.FlushRows < 0 || c.FlushBytes < 0 || c.FlushAge < 0 {
		errs = append(errs, "sizes and thresholds must not be negative")
	}
	if c.CheckpointInterval < 0 {
		errs = append(errs, "checkpoint interval must not be negative")
	}
	if c.CompactMinFiles < 2 || c.CompactMinFiles > MaxCompactMinFiles {
		errs = append(errs, fmt.Sprintf("compact min files must be between 2 and %d", MaxCompactMinFiles))
	}
	switch c.SchemaEvolution {
	case "", EvolveNone, EvolveAddColumns:
	default:
		errs = append(errs, fmt.Sprintf("unknown schema evolution %q (add_columns or none)", c.SchemaEvolution))
	}
	if c.Threads < 0 {
		errs = append(errs, "threads must not be negative")
	}
	if err := c.DeleteMode.check(); err != nil {
		errs = append(errs, err.Error())
	}
	if strings.ContainsAny(c.MemoryLimit, "'\\") || strings.ContainsAny(c.TempDir, "'") {
		errs = append(errs, "memory limit and temp dir must not contain quotes")
	}
	if len(c.PartitionColumns) > 0 && len(c.PartitionSpec.Fields) > 0 {
		errs = append(errs, "partition columns and a partition spec are both set")
	}
	seen := map[string]bool{}
	for _, k := range c.Key {
		if seen[k] {
			errs = append(errs, fmt.Sprintf("key column %q is given twice", k))
		}
		seen[k] = true
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %s", ErrConfig, strings.Join(errs, "; "))
	}
	return nil
}

// validateAgainst checks the configuration against the table's schema.
func (c Config) validateAgainst(schema *arrow.Schema) error {
	var errs []string
	for _, k := range c.Key {
		if idx := schema.FieldIndices(k); len(idx) == 0 {
			errs = append(errs, fmt.Sprintf("key column %q is not in the table", k))
		}
	}
	for _, p := range c.PartitionColumns {
		if idx := schema.FieldIndices(p); len(idx) == 0 {
			errs = append(errs, fmt.Sprintf("partition column %q is not in the table", p))
		}
	}
	for _, f := range c.PartitionSpec.Fields {
		if idx := schema.FieldIndices(f.Name); len(idx) == 0 {
			errs = append(errs, fmt.Sprintf("partition column %q is not in the table", f.Name))
		}
	}
	for _, f := range schema.Fields() {
		if strings.HasPrefix(f.Name, "_") {
			errs = append(errs, fmt.Sprintf("column %q: names beginning with _ are reserved for metadata", f.Name))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %s", ErrConfig, strings.Join(errs, "; "))
	}
	return nil
}
