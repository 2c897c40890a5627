package delta

// Row tracking (PROTOCOL.md, "Row Tracking"): while the feature is
// supported and not suspended, every add gets a baseRowId above the
// table's high-water mark and defaultRowCommitVersion = its version; a
// recommitted add and a remove keep those of the live file; the high-water
// mark moves in the delta.rowTracking domain in the same commit. We write
// no materialized row id column, so rows copied into a new file get fresh
// ids: the commit says so in commitInfo.tags (delta.rowTracking.preserved
// = false), and a rewrite that changes no data (OPTIMIZE) is refused on a
// table with row tracking enabled, where readers rely on stable ids.

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	"github.com/google/uuid"
)

// The row tracking domain and table properties.
const (
	RowTrackingDomain              = "delta.rowTracking"
	propEnableRowTracking          = "delta.enableRowTracking"
	propRowTrackingSuspended       = "delta.rowTrackingSuspended"
	propMaterializedRowID          = "delta.rowTracking.materializedRowIdColumnName"
	propMaterializedRowCommitVer   = "delta.rowTracking.materializedRowCommitVersionColumnName"
	rowTrackingPreservedTag        = "delta.rowTracking.preserved"
	rowIDHighWaterMarkKey          = "rowIdHighWaterMark"
	materializedRowIDPrefix        = "_row-id-col-"
	materializedRowCommitVerPrefix = "_row-commit-version-col-"
)

// rowTrackingSupported: the feature is in the protocol and not suspended,
// so writers assign row ids.
func rowTrackingSupported(p Protocol, m *Metadata) bool {
	return p.HasWriterFeature(FeatureRowTracking) && !isTrue(m.Configuration[propRowTrackingSuspended])
}

// RowTrackingEnabled reports whether the table has row tracking enabled
// (supported and delta.enableRowTracking = true): readers rely on stable
// row ids, which a rewrite of its files must keep.
func (s *Snapshot) RowTrackingEnabled() bool {
	return rowTrackingEnabled(s.Protocol, &s.Metadata)
}

func rowTrackingEnabled(p Protocol, m *Metadata) bool {
	return rowTrackingSupported(p, m) && isTrue(m.Configuration[propEnableRowTracking])
}

// withRowTrackingColumns names the materialized row id and row commit
// version columns in conf when row tracking is enabled there and they are
// not named yet (the protocol requires the names before enablement; the
// columns themselves we never write). It reports whether it added any.
func withRowTrackingColumns(conf map[string]string) bool {
	if !isTrue(conf[propEnableRowTracking]) {
		return false
	}
	added := false
	for key, prefix := range map[string]string{propMaterializedRowID: materializedRowIDPrefix,
		propMaterializedRowCommitVer: materializedRowCommitVerPrefix} {
		if conf[key] == "" {
			conf[key] = prefix + uuid.NewString()
			added = true
		}
	}
	return added
}

// RowIDHighWaterMark is the highest row id assigned so far, -1 when none
// was (the delta.rowTracking domain is absent).
func (s *Snapshot) RowIDHighWaterMark() (int64, error) {
	d, ok := s.domains[RowTrackingDomain]
	if !ok || d.Removed {
		return -1, nil
	}
	var conf map[string]json.Number
	if err := json.Unmarshal([]byte(d.Configuration), &conf); err != nil {
		return 0, corrupt("domain %s: configuration %q: %v", RowTrackingDomain, d.Configuration, err)
	}
	n, err := conf[rowIDHighWaterMarkKey].Int64()
	if err != nil {
		return 0, corrupt("domain %s: %s in %q: %v", RowTrackingDomain, rowIDHighWaterMarkKey, d.Configuration, err)
	}
	return n, nil
}

// assignRowIDs returns actions, to be committed on s as version, with row
// ids assigned and the high-water mark appended, and the commitInfo tags
// to write (nil for none). The caller's actions are not changed.
func (s *Snapshot) assignRowIDs(version int64, actions []Action) ([]Action, map[string]string, error) {
	p, md := s.nextState(actions)
	if !rowTrackingSupported(p, md) {
		return actions, nil, nil
	}
	enabled := rowTrackingEnabled(p, md)
	root := s.table.store.URI()
	live := make(map[string]*Add, len(s.files))
	for _, f := range s.files {
		live[CanonicalPath(root, f.Path)] = f
	}
	readded := map[string]bool{}
	for _, a := range actions {
		if a.Add != nil {
			readded[CanonicalPath(root, a.Add.Path)] = true
		}
	}
	hwm, err := s.RowIDHighWaterMark()
	if err != nil {
		return nil, nil, err
	}
	next := hwm
	out := make([]Action, 0, len(actions)+1)
	fresh, rewrite := false, false
	enabling := enabled && !rowTrackingEnabled(s.Protocol, &s.Metadata)
	for _, a := range actions {
		switch {
		case a.MetaData != nil && enabling:
			m := *a.MetaData
			m.Configuration = maps.Clone(m.Configuration)
			if withRowTrackingColumns(m.Configuration) {
				a.MetaData = &m
			}
		case a.Add != nil:
			add := *a.Add
			if f := live[CanonicalPath(root, add.Path)]; f != nil && f.BaseRowID != nil {
				// Recommitted (a new deletion vector, say): its rows keep their ids.
				add.BaseRowID, add.DefaultRowCommitVersion = f.BaseRowID, f.DefaultRowCommitVersion
			} else {
				n, ok := add.NumRecords()
				if !ok {
					return nil, nil, fmt.Errorf("row tracking: file %s carries no numRecords, so its row ids cannot be assigned", add.Path)
				}
				base, v := next+1, version
				add.BaseRowID, add.DefaultRowCommitVersion = &base, &v
				next += n
				fresh = true
			}
			a.Add = &add
		case a.Remove != nil:
			r := *a.Remove
			if f := live[CanonicalPath(root, r.Path)]; f != nil && r.BaseRowID == nil {
				r.BaseRowID, r.DefaultRowCommitVersion = f.BaseRowID, f.DefaultRowCommitVersion
			}
			if !readded[CanonicalPath(root, r.Path)] {
				rewrite = true
				if !r.DataChange && enabled {
					return nil, nil, unsupported("rewriting files without changing data (OPTIMIZE) of a table with row tracking " +
						"enabled (rowTracking, delta.enableRowTracking): we write no materialized row id column, so the stable row ids would change")
				}
			}
			a.Remove = &r
		}
		out = append(out, a)
	}
	if enabling {
		if err := s.checkRowIDsBackfilled(out); err != nil {
			return nil, nil, err
		}
	}
	if next > hwm {
		conf, _ := json.Marshal(map[string]int64{rowIDHighWaterMarkKey: next})
		out = append(out, Action{DomainMetadata: &DomainMetadata{Domain: RowTrackingDomain, Configuration: string(conf)}})
	}
	if !enabled {
		return out, nil, nil
	}
	// A commit that takes files out and writes new ones may have copied or
	// updated rows into them, which got fresh ids.
	return out, map[string]string{rowTrackingPreservedTag: strconv.FormatBool(!(rewrite && fresh))}, nil
}

// checkRowIDsBackfilled refuses a commit that enables row tracking while
// some file left live has no baseRowId: the protocol needs a backfill
// first, which we do not write.
func (s *Snapshot) checkRowIDsBackfilled(out []Action) error {
	root := s.table.store.URI()
	removed := map[string]bool{}
	for _, a := range out {
		if a.Remove != nil {
			removed[CanonicalPath(root, a.Remove.Path)] = true
		}
	}
	for _, f := range s.files {
		if removed[CanonicalPath(root, f.Path)] {
			continue
		}
		if f.BaseRowID == nil || f.DefaultRowCommitVersion == nil {
			return unsupported("enabling row tracking (delta.enableRowTracking) on a table whose file %s has no baseRowId: "+
				"the backfill the protocol asks for first is not implemented", f.Path)
		}
	}
	return nil
}
