package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	pathpkg "path"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// FileRef is a file a table's metadata names, with its size where the
// metadata records it (-1 for a manifest list, whose size it does not).
type FileRef struct {
	Path string
	Size int64
}

// FileKey is the form in which two spellings of one file compare equal:
// the local path of a file URI (file:/p, file:///p and /p alike), and for
// object storage the URI with s3a and s3n read as s3 and the path cleaned.
func FileKey(uri string) string {
	if p, err := localPath(uri); err == nil {
		return p
	}
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme == "s3a" || scheme == "s3n" {
		scheme = "s3"
	}
	return scheme + "://" + u.Host + pathpkg.Clean("/"+u.Path)
}

// SnapshotFiles maps (by FileKey) every file the snapshots reference: their
// manifest lists, manifests, the data and delete files their manifests
// list as live (added or existing) and their statistics files. Each
// manifest is read once however many snapshots share it.
func SnapshotFiles(ctx context.Context, tbl *table.Table, snaps []table.Snapshot) (map[string]FileRef, error) {
	out := map[string]FileRef{}
	if len(snaps) == 0 {
		return out, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	add := func(path string, size int64) { out[FileKey(path)] = FileRef{Path: path, Size: size} }
	read := map[string]bool{}
	ids := map[int64]bool{}
	for _, s := range snaps {
		ids[s.SnapshotID] = true
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.ManifestList != "" {
			add(s.ManifestList, -1)
		}
		manifests, err := s.Manifests(fsys)
		if err != nil {
			return nil, fmt.Errorf("list manifests of snapshot %d: %w", s.SnapshotID, err)
		}
		for _, m := range manifests {
			if read[m.FilePath()] {
				continue
			}
			read[m.FilePath()] = true
			add(m.FilePath(), m.Length())
			entries, err := m.FetchEntries(fsys, true)
			if err != nil {
				return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
			}
			for _, e := range entries {
				add(e.DataFile().FilePath(), e.DataFile().FileSizeBytes())
			}
		}
	}
	meta := tbl.Metadata()
	for sf := range meta.Statistics() {
		if ids[sf.SnapshotID] && sf.StatisticsPath != "" {
			add(sf.StatisticsPath, sf.FileSizeInBytes)
		}
	}
	for sf := range meta.PartitionStatistics() {
		if ids[sf.SnapshotID] && sf.StatisticsPath != "" {
			add(sf.StatisticsPath, sf.FileSizeInBytes)
		}
	}
	return out, nil
}

// MetadataFiles maps (by FileKey) the metadata files tbl still names: its
// current one and those of its metadata log. Older ones, which the log
// dropped past write.metadata.previous-versions-max, are unreferenced.
func MetadataFiles(tbl *table.Table) map[string]FileRef {
	out := map[string]FileRef{}
	if loc := tbl.MetadataLocation(); loc != "" {
		out[FileKey(loc)] = FileRef{Path: loc, Size: -1}
	}
	for e := range tbl.Metadata().PreviousFiles() {
		out[FileKey(e.MetadataFile)] = FileRef{Path: e.MetadataFile, Size: -1}
	}
	return out
}

// MetadataFilesAfterCommit is MetadataFiles as they will be once one more
// metadata commit lands on tbl: the current file joins the log, which
// keeps the newest write.metadata.previous-versions-max (what a dry run
// of an expiry reports as dropped from the log).
func MetadataFilesAfterCommit(tbl *table.Table) map[string]FileRef {
	var log []string
	for e := range tbl.Metadata().PreviousFiles() {
		log = append(log, e.MetadataFile)
	}
	if loc := tbl.MetadataLocation(); loc != "" {
		log = append(log, loc)
	}
	keep := tbl.Properties().GetInt(table.MetadataPreviousVersionsMaxKey, table.MetadataPreviousVersionsMaxDefault)
	if keep < 1 {
		keep = 1
	}
	if len(log) > keep {
		log = log[len(log)-keep:]
	}
	out := map[string]FileRef{}
	for _, p := range log {
		out[FileKey(p)] = FileRef{Path: p, Size: -1}
	}
	return out
}

// StoredFile is a file found under a table's folders.
type StoredFile struct {
	Path    string // as the table's file IO lists it
	Rel     string // relative to the table's location, with forward slashes
	Size    int64
	ModTime time.Time // zero when the store does not tell
}

// ListTableFiles lists the files under the data and metadata folders of
// tbl's location, on any storage whose file IO can list (the local disk,
// object stores). A folder that does not exist lists nothing. Files that
// write.data.path or write.metadata.path put elsewhere are not listed:
// such a folder may be shared with other tables.
func ListTableFiles(ctx context.Context, tbl *table.Table) ([]StoredFile, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	lister, ok := fsys.(iceio.ListableIO)
	if !ok {
		return nil, fmt.Errorf("%w: the file IO of %s cannot list files", ErrUnsupported, strings.Join(tbl.Identifier(), "."))
	}
	loc := strings.TrimRight(tbl.Location(), "/")
	locKey := FileKey(loc)
	var out []StoredFile
	for _, dir := range []string{"data", "metadata"} {
		err := lister.WalkDir(loc+"/"+dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if d.IsDir() {
				return nil
			}
			f := StoredFile{Path: p, Size: -1}
			if k := FileKey(p); strings.HasPrefix(k, locKey+"/") {
				f.Rel = strings.TrimPrefix(k, locKey+"/")
			}
			if info, err := d.Info(); err == nil {
				f.Size, f.ModTime = info.Size(), info.ModTime()
			}
			out = append(out, f)
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("list %s/%s: %w", loc, dir, err)
		}
	}
	return out, nil
}
