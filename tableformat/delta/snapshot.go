package delta

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"
	"time"
)

// Table is a Delta table at one location. It holds no state besides its
// storage: every snapshot is read fresh from the log (Update reuses one the
// caller kept, after checking it against the log).
type Table struct {
	store Storage
	// allowedRoots are where, besides the table's location, the files its
	// log names may be (OpenTable).
	allowedRoots []string
	now          func() time.Time // nil: time.Now
}

// NewTable returns the table stored in store, reading only files inside
// its location (OpenTable allows more roots). It does not touch storage;
// Snapshot tells whether a table is there.
func NewTable(store Storage) *Table { return &Table{store: store} }

// Storage returns the table's storage.
func (t *Table) Storage() Storage { return t.store }

// Snapshot is the state of the table at one version: its metadata, protocol,
// active files and application transactions.
type Snapshot struct {
	Version  int64
	Metadata Metadata
	Protocol Protocol
	// CheckpointVersion is the checkpoint replay started from, or -1.
	CheckpointVersion int64

	// A snapshot is shared (a provider keeps the last one per table), so
	// nothing below changes once it is returned.
	table  *Table
	schema *StructType // parsed by Schema before the snapshot is returned
	files  []*Add      // active files, sorted by path
	// byKey is files keyed as replay reconciles them, so Update and Commit
	// can derive the next version's state without re-keying every file.
	byKey map[string]*Add
	// tombstones are complete only in a snapshot read for a checkpoint
	// (withTombstones); elsewhere they are partial and unused.
	tombstones []*Remove
	txns       map[string]Txn
	domains    map[string]DomainMetadata
	// ident is the SHA-256 of the log entry of Version, or nil when it
	// could not be read. Update compares it with the entry now in storage to
	// tell that the table was not deleted and created again meanwhile.
	ident *[sha256.Size]byte
}

// Files returns the active data files, sorted by path.
func (s *Snapshot) Files() []*Add { return s.files }

// TxnVersion returns the last version committed by the application appID.
func (s *Snapshot) TxnVersion(appID string) (int64, bool) {
	t, ok := s.txns[appID]
	return t.Version, ok
}

// Txns returns every application's latest transaction, sorted by appId.
func (s *Snapshot) Txns() []Txn {
	out := make([]Txn, 0, len(s.txns))
	for _, t := range s.txns {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AppID < out[j].AppID })
	return out
}

// DomainMetadata returns the live domain metadata actions, sorted by domain.
func (s *Snapshot) DomainMetadata() []DomainMetadata {
	out := make([]DomainMetadata, 0, len(s.domains))
	for _, d := range s.domains {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Domain < out[j].Domain })
	return out
}

// Table returns the table the snapshot belongs to.
func (s *Snapshot) Table() *Table { return s.table }

// lastCheckpointInfo is the content of _delta_log/_last_checkpoint.
type lastCheckpointInfo struct {
	Version       int64  `json:"version"`
	Size          int64  `json:"size"`
	Parts         *int   `json:"parts,omitempty"`
	SizeInBytes   *int64 `json:"sizeInBytes,omitempty"`
	NumOfAddFiles *int64 `json:"numOfAddFiles,omitempty"`
}

// Latest returns the snapshot at the newest version.
func (t *Table) Latest(ctx context.Context) (*Snapshot, error) {
	return t.snapshot(ctx, -1, false)
}

// At returns the snapshot at version (time travel).
func (t *Table) At(ctx context.Context, version int64) (*Snapshot, error) {
	if version < 0 {
		return nil, fmt.Errorf("snapshot at version %d: version must not be negative", version)
	}
	return t.snapshot(ctx, version, false)
}

// snapshot replays the log up to want (-1: latest). Tombstones of the
// checkpoint are read only withTombstones: a checkpoint writer needs them,
// a reader does not.
func (t *Table) snapshot(ctx context.Context, want int64, withTombstones bool) (*Snapshot, error) {
	seg, err := t.findSegment(ctx, want)
	if err != nil {
		return nil, err
	}
	st := newLogState(t)
	var last []byte // the log entry of seg.version, for the snapshot's ident
	if len(seg.checkpoint) > 0 {
		actions, err := t.readCheckpoint(ctx, seg.checkpoint, !withTombstones)
		if err != nil {
			return nil, fmt.Errorf("read checkpoint %d: %w", seg.checkpointVersion, err)
		}
		if err := st.apply(seg.checkpointVersion, actions, true); err != nil {
			return nil, fmt.Errorf("read checkpoint %d: %w", seg.checkpointVersion, err)
		}
	}
	if last, err = t.replayCommits(ctx, seg.commits, st); err != nil {
		return nil, err
	}
	if err := st.confined(); err != nil {
		return nil, err
	}
	haveLast := len(seg.commits) > 0
	if !haveLast {
		// Replay started at a checkpoint of the very version, whose entry
		// log cleanup keeps. If it cannot be read, the snapshot has no
		// ident and Update replays in full.
		if data, err := t.store.Get(ctx, commitKey(seg.version)); err == nil {
			last, haveLast = data, true
		}
	}
	if st.metadata == nil {
		return nil, corrupt("no metaData action up to version %d", seg.version)
	}
	if st.protocol == nil {
		return nil, corrupt("no protocol action up to version %d", seg.version)
	}
	snap := st.snapshot(t, seg)
	if haveLast {
		snap.ident = entryIdent(last)
	}
	if err := checkReadable(snap.Protocol, snap.Metadata); err != nil {
		return nil, err
	}
	if _, err := snap.Schema(); err != nil {
		return nil, err
	}
	return snap, nil
}

// findSegment finds the checkpoint and commits to replay. It follows
// _last_checkpoint without listing when it can, then lists from the hinted
// checkpoint on, and lists everything when the hint does not check out.
func (t *Table) findSegment(ctx context.Context, want int64) (segment, error) {
	startAfter := ""
	if lc, ok := t.readLastCheckpoint(ctx); ok && (want < 0 || lc.Version <= want) {
		if seg, ok := t.probeSegment(ctx, lc, want); ok {
			return seg, nil
		}
		// The bare version prefix sorts just before that checkpoint's names.
		startAfter = fmt.Sprintf("%s/%020d", logDir, lc.Version)
	}
	var seg segment
	files, err := t.listLog(ctx, startAfter)
	if err == nil {
		seg, err = planSegment(files, want)
	}
	if startAfter != "" && (err != nil || seg.checkpointVersion < 0) {
		// The hint named no complete checkpoint: the listing is the truth.
		if files, err = t.listLog(ctx, ""); err != nil {
			return segment{}, err
		}
		seg, err = planSegment(files, want)
	}
	return seg, err
}

// probeSegment reads the classic or multi-part checkpoint the hint names,
// then the commits after it one by one until the next is missing: no
// listing, so the cost does not grow with the length of the history. It
// reports false when anything does not check out, and the caller lists.
func (t *Table) probeSegment(ctx context.Context, lc lastCheckpointInfo, want int64) (segment, bool) {
	seg := segment{checkpointVersion: lc.Version}
	keys := []string{checkpointKey(lc.Version)}
	if lc.Parts != nil && *lc.Parts > 1 {
		if *lc.Parts > 100000 {
			return segment{}, false
		}
		keys = keys[:0]
		for p := 1; p <= *lc.Parts; p++ {
			keys = append(keys, checkpointPartKey(lc.Version, p, *lc.Parts))
		}
	}
	for _, k := range keys {
		data, err := t.store.Get(ctx, k)
		if err != nil {
			return segment{}, false
		}
		seg.checkpoint = append(seg.checkpoint, logFile{key: k, version: lc.Version, data: data})
	}
	v := lc.Version + 1
	for ; want < 0 || v <= want; v++ {
		data, err := t.store.Get(ctx, commitKey(v))
		if errors.Is(err, ErrNotFound) {
			break
		}
		if err != nil {
			return segment{}, false
		}
		seg.commits = append(seg.commits, logFile{key: commitKey(v), kind: kindCommit, version: v, data: data})
	}
	seg.version = v - 1
	if want >= 0 && seg.version != want {
		return segment{}, false // let the listing name what is missing
	}
	return seg, true
}

// listLog lists the log files after startAfter ("" for all of them).
func (t *Table) listLog(ctx context.Context, startAfter string) ([]logFile, error) {
	objs, err := t.store.List(ctx, logDir+"/", startAfter)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", logDir, err)
	}
	files := make([]logFile, 0, len(objs))
	for _, o := range objs {
		if f := parseLogFile(o.Key); f.kind != kindOther {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no log entries in %s", ErrNotATable, logDir)
	}
	return files, nil
}

func (t *Table) readLastCheckpoint(ctx context.Context) (lastCheckpointInfo, bool) {
	var lc lastCheckpointInfo
	data, err := t.store.Get(ctx, lastCheckpointKey)
	if err != nil {
		return lc, false
	}
	if err := json.Unmarshal(data, &lc); err != nil || lc.Version < 0 {
		return lc, false // a corrupt hint is ignored: listing is the truth
	}
	return lc, true
}

// segment is what replay reads: one checkpoint (possibly in parts) and the
// commits after it, up to version.
type segment struct {
	version           int64
	checkpointVersion int64
	checkpoint        []logFile
	commits           []logFile
}

// planSegment picks the newest complete checkpoint at or below want and the
// contiguous commits after it. A gap in versions is a corrupt log.
func planSegment(files []logFile, want int64) (segment, error) {
	commits := map[int64]logFile{}
	latest := int64(-1)
	type cpGroup struct {
		classic *logFile
		v2      *logFile
		parts   map[int]map[int]logFile // numParts -> part -> file
	}
	cps := map[int64]*cpGroup{}
	for i := range files {
		f := files[i]
		if f.version > latest {
			latest = f.version
		}
		if f.kind == kindCommit {
			commits[f.version] = f
			continue
		}
		g := cps[f.version]
		if g == nil {
			g = &cpGroup{parts: map[int]map[int]logFile{}}
			cps[f.version] = g
		}
		switch f.kind {
		case kindCheckpointClassic:
			g.classic = &f
		case kindCheckpointV2:
			if g.v2 == nil || f.key < g.v2.key {
				g.v2 = &f
			}
		case kindCheckpointPart:
			if g.parts[f.numParts] == nil {
				g.parts[f.numParts] = map[int]logFile{}
			}
			g.parts[f.numParts][f.part] = f
		}
	}
	if want >= 0 {
		if want > latest {
			return segment{}, fmt.Errorf("snapshot at version %d: the latest version is %d", want, latest)
		}
		latest = want
	}
	seg := segment{version: latest, checkpointVersion: -1}
	var cpVersions []int64
	for v := range cps {
		if v <= latest {
			cpVersions = append(cpVersions, v)
		}
	}
	sort.Slice(cpVersions, func(i, j int) bool { return cpVersions[i] > cpVersions[j] })
	for _, v := range cpVersions {
		g := cps[v]
		var pick []logFile
		switch {
		case g.v2 != nil:
			pick = []logFile{*g.v2}
		case g.classic != nil:
			pick = []logFile{*g.classic}
		default:
			for n, parts := range g.parts {
				if len(parts) == n {
					pick = make([]logFile, n)
					for p, f := range parts {
						pick[p-1] = f
					}
					break
				}
			}
		}
		if pick != nil {
			seg.checkpointVersion, seg.checkpoint = v, pick
			break
		}
	}
	for v := seg.checkpointVersion + 1; v <= latest; v++ {
		c, ok := commits[v]
		if !ok {
			if seg.checkpointVersion < 0 && v == 0 && len(commits) == 0 {
				return segment{}, fmt.Errorf("%w: no commit and no checkpoint in %s", ErrNotATable, logDir)
			}
			if oldest, _ := readableRange(files); want >= 0 && oldest >= 0 && want < oldest {
				return segment{}, &VersionExpiredError{Version: want, Oldest: oldest}
			}
			return segment{}, corrupt("version %d is missing (replaying from %s to %d)",
				v, startName(seg.checkpointVersion), latest)
		}
		seg.commits = append(seg.commits, c)
	}
	return seg, nil
}

func startName(cp int64) string {
	if cp < 0 {
		return "version 0"
	}
	return fmt.Sprintf("checkpoint %d", cp)
}

// readCheckpoint reads every part of a checkpoint, and for a V2 checkpoint
// the sidecar files it names.
func (t *Table) readCheckpoint(ctx context.Context, parts []logFile, skipRemoves bool) ([]Action, error) {
	var all []Action
	for _, p := range parts {
		actions, err := t.readActionsFile(ctx, p, skipRemoves)
		if err != nil {
			return nil, err
		}
		all = append(all, actions...)
	}
	var withSidecars []Action
	for _, a := range all {
		if a.Sidecar == nil {
			withSidecars = append(withSidecars, a)
			continue
		}
		key, err := sidecarKey(a.Sidecar.Path)
		if err != nil {
			return nil, err
		}
		actions, err := t.readActionsFile(ctx, logFile{key: key}, skipRemoves)
		if err != nil {
			return nil, fmt.Errorf("sidecar: %w", err)
		}
		withSidecars = append(withSidecars, actions...)
	}
	return withSidecars, nil
}

func sidecarKey(p string) (string, error) {
	if strings.Contains(p, ":") || strings.HasPrefix(p, "/") {
		return "", unsupported("sidecar with absolute path %q", p)
	}
	rel, err := url.PathUnescape(p)
	if err != nil {
		return "", corrupt("sidecar path %q: %v", p, err)
	}
	return logDir + "/_sidecars/" + rel, nil
}

func (t *Table) readActionsFile(ctx context.Context, f logFile, skipRemoves bool) ([]Action, error) {
	key, data := f.key, f.data
	if data == nil {
		var err error
		if data, err = t.store.Get(ctx, key); err != nil {
			if errors.Is(err, ErrNotFound) {
				return nil, corrupt("%s is missing", key)
			}
			return nil, err
		}
	}
	if strings.HasSuffix(key, ".parquet") {
		actions, err := readCheckpointParquet(data, skipRemoves)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Base(key), err)
		}
		return actions, nil
	}
	actions, err := ParseActions(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path.Base(key), err)
	}
	return actions, nil
}

// Schema parses the table schema of the snapshot's metadata.
func (s *Snapshot) Schema() (*StructType, error) {
	if s.schema == nil {
		schema, err := ParseSchema(s.Metadata.SchemaString)
		if err != nil {
			return nil, fmt.Errorf("table schema at version %d: %w", s.Version, err)
		}
		s.schema = schema
	}
	return s.schema, nil
}

// ReadCommit returns the actions of the log entry of version, or an error
// wrapping ErrNotFound when there is none.
func (t *Table) ReadCommit(ctx context.Context, version int64) ([]Action, error) {
	data, err := t.store.Get(ctx, commitKey(version))
	if err != nil {
		return nil, fmt.Errorf("read commit %d: %w", version, err)
	}
	return parseCommit(version, data)
}
