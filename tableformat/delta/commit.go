package delta

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// EngineInfo is written into every commitInfo we make.
var EngineInfo = "lakesql"

// CreateOptions describe a new table.
type CreateOptions struct {
	Name             string
	Description      string
	Schema           *StructType
	PartitionColumns []string
	Configuration    map[string]string
	// Now returns the commit time; time.Now when nil. Tests pin it.
	Now func() time.Time
}

// Create writes version 0 of a new table: protocol reader 1 / writer 2 and a
// metaData action with a fresh id. It fails with ErrTableExists if the
// location already has a version 0.
func Create(ctx context.Context, store Storage, opts CreateOptions) (*Snapshot, error) {
	if opts.Schema == nil || len(opts.Schema.Fields) == 0 {
		return nil, fmt.Errorf("create table: a schema with at least one column is required")
	}
	if err := validatePartitionColumns(opts.Schema, opts.PartitionColumns); err != nil {
		return nil, fmt.Errorf("create table: %w", err)
	}
	conf := map[string]string{}
	for k, v := range opts.Configuration {
		conf[k] = v
	}
	schema, err := createColumnMapping(opts.Schema, conf)
	if err != nil {
		return nil, fmt.Errorf("create table: %w", err)
	}
	schemaString, err := schema.JSON()
	if err != nil {
		return nil, fmt.Errorf("create table: %w", err)
	}
	now := nowFunc(opts.Now)()
	created := now.UnixMilli()
	md := &Metadata{
		ID:               uuid.NewString(),
		Format:           Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString:     schemaString,
		PartitionColumns: append([]string{}, opts.PartitionColumns...),
		CreatedTime:      &created,
		Configuration:    map[string]string{},
	}
	if opts.Name != "" {
		md.Name = &opts.Name
	}
	if opts.Description != "" {
		md.Description = &opts.Description
	}
	for k, v := range conf {
		md.Configuration[k] = v
	}
	if _, err := checkpointInterval(md.Configuration); err != nil {
		return nil, fmt.Errorf("create table: %w", err)
	}
	proto := createProtocol(schema, md.Configuration)
	if fs := PropertyFeatures(md.Configuration); len(fs) > 0 {
		p := WithFeatures(*proto, fs...)
		proto = &p
		withRowTrackingColumns(md.Configuration)
	}
	if ColumnMappingMode(conf) != "none" {
		up := ColumnMappingProtocol(*proto)
		proto = &up
	}
	if err := CheckColumnMapping(*proto, schema, conf); err != nil {
		return nil, fmt.Errorf("create table: %w", err)
	}
	txnID := uuid.NewString()
	ci := commitInfo(now, "CREATE TABLE", map[string]any{"partitionBy": opts.PartitionColumns}, nil, txnID)
	if inCommitTimestamps(*proto, md) {
		ci["inCommitTimestamp"] = created
	}
	actions := []Action{
		{CommitInfo: ci},
		{Protocol: proto},
		{MetaData: md},
	}
	data, err := EncodeActions(actions)
	if err != nil {
		return nil, err
	}
	if err := putEntry(ctx, store, commitKey(0), data, txnID); err != nil {
		if errors.Is(err, ErrVersionExists) {
			return nil, fmt.Errorf("create table: %w", ErrTableExists)
		}
		return nil, fmt.Errorf("create table: %w", err)
	}
	return OpenTable(store, TableOptions{Now: opts.Now}).At(ctx, 0)
}

// createProtocol is the least protocol a new table needs: reader 1 and
// writer 2 (appendOnly and invariants, which we honour by never adding
// invariants), unless a column is a timestamp without time zone or
// delta.enableDeletionVectors is on, which the protocol allows only on
// reader 3 / writer 7 tables that name the timestampNtz (deletionVectors)
// feature in both lists. At writer 7 the legacy features are
// active only when listed, so an append-only table lists appendOnly and one
// with a NOT NULL column lists invariants (Spark refuses the table otherwise).
func createProtocol(schema *StructType, conf map[string]string) *Protocol {
	ntz, dv := hasType(schema, TypeTimestampNTZ), DeletionVectorsEnabled(conf)
	if !ntz && !dv {
		return &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	}
	p := &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{}, WriterFeatures: []string{}}
	for _, f := range []struct {
		on   bool
		name string
	}{{ntz, "timestampNtz"}, {dv, "deletionVectors"}} {
		if f.on {
			p.ReaderFeatures = append(p.ReaderFeatures, f.name)
			p.WriterFeatures = append(p.WriterFeatures, f.name)
		}
	}
	if (&Metadata{Configuration: conf}).AppendOnly() {
		p.WriterFeatures = append(p.WriterFeatures, "appendOnly")
	}
	if hasNotNull(schema) {
		p.WriterFeatures = append(p.WriterFeatures, "invariants")
	}
	return p
}

// hasNotNull reports whether a field of schema, or of a struct in it, is
// NOT NULL: what Spark counts as a column invariant (it does not look into
// arrays and maps).
func hasNotNull(schema *StructType) bool {
	if schema == nil {
		return false
	}
	for _, f := range schema.Fields {
		if !f.Nullable {
			return true
		}
		if st, ok := f.Type.(*StructType); ok && hasNotNull(st) {
			return true
		}
	}
	return false
}

// hasType reports whether t is, or holds at any depth, the type want.
func hasType(t DataType, want PrimitiveType) bool {
	switch t := t.(type) {
	case PrimitiveType:
		return t == want
	case *StructType:
		for _, f := range t.Fields {
			if hasType(f.Type, want) {
				return true
			}
		}
	case *ArrayType:
		return hasType(t.ElementType, want)
	case *MapType:
		return hasType(t.KeyType, want) || hasType(t.ValueType, want)
	}
	return false
}

// AppendOnly reports whether the table is append-only (delta.appendOnly,
// read as Spark reads a boolean: in any case).
func (m *Metadata) AppendOnly() bool {
	return strings.EqualFold(m.Configuration["delta.appendOnly"], "true")
}

// ChangeDataFeed reports whether delta.enableChangeDataFeed is on: a
// writer must then write cdc files for every change that is not an append.
func (m *Metadata) ChangeDataFeed() bool {
	return strings.EqualFold(m.Configuration["delta.enableChangeDataFeed"], "true")
}

func validatePartitionColumns(schema *StructType, cols []string) error {
	seen := map[string]bool{}
	for _, c := range cols {
		f := schema.Field(c)
		if f == nil {
			return fmt.Errorf("partition column %q is not in the schema", c)
		}
		if seen[c] {
			return fmt.Errorf("partition column %q is given twice", c)
		}
		seen[c] = true
		switch f.Type.(type) {
		case *StructType, *ArrayType, *MapType:
			return fmt.Errorf("partition column %q must have a primitive type", c)
		}
		if f.Type == TypeBinary {
			return unsupported("binary partition column %q", c)
		}
	}
	if len(cols) == len(schema.Fields) && len(cols) > 0 {
		return fmt.Errorf("at least one column must not be a partition column")
	}
	return nil
}

func nowFunc(f func() time.Time) func() time.Time {
	if f == nil {
		return time.Now
	}
	return f
}

// commitInfo builds the entry's commitInfo. txnID (Spark's field of that
// name) is unique per Commit call: it tells our own entry from another
// writer's when a put's outcome has to be read back.
func commitInfo(now time.Time, op string, params, metrics map[string]any, txnID string) map[string]any {
	ci := map[string]any{
		"timestamp":  now.UnixMilli(),
		"operation":  op,
		"engineInfo": EngineInfo,
		"txnId":      txnID,
	}
	if len(params) > 0 {
		// Spark stores operation parameters as JSON strings; readers expect that.
		ps := map[string]string{}
		for k, v := range params {
			ps[k] = jsonString(v)
		}
		ci["operationParameters"] = ps
	}
	if len(metrics) > 0 {
		ms := map[string]string{}
		for k, v := range metrics {
			ms[k] = jsonString(v)
		}
		ci["operationMetrics"] = ms
	}
	return ci
}

// CommitOptions describe one commit.
type CommitOptions struct {
	// Operation names the commit in commitInfo ("WRITE", "MERGE", ...).
	Operation string
	// Parameters go into commitInfo.operationParameters.
	Parameters map[string]any
	// Metrics go into commitInfo.operationMetrics (numAddedFiles, ...),
	// as JSON strings, as Spark writes them.
	Metrics map[string]any
	// Now returns the commit time; time.Now when nil.
	Now func() time.Time
	// NoCheckpoint skips the checkpoint this commit would be due for, and
	// reports it in CommitResult.CheckpointDue.
	NoCheckpoint bool
}

// CommitResult reports a successful commit.
type CommitResult struct {
	Version int64
	Time    time.Time
	// Checkpointed tells that a checkpoint was written at Version. A failed
	// checkpoint does not undo the commit; its error is in CheckpointErr.
	Checkpointed  bool
	CheckpointErr error
	// CheckpointDue tells that Version was due for a checkpoint that
	// NoCheckpoint left to the caller (Table.Checkpoint).
	CheckpointDue bool
	// Snapshot is the table at Version, derived from the snapshot committed
	// on and the actions written, without reading the log back; nil when it
	// could not be derived (the caller reads the table instead).
	Snapshot *Snapshot
}

// Commit writes actions as version read.Version+1. The log entry is created
// with put-if-absent, so an existing version is never overwritten. When
// another writer took that version first, it returns a *ConflictError
// carrying the winning commits; the caller checks them and retries from a
// fresh snapshot.
func (s *Snapshot) Commit(ctx context.Context, actions []Action, opts CommitOptions) (CommitResult, error) {
	version := s.Version + 1
	if err := s.checkWritable(); err != nil {
		return CommitResult{}, fmt.Errorf("commit version %d: %w", version, err)
	}
	if err := s.checkActions(actions); err != nil {
		return CommitResult{}, fmt.Errorf("commit version %d: %w", version, err)
	}
	now := nowFunc(opts.Now)()
	op := opts.Operation
	if op == "" {
		op = "WRITE"
	}
	fc, err := s.withFeatures(ctx, version, now, actions)
	if err != nil {
		return CommitResult{}, fmt.Errorf("commit version %d: %w", version, err)
	}
	all := make([]Action, 0, len(fc.actions)+1)
	txnID := uuid.NewString()
	ci := commitInfo(now, op, opts.Parameters, opts.Metrics, txnID)
	fc.stamp(ci)
	// commitInfo first: in-commit timestamps require it.
	all = append(all, Action{CommitInfo: ci})
	all = append(all, fc.actions...)
	data, err := EncodeActions(all)
	if err != nil {
		return CommitResult{}, fmt.Errorf("commit version %d: %w", version, err)
	}
	if err := putEntry(ctx, s.table.store, commitKey(version), data, txnID); err != nil {
		if errors.Is(err, ErrVersionExists) {
			return CommitResult{}, s.conflict(ctx, version)
		}
		return CommitResult{}, fmt.Errorf("commit version %d: %w", version, err)
	}
	res := CommitResult{Version: version, Time: fc.time(now)}
	// Put-if-absent won, so version is exactly s plus this entry. It is
	// parsed back rather than reused, so the snapshot holds what readers
	// read and none of the caller's memory.
	if written, err := ParseActions(data); err == nil {
		if next, err := s.advance(s.table, []Commit{{Version: version, Actions: written}}, entryIdent(data)); err == nil {
			res.Snapshot = next
		}
	}
	interval, _ := checkpointInterval(s.Metadata.Configuration)
	switch {
	case version%interval != 0:
	case opts.NoCheckpoint:
		res.CheckpointDue = true
	default:
		res.CheckpointErr = s.table.Checkpoint(ctx, version)
		res.Checkpointed = res.CheckpointErr == nil
	}
	return res, nil
}

// unknownRetries bounds the puts of one entry whose earlier puts failed
// without landing.
const unknownRetries = 3

// putEntry writes a log entry with put-if-absent. A put that fails may
// still have landed (a timeout after the store took it), so its outcome is
// never guessed: the entry is read back. Ours (our txnID) is a success,
// another writer's is ErrVersionExists, none means the put did not land
// and is tried again. When even the read fails the state is unknown
// (ErrCommitUnknown).
func putEntry(ctx context.Context, store Storage, key string, data []byte, txnID string) error {
	for try := 0; ; try++ {
		err := store.PutIfAbsent(ctx, key, data)
		if err == nil {
			return nil
		}
		existing, rerr := store.Get(context.WithoutCancel(ctx), key)
		switch {
		case rerr == nil && entryTxnID(existing) == txnID:
			return nil // an earlier put of ours landed
		case rerr == nil:
			return fmt.Errorf("put %s: %w", key, ErrVersionExists)
		case errors.Is(rerr, ErrNotFound) && errors.Is(err, ErrVersionExists):
			return fmt.Errorf("%w, yet it cannot be read: %w", err, rerr)
		case errors.Is(rerr, ErrNotFound) && try < unknownRetries && ctx.Err() == nil:
			continue // the put did not land
		case errors.Is(rerr, ErrNotFound):
			return err
		}
		return fmt.Errorf("%w: the put failed (%w) and reading the entry back failed (%v)", ErrCommitUnknown, err, rerr)
	}
}

// entryTxnID returns commitInfo.txnId of a log entry, or "".
func entryTxnID(data []byte) string {
	actions, err := ParseActions(data)
	if err != nil {
		return ""
	}
	for _, a := range actions {
		if a.CommitInfo != nil {
			id, _ := a.CommitInfo["txnId"].(string)
			return id
		}
	}
	return ""
}

// checkWritable refuses to write this snapshot's table when we cannot
// honour its protocol or its schema's column invariants.
func (s *Snapshot) checkWritable() error {
	schema, err := s.Schema()
	if err != nil {
		return err
	}
	return checkWritableConf(s.Protocol, schema, s.Metadata.Configuration)
}

// checkActions refuses actions this table must not receive.
func (s *Snapshot) checkActions(actions []Action) error {
	appendOnly, cdf := s.Metadata.AppendOnly(), s.Metadata.ChangeDataFeed()
	for _, a := range actions {
		switch {
		case a.CommitInfo != nil:
			return fmt.Errorf("commitInfo is written by Commit, not by the caller")
		case a.Remove != nil && a.Remove.DataChange && appendOnly:
			return fmt.Errorf("table is append-only (delta.appendOnly): cannot remove %s", a.Remove.Path)
		case a.Remove != nil && a.Remove.DataChange && cdf:
			// Without cdc files, a reader of the feed would take every row of
			// the rewritten files as deleted and inserted again.
			return unsupported("changing or deleting rows of a table with the change data feed on " +
				"(changeDataFeed, delta.enableChangeDataFeed): we write no cdc files; appends are written")
		}
	}
	return s.checkChangedProtocol(actions)
}

// checkChangedProtocol refuses a commit whose protocol or metaData action
// leaves the table in a state we could not write: a protocol upgrade to a
// feature we do not honour, or a schema that adds column invariants.
func (s *Snapshot) checkChangedProtocol(actions []Action) error {
	p, md, changed := s.Protocol, (*Metadata)(nil), false
	for _, a := range actions {
		if a.Protocol != nil {
			p, changed = *a.Protocol, true
		}
		if a.MetaData != nil {
			md, changed = a.MetaData, true
		}
	}
	if !changed {
		return nil // Commit checked the snapshot's own state
	}
	schema, err := s.Schema()
	if md != nil {
		schema, err = ParseSchema(md.SchemaString)
	}
	if err != nil {
		return fmt.Errorf("new table schema: %w", err)
	}
	conf := s.Metadata.Configuration
	if md != nil {
		conf = md.Configuration
	}
	if err := CheckColumnMapping(p, schema, conf); err != nil {
		return err
	}
	return checkWritableConf(p, schema, conf)
}

// conflict reads the commits that won the race from version on.
func (s *Snapshot) conflict(ctx context.Context, version int64) error {
	ce := &ConflictError{Version: version}
	for v := version; ; v++ {
		actions, err := s.table.ReadCommit(ctx, v)
		if errors.Is(err, ErrNotFound) {
			break
		}
		if errors.Is(err, ErrCorruptLog) {
			return err // not a race to retry: the log is broken
		}
		if err != nil {
			return fmt.Errorf("%w (and reading the winner failed: %v)", ce, err)
		}
		ce.Winners = append(ce.Winners, Commit{Version: v, Actions: actions})
	}
	return ce
}

// checkpointInterval reads delta.checkpointInterval (10 when unset).
func checkpointInterval(conf map[string]string) (int64, error) {
	v, ok := conf["delta.checkpointInterval"]
	if !ok {
		return 10, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 10, fmt.Errorf("delta.checkpointInterval must be a positive integer, got %q", v)
	}
	return n, nil
}
