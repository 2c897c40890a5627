// Package delta reads and writes Delta Lake tables (PROTOCOL.md): the
// transaction log, checkpoints, data files and deletion vectors. It knows
// nothing of SQL sessions or sinks; catalogadapter/deltalake builds on it.
//
// A Table is a table at one location, seen through a Storage (LocalStorage
// here, tableformat/objectstore for object stores). Latest, At and Update
// give a Snapshot: one version's metadata, protocol, live files and
// application transactions, replayed from the log (logstate.go) and its
// checkpoints. A writer gets Add actions from Snapshot.WriteFiles, commits
// them with Snapshot.Commit (put-if-absent on the next log entry; a lost
// race is a *ConflictError) and checkpoints with Table.Checkpoint. Readers
// get DuckDB SQL from Snapshot.ScanSQL. Actions are the log's records
// (actions.go); StructType and its kin model the table schema (schema.go).
//
// Start with snapshot.go and commit.go, then storage.go; the checkpoint_*
// and schema_* files hold the Parquet and schema codecs beside them.
package delta
