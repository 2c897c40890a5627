package delta

import (
	"net/url"
	"path"
	"sort"
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
}

func newLogState(root string) *logState {
	return &logState{
		root:       strings.TrimSuffix(root, "/"),
		files:      map[string]*Add{},
		tombstones: map[string]*Remove{},
		txns:       map[string]Txn{},
		domains:    map[string]DomainMetadata{},
	}
}

func (st *logState) apply(actions []Action) {
	for _, a := range actions {
		switch {
		case a.Add != nil:
			k := st.fileKey(a.Add.Path, a.Add.DeletionVector)
			st.files[k] = a.Add
			delete(st.tombstones, k)
		case a.Remove != nil:
			k := st.fileKey(a.Remove.Path, a.Remove.DeletionVector)
			delete(st.files, k)
			st.tombstones[k] = a.Remove
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
	sort.Slice(s.files, func(i, j int) bool { return s.files[i].Path < s.files[j].Path })
	s.tombstones = make([]*Remove, 0, len(st.tombstones))
	for _, r := range st.tombstones {
		s.tombstones = append(s.tombstones, r)
	}
	sort.Slice(s.tombstones, func(i, j int) bool { return s.tombstones[i].Path < s.tombstones[j].Path })
	return s
}

// fileKey is the reconciliation key of a file: its canonical path plus the
// deletion vector's unique id.
func (st *logState) fileKey(p string, dv *DeletionVectorDescriptor) string {
	return CanonicalPath(st.root, p) + "\x00" + dv.UniqueID()
}

// CanonicalPath makes two spellings of one data file path compare equal, as
// log replay reconciles them: escapes decoded, "file:" URIs reduced to their
// path, relative paths resolved against the table root.
func CanonicalPath(root, p string) string {
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
