package catalogadapter

// Table maintenance: what keeps a table healthy over years of small
// commits. Compaction merges small files, vacuum deletes what no version
// within retention needs, history and time travel read the versions kept.
// A backend implements the interfaces it can serve; the sink runs
// OPTIMIZE, auto-compaction, VACUUM, SHOW SINK HISTORY and AS OF only
// through them, and refuses with ErrUnsupported when one is missing.
//
// Every operation here keeps the exactly-once record: after it, LastEpoch
// answers for every writer what it answered before.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Compactor bin-packs small data files into files of the target size.
type Compactor interface {
	// Compact rewrites, partition by partition, the small live files
	// opts selects into files of about the target size, with q (DuckDB),
	// in one commit that changes no row and no exactly-once record. On
	// Delta its adds and removes carry dataChange false; on Iceberg it is
	// a replace snapshot that also folds in the delete files that apply to
	// the files it rewrites. It conflicts only with a concurrent commit
	// that removed (or, on Iceberg, deleted rows of) one of the files it
	// rewrites: it then plans again on the new version, up to
	// opts.MaxRetries times, or gives up with an error wrapping
	// ErrConflict, having deleted what it staged. Concurrent appends never
	// make it fail. Nothing to compact is no error: Committed is false and
	// no version is made.
	Compact(ctx context.Context, id TableIdent, q Querier, opts CompactOptions) (CompactOutcome, error)
}

// CompactOptions select what Compact rewrites.
type CompactOptions struct {
	// TargetFileSize is the size (bytes) written files aim at; 0 takes the
	// table's own target, or the backend's default.
	TargetFileSize int64
	// SmallFileSize: a file below it is small; 0 means
	// DefaultSmallFileFraction of the target.
	SmallFileSize int64
	// MinFiles: a partition is compacted only when it holds at least this
	// many small files (and, on Iceberg, a file with deletes counts as
	// small). Below 2 means 2.
	MinFiles int
	// Partitions keeps the partitions it returns true for (OPTIMIZE ...
	// WHERE); nil keeps all. It gets DataFile.Partition of the partition's
	// files: typed values by partition column, nil for null.
	Partitions func(partition map[string]any) (bool, error)
	// Predicate is the text Partitions was made from (OPTIMIZE's WHERE),
	// for the table's history; empty when none.
	Predicate string
	// MaxRetries bounds the plans after conflicts (0: a default).
	MaxRetries int
	// Operation names the commit in the table's history ("OPTIMIZE" when
	// empty; auto-compaction passes "AUTO COMPACT").
	Operation string
	// KeepDeletionVectors: a file with a deletion vector is compacted only
	// as any file is (small, with enough others), not purged of its
	// deleted rows whatever its size, as OPTIMIZE does. Auto-compaction
	// sets it, or it would undo each delete's saving at once.
	KeepDeletionVectors bool
}

// DefaultSmallFileFraction: a file under this fraction of the target size
// is small, as Delta's auto-compaction counts them.
const DefaultSmallFileFraction = 0.5

// CompactOutcome reports a compaction.
type CompactOutcome struct {
	// Committed: a version was made (Version); false when nothing was
	// small enough, or many enough, to compact.
	Committed  bool
	Version    int64
	Partitions int // partitions rewritten
	// Files and bytes taken out and written; DeleteFilesRemoved are the
	// delete files (Iceberg) folded into the rewritten data.
	FilesRemoved, FilesAdded int
	BytesRemoved, BytesAdded int64
	DeleteFilesRemoved       int
	Rows                     int64 // rows in the written files
	Retries                  int
}

// Vacuumer deletes what no version within retention needs.
type Vacuumer interface {
	// Vacuum deletes the table's data files that no version within the
	// retention references, and orphans: files in the table's data folders
	// that no version ever named, such as a crashed stage's. It never
	// deletes a file a stage in flight, in any process, may still commit
	// (see StageLifetime). On Iceberg it first expires the snapshots older
	// than the retention (keeping at least opts.MinSnapshots, and every
	// writer's last epoch, which LastEpoch still finds afterwards), then
	// deletes what only they referenced, and rewrites the manifests when
	// many are small. With DryRun it deletes and commits nothing and
	// reports what it would delete.
	Vacuum(ctx context.Context, id TableIdent, opts VacuumOptions) (VacuumOutcome, error)
}

// VacuumOptions say how much history Vacuum keeps.
type VacuumOptions struct {
	// Retain is how far back versions stay readable; below 0 takes the
	// table's own retention (Delta: delta.deletedFileRetentionDuration;
	// Iceberg: history.expire.max-snapshot-age-ms), DefaultRetention when
	// it has none.
	Retain time.Duration
	// AllowShortRetention lets Retain go below the table's retention;
	// without it such a Vacuum fails with an error wrapping ErrRetention
	// before it deletes anything, as Spark's retentionDurationCheck does.
	AllowShortRetention bool
	DryRun              bool
	// MinSnapshots is the number of newest snapshots Iceberg keeps
	// whatever their age (0: the table's history.expire.min-snapshots-to-keep,
	// 1 when unset).
	MinSnapshots int
	// Now is the clock the retention counts back from; time.Now when nil.
	Now func() time.Time
}

// DefaultRetention is the retention of a table that sets none: 7 days, as
// Delta's deletedFileRetentionDuration defaults to.
const DefaultRetention = 7 * 24 * time.Hour

// StageLifetime bounds how long a staged file may wait for its commit. A
// staged file's name carries the time it was staged (internal/stagename);
// Commit refuses a receipt staged longer ago than this (ErrStageExpired),
// so Vacuum may delete any unreferenced file staged before it, and no
// other: it never races a stage in flight, whatever the retention.
const StageLifetime = 24 * time.Hour

// VacuumOutcome reports a vacuum.
type VacuumOutcome struct {
	// Retain is the retention applied.
	Retain time.Duration
	// Files are the files deleted (or, with DryRun, that would be).
	Files        []VacuumedFile
	BytesDeleted int64
	// SnapshotsExpired and ManifestsRewritten are Iceberg's.
	SnapshotsExpired   int
	ManifestsRewritten int
	// OldestVersion is the oldest version (Delta) or snapshot id (Iceberg)
	// still readable after the vacuum.
	OldestVersion int64
	// Version is the version or snapshot the vacuum itself made (Delta
	// records VACUUM START/END commits; Iceberg's expiry makes none), -1
	// when it made none.
	Version int64
}

// VacuumedFile is one file Vacuum deleted or would delete.
type VacuumedFile struct {
	Path string // as the table names it (relative to the table root on Delta)
	Size int64
	// Reason is "removed" (a version within retention no longer names
	// it), "orphan" (no version ever did) or "expired" (Iceberg: only an
	// expired snapshot named it, a data, delete, manifest or manifest
	// list file).
	Reason string
}

// Historian lists a table's versions and finds the one current at a time.
type Historian interface {
	// History lists the table's versions (snapshots) newest first, at
	// most limit of them (0: all the table still records).
	History(ctx context.Context, id TableIdent, limit int) ([]HistoryEntry, error)
	// VersionAt returns the version current at t: the newest committed at
	// or before t. It fails with a *VersionUnavailableError when t is
	// before the oldest readable version, and with ErrInvalid when t is
	// before the table's first version.
	VersionAt(ctx context.Context, id TableIdent, t time.Time) (int64, error)
}

// HistoryEntry is one version of a table.
type HistoryEntry struct {
	Version   int64 // Delta version, or Iceberg snapshot id
	Timestamp time.Time
	// Operation as the format records it: WRITE, MERGE, DELETE, OPTIMIZE,
	// VACUUM END, ... on Delta; append, overwrite, delete, replace on
	// Iceberg, in upper case.
	Operation string
	// WriterID and Epoch are the exactly-once record the version carries;
	// empty and -1 when it carries none.
	WriterID string
	Epoch    int64
	// Rows and files added and removed; -1 when the version does not tell.
	RowsAdded, RowsRemoved   int64
	FilesAdded, FilesRemoved int64
}

// Inspector reports the health of a table's layout.
type Inspector interface {
	// Stats describes the table's current version. A file below
	// smallFile bytes counts as small (0: DefaultSmallFileFraction of the
	// table's target size).
	Stats(ctx context.Context, id TableIdent, smallFile int64) (TableStats, error)
}

// TableStats describe a table's current version.
type TableStats struct {
	Version    int64
	LiveFiles  int64
	SmallFiles int64
	Bytes      int64
	// DeleteFiles are Iceberg's live delete files (0 on Delta).
	DeleteFiles int64
	// VersionsSinceCheckpoint is Delta's count of commits after the last
	// checkpoint; -1 for formats without one.
	VersionsSinceCheckpoint int64
	// TxnRetention is Delta's delta.setTransactionRetentionDuration, 0 when
	// unset: exactly-once records older than it may leave the table.
	TxnRetention time.Duration
	// OldestVersion is the oldest version still readable.
	OldestVersion int64
}

// Sentinel errors of maintenance.
var (
	// ErrVersionUnavailable: the version asked for existed but can no
	// longer be read (vacuumed, its log cleaned up, its snapshot expired).
	ErrVersionUnavailable = errors.New("version is no longer readable")
	// ErrRetention: a retention below the table's, without
	// AllowShortRetention.
	ErrRetention = errors.New("retention is shorter than the table's")
	// ErrStageExpired: a receipt staged longer ago than StageLifetime;
	// Vacuum may have deleted its files, so it is never committed.
	ErrStageExpired = errors.New("staged files are past their lifetime")
)

// VersionUnavailableError names a version that cannot be read and the
// oldest that can. It wraps ErrVersionUnavailable.
type VersionUnavailableError struct {
	Version int64
	Oldest  int64
	// Why says what removed it ("vacuumed", "log cleaned up", "snapshot expired").
	Why string
}

func (e *VersionUnavailableError) Error() string {
	return fmt.Sprintf("version %d is no longer readable (%s); the oldest readable version is %d", e.Version, e.Why, e.Oldest)
}

// Unwrap makes errors.Is(err, ErrVersionUnavailable) hold.
func (e *VersionUnavailableError) Unwrap() error { return ErrVersionUnavailable }
