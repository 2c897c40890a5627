package deltalake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// dvReceipt is the metadata of a receipt StageDeletionVectors makes: for
// each file, the DV it had (its uniqueId, "" for none) and the one that
// replaces it, or none when every row of the file is deleted and the file
// leaves the table. File is the DV file written (storage key), if any.
type dvReceipt struct {
	DeletionVectors []dvUpdate `json:"deletionVectors"`
	File            string     `json:"dvFile,omitempty"`
}

type dvUpdate struct {
	Path string                          `json:"path"`
	Base string                          `json:"base"`
	DV   *delta.DeletionVectorDescriptor `json:"deletionVector"`
}

// dvReceiptPrefix tells a DV receipt from a list of add actions.
var dvReceiptPrefix = []byte(`{"deletionVectors":`)

// DeletionVectors implements catalogadapter.DeletionVectorStager.
func (p *Provider) DeletionVectors(ctx context.Context, id catalogadapter.TableIdent) (bool, error) {
	_, snap, err := p.latest(ctx, id)
	if err != nil {
		return false, err
	}
	return snap.CanWriteDeletionVectors(), nil
}

// StageDeletionVectors implements catalogadapter.DeletionVectorStager: one
// DuckDB query finds the positions of the rows to delete (rows the files'
// DVs already delete are left out), each file's DV is united with them,
// and the new DVs are written into one deletion_vector_<uuid>.bin file.
func (p *Provider) StageDeletionVectors(ctx context.Context, id catalogadapter.TableIdent, q catalogadapter.Querier,
	version int64, paths []string, key []string, keysQuery string) (catalogadapter.Receipt, int64, error) {
	t, tpath, err := p.table(id)
	if err != nil {
		return catalogadapter.Receipt{}, 0, err
	}
	fail := func(err error) (catalogadapter.Receipt, int64, error) {
		return catalogadapter.Receipt{}, 0, fmt.Errorf("stage deletion vectors on %s: %w", tpath, err)
	}
	snap := p.snaps.get(tpath)
	if snap == nil || snap.Version != version {
		if snap, err = t.At(ctx, version); err != nil {
			if ve := p.versionUnavailable(ctx, t, tpath, version, err); ve != nil {
				return fail(ve)
			}
			return fail(readError(tpath, err))
		}
	}
	if !snap.CanWriteDeletionVectors() {
		return fail(fmt.Errorf("%w: the table does not take deletion vectors (it needs the deletionVectors feature and %s = true)",
			catalogadapter.ErrUnsupported, delta.EnableDeletionVectorsKey))
	}
	files, err := liveFiles(snap, filepath.ToSlash(tpath), paths)
	if err != nil {
		return fail(err)
	}
	var out dvReceipt
	if len(files) == 0 {
		return p.dvReceiptOf(out, 0)
	}
	if err := delta.PrepareDuckDB(ctx, q); err != nil {
		return fail(err)
	}
	scan, byPath, err := snap.PositionsSQL(ctx, q, files)
	if err != nil {
		return fail(err)
	}
	keys := make([]string, len(key))
	for i, k := range key {
		keys[i] = sqlquote.Ident(k)
	}
	query := fmt.Sprintf("SELECT t.%s, t.%s FROM (%s) AS t SEMI JOIN (%s) AS k USING (%s) ORDER BY 1, 2",
		sqlquote.Ident(delta.PositionFileColumn), delta.PositionRowColumn, scan, keysQuery, strings.Join(keys, ", "))
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return fail(fmt.Errorf("find the rows to delete: %w", err))
	}
	marked := map[*delta.Add][]uint64{}
	var order []*delta.Add
	var n int64
	for rows.Next() {
		var file string
		var row int64
		if err := rows.Scan(&file, &row); err != nil {
			rows.Close()
			return fail(err)
		}
		a, ok := byPath[file]
		if !ok || row < 0 {
			rows.Close()
			return fail(fmt.Errorf("the scan gave row %d of unknown file %s", row, file))
		}
		if _, ok := marked[a]; !ok {
			order = append(order, a)
		}
		marked[a] = append(marked[a], uint64(row))
		n++
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fail(fmt.Errorf("find the rows to delete: %w", err))
	}
	var w *delta.DeletionVectorFile
	for _, a := range order {
		old, err := delta.LoadDeletionVector(ctx, t.Storage(), a.DeletionVector)
		if err != nil {
			return fail(err)
		}
		all := delta.UnionRows(old, marked[a])
		u := dvUpdate{Path: a.Path, Base: a.DeletionVector.UniqueID()}
		physical, ok := a.NumRecords()
		if !ok {
			return fail(fmt.Errorf("%w: file %s has no numRecords statistic, which a deletion vector needs",
				catalogadapter.ErrUnsupported, a.Path))
		}
		if int64(len(all)) < physical {
			if w == nil {
				if w, err = delta.NewDeletionVectorFile(dvPrefix(snap.Metadata.Configuration)); err != nil {
					return fail(err)
				}
			}
			if u.DV, err = w.Add(all); err != nil {
				return fail(fmt.Errorf("deletion vector of %s: %w", a.Path, err))
			}
		}
		out.DeletionVectors = append(out.DeletionVectors, u)
	}
	var size int64
	if w != nil {
		if err := t.WriteDeletionVectorFile(ctx, w); err != nil {
			return fail(err)
		}
		out.File, size = w.Key(), int64(len(w.Bytes()))
	}
	r, _, err := p.dvReceiptOf(out, size)
	return r, n, err
}

func (p *Provider) dvReceiptOf(out dvReceipt, size int64) (catalogadapter.Receipt, int64, error) {
	if out.DeletionVectors == nil {
		out.DeletionVectors = []dvUpdate{}
	}
	meta, err := json.Marshal(out)
	if err != nil {
		return catalogadapter.Receipt{}, 0, err
	}
	return catalogadapter.Receipt{Metadata: meta, Bytes: size}, 0, nil
}

// dvPrefix is the directory new DV files go in: Delta's random prefix when
// delta.randomizeFilePrefixes is on (delta.randomPrefixLength letters,
// default 2), else the table root.
func dvPrefix(conf map[string]string) string {
	if !strings.EqualFold(conf["delta.randomizeFilePrefixes"], "true") {
		return ""
	}
	n, err := strconv.Atoi(conf["delta.randomPrefixLength"])
	if err != nil || n < 1 || n > 32 {
		n = 2
	}
	return delta.RandomDVPrefix(n)
}

// liveFiles resolves paths (as Files spells them) to the snapshot's add
// actions; a file no longer there is a conflict.
func liveFiles(snap *delta.Snapshot, root string, paths []string) ([]*delta.Add, error) {
	live := make(map[string]*delta.Add, len(snap.Files()))
	for _, f := range snap.Files() {
		live[delta.CanonicalPath(root, f.Path)] = f
	}
	out := make([]*delta.Add, 0, len(paths))
	seen := map[*delta.Add]bool{}
	for _, pth := range paths {
		f, ok := live[delta.CanonicalPath(root, pth)]
		if !ok {
			return nil, fmt.Errorf("%w: file %s is not in the table at version %d", catalogadapter.ErrConflict, pth, snap.Version)
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out, nil
}

// splitDVReceipts takes the receipts of StageDeletionVectors out of
// receipts: their updates, and the DV files they wrote.
func splitDVReceipts(receipts []catalogadapter.Receipt) (rest []catalogadapter.Receipt, updates []dvUpdate, files []string, err error) {
	for i, r := range receipts {
		if !bytes.HasPrefix(bytes.TrimSpace(r.Metadata), dvReceiptPrefix) {
			rest = append(rest, r)
			continue
		}
		var d dvReceipt
		if err := json.Unmarshal(r.Metadata, &d); err != nil {
			return nil, nil, nil, fmt.Errorf("%w: receipt %d: bad deletion vector receipt: %w", catalogadapter.ErrInvalid, i, err)
		}
		for _, u := range d.DeletionVectors {
			if u.Path == "" || (u.DV != nil && u.DV.StorageType != "u" && u.DV.StorageType != "i") {
				return nil, nil, nil, fmt.Errorf("%w: receipt %d: bad deletion vector update of %q", catalogadapter.ErrInvalid, i, u.Path)
			}
		}
		updates = append(updates, d.DeletionVectors...)
		if d.File != "" {
			files = append(files, d.File)
		}
	}
	return rest, updates, files, nil
}

// dvActions are the actions that apply updates to snap: for each file, a
// remove of it as it is (with its DV) and, unless all its rows are gone,
// an add of the same file with the new DV. A file that left the table, or
// whose DV another writer changed, since the DV was made is a conflict.
func dvActions(snap *delta.Snapshot, root string, updates []dvUpdate, now int64) ([]delta.Action, error) {
	if len(updates) == 0 {
		return nil, nil
	}
	live := make(map[string]*delta.Add, len(snap.Files()))
	for _, f := range snap.Files() {
		live[delta.CanonicalPath(root, f.Path)] = f
	}
	var out []delta.Action
	seen := map[string]bool{}
	for _, u := range updates {
		k := delta.CanonicalPath(root, u.Path)
		if seen[k] {
			return nil, fmt.Errorf("%w: file %s has two deletion vector updates", catalogadapter.ErrInvalid, u.Path)
		}
		seen[k] = true
		f, ok := live[k]
		if !ok {
			return nil, fmt.Errorf("%w: file %s is no longer in the table at version %d (another writer removed it)",
				catalogadapter.ErrConflict, u.Path, snap.Version)
		}
		if got := f.DeletionVector.UniqueID(); got != u.Base {
			return nil, fmt.Errorf("%w: another writer changed the deletion vector of %s (version %d)",
				catalogadapter.ErrConflict, u.Path, snap.Version)
		}
		if u.DV != nil && !snap.CanWriteDeletionVectors() {
			return nil, fmt.Errorf("%w: the table no longer takes deletion vectors", catalogadapter.ErrConflict)
		}
		out = append(out, delta.Action{Remove: delta.RemoveOf(f, now)})
		if u.DV != nil {
			a, err := delta.WithDeletionVector(f, u.DV)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", catalogadapter.ErrUnsupported, err)
			}
			out = append(out, delta.Action{Add: a})
		}
	}
	return out, nil
}

// discardDVFiles deletes DV files of uncommitted receipts that no live file
// of snap uses.
func discardDVFiles(ctx context.Context, t *delta.Table, snap *delta.Snapshot, files []string) error {
	if len(files) == 0 {
		return nil
	}
	used := map[string]bool{}
	for _, f := range snap.Files() {
		if k, ok, _ := delta.DeletionVectorKey(f.DeletionVector); ok {
			used[k] = true
		}
	}
	var doomed []string
	for _, k := range files {
		if !used[k] && strings.HasPrefix(filepath.Base(k), "deletion_vector_") && !strings.Contains(k, "..") {
			doomed = append(doomed, k)
		}
	}
	return t.DeleteKeys(ctx, doomed)
}

// dvPaths are the files updates change: a winner that removed one of them
// (rewrote it, or gave it another DV) invalidates the updates.
func dvPaths(updates []dvUpdate) []string {
	out := make([]string, len(updates))
	for i, u := range updates {
		out[i] = u.Path
	}
	return out
}
