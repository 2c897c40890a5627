package apacheiceberg

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/catalogadapter"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

var _ catalogadapter.Historian = (*Provider)(nil)

// History implements catalogadapter.Historian: the snapshots of the main
// branch's line, newest first. Operation is the snapshot's Iceberg
// operation in upper case (APPEND, OVERWRITE, DELETE, REPLACE); the
// counts come from the summary's added-records, deleted-records,
// added-data-files and deleted-data-files, -1 when it leaves one out.
func (p *Provider) History(ctx context.Context, id catalogadapter.TableIdent, limit int) ([]catalogadapter.HistoryEntry, error) {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	tbl, _, err := p.load(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", id, err)
	}
	meta := tbl.Metadata()
	head := meta.SnapshotByName(table.MainBranch)
	if head == nil {
		return nil, nil
	}
	var out []catalogadapter.HistoryEntry
	for _, s := range table.AncestorsOf(head.SnapshotID, meta.SnapshotByID) {
		if limit > 0 && len(out) >= limit {
			break
		}
		out = append(out, historyEntry(s))
	}
	return out, nil
}

func historyEntry(s table.Snapshot) catalogadapter.HistoryEntry {
	e := catalogadapter.HistoryEntry{
		Version: s.SnapshotID, Timestamp: time.UnixMilli(s.TimestampMs).UTC(), Epoch: -1,
		RowsAdded: -1, RowsRemoved: -1, FilesAdded: -1, FilesRemoved: -1,
	}
	if s.Summary == nil {
		return e
	}
	e.Operation = strings.ToUpper(string(s.Summary.Operation))
	props := s.Summary.Properties
	count := func(key string) int64 {
		n, err := strconv.ParseInt(props[key], 10, 64)
		if err != nil {
			return -1
		}
		return n
	}
	e.RowsAdded, e.RowsRemoved = count("added-records"), count("deleted-records")
	e.FilesAdded, e.FilesRemoved = count("added-data-files"), count("deleted-data-files")
	if w := props[icetable.SummaryWriterID]; w != "" {
		if n, err := strconv.ParseInt(props[icetable.SummaryEpoch], 10, 64); err == nil {
			e.WriterID, e.Epoch = w, n
		}
	}
	return e
}

// VersionAt implements catalogadapter.Historian from the snapshot log: the
// snapshot that was current at t. Before the oldest snapshot the table
// keeps it fails with a *VersionUnavailableError when older ones have
// expired, with ErrInvalid when that snapshot was the table's first.
func (p *Provider) VersionAt(ctx context.Context, id catalogadapter.TableIdent, t time.Time) (int64, error) {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	tbl, _, err := p.load(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("version of %s at %s: %w", id, t.UTC().Format(time.RFC3339), err)
	}
	meta := tbl.Metadata()
	ms := t.UnixMilli()
	var found int64
	ok, logged := false, false
	for e := range meta.SnapshotLogs() {
		if meta.SnapshotByID(e.SnapshotID) == nil {
			continue
		}
		logged = true
		if e.TimestampMs <= ms {
			found, ok = e.SnapshotID, true
		}
	}
	if !logged { // no log (a table written before it kept one): the line's times
		if head := meta.SnapshotByName(table.MainBranch); head != nil {
			for _, s := range table.AncestorsOf(head.SnapshotID, meta.SnapshotByID) {
				if s.TimestampMs <= ms {
					found, ok = s.SnapshotID, true
					break
				}
			}
		}
	}
	if ok {
		return found, nil
	}
	oldest := oldestKept(meta, meta.Snapshots())
	if oldest == -1 {
		return 0, fmt.Errorf("version of %s at %s: %w: the table has no snapshot", id, t.UTC().Format(time.RFC3339), catalogadapter.ErrInvalid)
	}
	if first := meta.SnapshotByID(oldest); first.ParentSnapshotID == nil {
		return 0, fmt.Errorf("version of %s at %s: %w: the table's first snapshot (%d) was made at %s",
			id, t.UTC().Format(time.RFC3339), catalogadapter.ErrInvalid, oldest, time.UnixMilli(first.TimestampMs).UTC().Format(time.RFC3339))
	}
	return 0, fmt.Errorf("version of %s at %s: %w", id, t.UTC().Format(time.RFC3339),
		&catalogadapter.VersionUnavailableError{Version: -1, Oldest: oldest, Why: "snapshot expired"})
}

// missingVersion explains a snapshot id tbl does not hold: one it held
// once (a snapshot its metadata log still names, or an exactly-once record
// kept from an expired one) is a *VersionUnavailableError naming the
// oldest snapshot kept, any other is ErrInvalid. Old metadata files are
// read newest first, only on this error path; a snapshot expired longer
// ago than the log reaches (write.metadata.previous-versions-max commits)
// is reported as unknown.
func missingVersion(ctx context.Context, tbl *table.Table, version int64) error {
	meta := tbl.Metadata()
	gone := func() error {
		return &catalogadapter.VersionUnavailableError{Version: version, Oldest: oldestKept(meta, meta.Snapshots()), Why: "snapshot expired"}
	}
	kept, err := icetable.KeptEpochs(meta)
	if err != nil {
		return err
	}
	for _, rec := range kept {
		if rec.SnapshotID == version {
			return gone()
		}
	}
	var logged []string
	for e := range meta.PreviousFiles() {
		logged = append(logged, e.MetadataFile)
	}
	if len(logged) > 0 {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return err
		}
		for i := len(logged) - 1; i >= 0; i-- {
			old, err := readMetadata(fsys, logged[i])
			if err != nil {
				break // deleted or unreadable: the log reaches no further
			}
			if old.SnapshotByID(version) != nil {
				return gone()
			}
		}
	}
	return fmt.Errorf("%w: no snapshot %d in table %s", catalogadapter.ErrInvalid, version, strings.Join(tbl.Identifier(), "."))
}

// readMetadata parses one metadata file (gzipped when its name says so).
func readMetadata(fsys iceio.IO, path string) (table.Metadata, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz.metadata.json") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	}
	return table.ParseMetadata(r)
}
