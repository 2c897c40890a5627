package delta

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"sort"
)

// maxUpdateCommits bounds how many new commits Update applies one by one;
// past it, a replay from the newest checkpoint reads less.
const maxUpdateCommits = 100

// Update returns the latest snapshot of the table, reusing prev, an
// earlier snapshot of the same location, instead of replaying the log from
// its checkpoint: when no version follows prev, prev itself; when some do,
// prev with their actions applied. It falls back to Latest when prev cannot
// be checked or the log no longer holds prev's own entry unchanged (the
// table was deleted and created again, or its old log cleaned up).
//
// The result is exactly what Latest would return, save CheckpointVersion
// (still prev's) and tombstones: a commit based on it is as safe as one
// based on Latest, and a stale one still loses its put-if-absent race.
func (t *Table) Update(ctx context.Context, prev *Snapshot) (*Snapshot, error) {
	if prev == nil || prev.ident == nil || prev.byKey == nil || prev.table == nil ||
		prev.table.store.URI() != t.store.URI() {
		return t.Latest(ctx)
	}
	var entries [][]byte
	for v := prev.Version + 1; ; v++ {
		if len(entries) == maxUpdateCommits {
			return t.Latest(ctx)
		}
		data, err := t.store.Get(ctx, commitKey(v))
		if errors.Is(err, ErrNotFound) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read commit %d: %w", v, err)
		}
		entries = append(entries, data)
	}
	// Checked after the newer entries were read. Had the table been deleted
	// since prev (and created again, whatever its length), prev's entry
	// would be gone or different now, so what was read above, or found
	// missing, belongs to prev's table. And a checkpoint named past the end
	// found means the entries after prev were cleaned up, not never written:
	// committing on prev would then put a version below the checkpoint,
	// where no reader looks.
	// The two reads are independent: on object storage, one round trip
	// instead of two.
	end := prev.Version + int64(len(entries))
	cleaned := make(chan bool, 1)
	go func() {
		lc, ok := t.readLastCheckpoint(ctx)
		cleaned <- ok && lc.Version > end
	}()
	same, err := t.Unchanged(ctx, prev)
	if <-cleaned || err != nil || !same {
		return t.Latest(ctx)
	}
	if len(entries) == 0 {
		return prev, nil
	}
	commits := make([]Commit, len(entries))
	for i, data := range entries {
		v := prev.Version + 1 + int64(i)
		actions, err := parseCommit(v, data)
		if err != nil {
			return nil, err
		}
		commits[i] = Commit{Version: v, Actions: actions}
	}
	return prev.advance(t, commits, entryIdent(entries[len(entries)-1]))
}

// Unchanged reports whether s's own log entry is still in t's log as s read
// it: false when it is gone or differs (the table was deleted and created
// again, or its log cleaned up past s), or when s cannot tell. A commit on
// s with put-if-absent then lands on s's table, and the put itself finds
// any version after s: one read instead of Update's three.
func (t *Table) Unchanged(ctx context.Context, s *Snapshot) (bool, error) {
	if s == nil || s.ident == nil {
		return false, nil
	}
	data, err := t.store.Get(ctx, commitKey(s.Version))
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read commit %d: %w", s.Version, err)
	}
	return *entryIdent(data) == *s.ident, nil
}

// entryIdent identifies a log entry by its content.
func entryIdent(data []byte) *[sha256.Size]byte {
	h := sha256.Sum256(data)
	return &h
}

// advance derives the snapshot after commits, which directly follow s, from
// s's state without reading anything; ident is the last commit's. The
// cost follows the live files (a map copy), not the size of the checkpoint.
func (s *Snapshot) advance(t *Table, commits []Commit, ident *[sha256.Size]byte) (*Snapshot, error) {
	// s has no file outside the table: its replay would have failed.
	st := newLogState(t)
	st.files = maps.Clone(s.byKey)
	st.txns, st.domains = maps.Clone(s.txns), maps.Clone(s.domains)
	if st.txns == nil {
		st.txns = map[string]Txn{}
	}
	if st.domains == nil {
		st.domains = map[string]DomainMetadata{}
	}
	md, proto := s.Metadata, s.Protocol
	st.metadata, st.protocol = &md, &proto
	touched := map[string]bool{}
	for i, c := range commits {
		if c.Version != s.Version+1+int64(i) {
			return nil, fmt.Errorf("advance version %d: commit %d does not follow", s.Version, c.Version)
		}
		for _, a := range c.Actions {
			switch {
			case a.Add != nil:
				touched[fileKey(st.root, a.Add.Path, a.Add.DeletionVector)] = true
			case a.Remove != nil:
				touched[fileKey(st.root, a.Remove.Path, a.Remove.DeletionVector)] = true
			}
		}
		if err := st.apply(c.Version, c.Actions, false); err != nil {
			return nil, err
		}
	}
	if err := st.confined(); err != nil {
		return nil, err
	}
	// The sorted file list is s's minus what the commits replaced or
	// removed, merged with what they added: no re-sort of every file.
	gone := map[*Add]bool{}
	var added []*Add
	for k := range touched {
		old, cur := s.byKey[k], st.files[k]
		if old == cur {
			continue
		}
		if old != nil {
			gone[old] = true
		}
		if cur != nil {
			added = append(added, cur)
		}
	}
	sort.Slice(added, func(i, j int) bool { return added[i].Path < added[j].Path })
	files := make([]*Add, 0, len(st.files))
	j := 0
	for _, f := range s.files {
		if gone[f] {
			continue
		}
		for j < len(added) && added[j].Path < f.Path {
			files = append(files, added[j])
			j++
		}
		files = append(files, f)
	}
	files = append(files, added[j:]...)
	next := &Snapshot{
		Version:           commits[len(commits)-1].Version,
		Metadata:          *st.metadata,
		Protocol:          *st.protocol,
		CheckpointVersion: s.CheckpointVersion,
		table:             t,
		files:             files,
		byKey:             st.files,
		txns:              st.txns,
		domains:           st.domains,
		ident:             ident,
	}
	if next.Metadata.SchemaString == s.Metadata.SchemaString {
		next.schema = s.schema
	}
	if err := checkReadable(next.Protocol, next.Metadata); err != nil {
		return nil, err
	}
	if _, err := next.Schema(); err != nil {
		return nil, err
	}
	return next, nil
}
