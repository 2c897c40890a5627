package delta

import (
	"net/url"
	"path"
	"path/filepath"
	"strings"
)

// logState is the table state replay builds: actions are applied in log
// order, later ones winning. Files reconcile by canonical path plus
// deletion vector id, as PROTOCOL.md prescribes.
type logState struct {
	root       string // table root, to resolve relative paths
	metadata   *Metadata
	protocol   *Protocol
	files      map[string]*Add
	tombstones map[string]*Remove
	txns       map[string]Txn
	domains    map[string]DomainMetadata

	rules *pathRules
	// outside holds the live files whose path or deletion vector leads
	// outside the table and the allowed roots, by key. A later remove may
	// still take one out (a table can name such a file and remove it);
	// any left when replay ends fail it (confined).
	outside map[string]*OutsidePathError
}

func newLogState(t *Table) *logState {
	return &logState{
		root:       strings.TrimSuffix(t.store.URI(), "/"),
		files:      map[string]*Add{},
		tombstones: map[string]*Remove{},
		txns:       map[string]Txn{},
		domains:    map[string]DomainMetadata{},
		rules:      t.rules(),
		outside:    map[string]*OutsidePathError{},
	}
}

// apply applies the actions of the log entry, or checkpoint, of version.
// It fails on a path that climbs out of the table, and on a remove, other
// than a checkpoint's tombstone, of a file outside the table that no add
// named: such a remove can only be forged.
func (st *logState) apply(version int64, actions []Action, checkpoint bool) error {
	return st.applyKeyed(version, actions, nil, checkpoint)
}

// applyKeyed is apply with the file keys of the actions computed already
// (fileKeys), by the worker that decoded them; nil computes them here.
func (st *logState) applyKeyed(version int64, actions []Action, keys []string, checkpoint bool) error {
	key := func(i int, p string, dv *DeletionVectorDescriptor) string {
		if keys != nil {
			return keys[i]
		}
		return fileKey(st.root, p, dv)
	}
	for i, a := range actions {
		switch {
		case a.Add != nil:
			k := key(i, a.Add.Path, a.Add.DeletionVector)
			if err := st.confineAdd(k, a.Add, version); err != nil {
				return err
			}
			st.files[k] = a.Add
			delete(st.tombstones, k)
		case a.Remove != nil:
			k := key(i, a.Remove.Path, a.Remove.DeletionVector)
			if err := st.confineRemove(k, a.Remove, version, checkpoint); err != nil {
				return err
			}
			delete(st.files, k)
			st.tombstones[k] = a.Remove
		case a.CDC != nil:
			if _, err := st.rules.check("change data file", a.CDC.Path, version); err != nil {
				return err
			}
		case a.MetaData != nil:
			st.metadata = a.MetaData
		case a.Protocol != nil:
			st.protocol = a.Protocol
		case a.Txn != nil:
			st.txns[a.Txn.AppID] = *a.Txn
		case a.DomainMetadata != nil:
			if a.DomainMetadata.Removed {
				delete(st.domains, a.DomainMetadata.Domain)
			} else {
				st.domains[a.DomainMetadata.Domain] = *a.DomainMetadata
			}
		}
	}
	return nil
}

// confineAdd notes whether the add's file, or its 'p' deletion vector,
// lies outside; a path that climbs out fails at once.
func (st *logState) confineAdd(k string, a *Add, version int64) error {
	delete(st.outside, k)
	if !plainRelative(a.Path) { // a plain relative path is inside
		pl, err := st.rules.place("data file", a.Path, version)
		if err != nil {
			return err
		}
		if !st.rules.allowed(pl) {
			st.outside[k] = &OutsidePathError{What: "data file", Path: a.Path, Resolved: pl.String(), Version: version, Root: st.root}
			return nil
		}
	}
	if d := a.DeletionVector; d != nil && d.StorageType == "p" {
		// A 'p' path that is not a local file fails when it is loaded.
		if p, err := deletionVectorLocalPath(d.PathOrInlineDv); err == nil {
			if pl := (place{local: filepath.Clean(p)}); !st.rules.allowed(pl) {
				st.outside[k] = &OutsidePathError{What: "deletion vector", Path: d.PathOrInlineDv, Resolved: pl.local, Version: version, Root: st.root}
			}
		}
	}
	return nil
}

func (st *logState) confineRemove(k string, r *Remove, version int64, checkpoint bool) error {
	if plainRelative(r.Path) { // inside: nothing to check
		delete(st.outside, k)
		return nil
	}
	pl, err := st.rules.place("removed file", r.Path, version)
	if err != nil {
		return err
	}
	if _, ok := st.outside[k]; ok {
		delete(st.outside, k)
		return nil
	}
	// A checkpoint's tombstones remove nothing: its adds are the live set.
	if checkpoint || st.rules.allowed(pl) {
		return nil
	}
	return &OutsidePathError{What: "removed file", Path: r.Path, Resolved: pl.String(), Version: version, Root: st.root}
}

// confined fails when replay left a live file outside the table: the
// first by version, then path.
func (st *logState) confined() error {
	var first *OutsidePathError
	for _, e := range st.outside {
		if first == nil || e.Version < first.Version || (e.Version == first.Version && e.Path < first.Path) {
			first = e
		}
	}
	if first != nil {
		return first
	}
	return nil
}

func (st *logState) snapshot(t *Table, seg segment) *Snapshot {
	s := &Snapshot{
		Version:           seg.version,
		Metadata:          *st.metadata,
		Protocol:          *st.protocol,
		CheckpointVersion: seg.checkpointVersion,
		table:             t,
		byKey:             st.files,
		txns:              st.txns,
		domains:           st.domains,
	}
	s.files = make([]*Add, 0, len(st.files))
	for _, f := range st.files {
		s.files = append(s.files, f)
	}
	s.files = sortByPath(s.files, func(a *Add) string { return a.Path })
	s.tombstones = make([]*Remove, 0, len(st.tombstones))
	for _, r := range st.tombstones {
		s.tombstones = append(s.tombstones, r)
	}
	s.tombstones = sortByPath(s.tombstones, func(r *Remove) string { return r.Path })
	return s
}

// fileKey is the reconciliation key of a file of the table at root (no
// trailing slash): its canonical path plus the deletion vector's unique id.
func fileKey(root, p string, dv *DeletionVectorDescriptor) string {
	if plainRelative(p) {
		return root + "/" + p + "\x00" + dv.UniqueID() // one allocation
	}
	return CanonicalPath(root, p) + "\x00" + dv.UniqueID()
}

// fileKeys are the file keys of the add and remove actions, "" for others.
func fileKeys(root string, actions []Action) []string {
	keys := make([]string, len(actions))
	for i, a := range actions {
		switch {
		case a.Add != nil:
			keys[i] = fileKey(root, a.Add.Path, a.Add.DeletionVector)
		case a.Remove != nil:
			keys[i] = fileKey(root, a.Remove.Path, a.Remove.DeletionVector)
		}
	}
	return keys
}

// plainRelative tells whether p is a relative path that reads as itself:
// no scheme, no escapes, no empty, "." or ".." segment. Most paths of a
// log are; for them CanonicalPath and pathRules.place need not parse.
func plainRelative(p string) bool {
	if p == "" || p[0] == '/' {
		return false
	}
	seg := 0 // start of the current segment
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			if p[i] == ':' || p[i] == '%' {
				return false
			}
			continue
		}
		if s := p[seg:i]; s == "" || s == "." || s == ".." {
			return false
		}
		seg = i + 1
	}
	return true
}

// CanonicalPath makes two spellings of one data file path compare equal, as
// log replay reconciles them: escapes decoded, "file:" URIs reduced to their
// path, relative paths resolved against the table root.
func CanonicalPath(root, p string) string {
	if plainRelative(p) {
		return strings.TrimSuffix(root, "/") + "/" + p
	}
	if u, err := url.Parse(p); err == nil && u.Scheme != "" {
		if u.Scheme == "file" {
			return path.Clean(u.Path)
		}
		return u.Scheme + "://" + u.Host + path.Clean(u.Path)
	}
	if d, err := url.PathUnescape(p); err == nil {
		p = d
	}
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	return strings.TrimSuffix(root, "/") + "/" + path.Clean(p)
}
