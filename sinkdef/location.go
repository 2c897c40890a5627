package sinkdef

// Where a sink may live. Local locations are compared by their canonical
// form: absolute, clean, with the symlinks of their longest existing
// prefix resolved, so that a symlink cannot lead a sink out of the allowed
// roots and two spellings of one folder are one table. Object storage
// locations are canonical once parsed (storageloc.ParseLocation). Then a
// sink's folders (a Delta table, an Iceberg sink's local warehouse and
// SQLite catalog file) must keep clear of the data directory's own areas
// and of the other sinks' folders.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lakesql/lakesql/internal/storageloc"
	"github.com/lakesql/lakesql/internal/subtree"
	"github.com/lakesql/lakesql/sinkddl"
)

// canonicalPath returns the absolute path p with the symlinks of its
// longest existing prefix resolved and the rest appended. An existing
// entry that cannot be resolved (a dangling or looping symlink, a file
// where a folder is needed) is an error: what it leads to is unknown.
func canonicalPath(p string) (string, error) {
	p = filepath.Clean(p)
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%s is not an absolute path", p)
	}
	var rest []string
	cur := p
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if _, lerr := os.Lstat(cur); lerr == nil || !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s cannot be resolved: %w", cur, err)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// within reports whether p is root or inside it, component by component:
// both canonical, both local or both object storage.
func within(root, p string) bool {
	switch remote := storageloc.IsLocation(root); {
	case remote != storageloc.IsLocation(p):
		return false
	case remote:
		return subtree.URL(root, p)
	}
	return subtree.Local(root, p)
}

// overlaps reports whether a and b are one folder or one holds the other.
func overlaps(a, b string) bool { return within(a, b) || within(b, a) }

// areaKind says what a folder or file of a sink is.
type areaKind int

const (
	areaDeltaTable  areaKind = iota // a Delta table's folder
	areaWarehouse                   // an Iceberg sink's warehouse, given in catalog.warehouse
	areaCatalogFile                 // an Iceberg sink's SQLite catalog file
)

func (k areaKind) String() string {
	switch k {
	case areaDeltaTable:
		return "the Delta table"
	case areaWarehouse:
		return "the Iceberg warehouse"
	default:
		return "the Iceberg catalog file"
	}
}

// sinkArea is one canonical place a sink writes to.
type sinkArea struct {
	kind areaKind
	path string
}

// dataDirAreas are the data directory's folders that belong to lakesql:
// the sinks' state and spill files, file functions' files, caches, and
// the default Iceberg catalog with its warehouse.
var dataDirAreas = []string{"state", "tmp", "files", "cache", "iceberg"}

// dataDirCanonical is the data directory's canonical path.
func (b *Backends) dataDirCanonical() string {
	if p, err := canonicalPath(b.opts.DataDir); err == nil {
		return p
	}
	return b.opts.DataDir
}

// checkDataDirArea refuses a sink area that takes the data directory
// itself, a folder that holds it, one of its own files or a place inside
// one of its own folders (an Iceberg sink may use DATA/iceberg: it is the
// default catalog's).
func (b *Backends) checkDataDirArea(a sinkArea) error {
	if storageloc.IsLocation(a.path) {
		return nil
	}
	data := b.dataDirCanonical()
	if within(a.path, data) {
		return fmt.Errorf("%w: %s %s is the data directory or holds it (%s)", ErrLocation, a.kind, a.path, data)
	}
	for _, d := range dataDirAreas {
		if d == "iceberg" && a.kind != areaDeltaTable {
			continue
		}
		if p := filepath.Join(data, d); within(p, a.path) {
			return fmt.Errorf("%w: %s %s is inside %s, which lakesql keeps for %s", ErrLocation, a.kind, a.path, p, dataDirAreaUse(d))
		}
	}
	for _, f := range b.opts.ReservedFiles {
		if p := filepath.Join(data, f); within(p, a.path) {
			return fmt.Errorf("%w: %s %s is lakesql's own file %s", ErrLocation, a.kind, a.path, p)
		}
	}
	return nil
}

func dataDirAreaUse(d string) string {
	switch d {
	case "state":
		return "the sinks' state"
	case "tmp":
		return "the sinks' spill files"
	case "files":
		return "the file functions (INTO OUTFILE, LOAD_FILE)"
	case "cache":
		return "copies of object storage files"
	default:
		return "the default Iceberg catalog and its warehouse"
	}
}

// checkNotInDeltaTable refuses a local area inside a Delta table that no
// sink names, such as one another program writes: a folder named
// _delta_log, or one below a folder that holds a _delta_log.
func checkNotInDeltaTable(a sinkArea) error {
	if storageloc.IsLocation(a.path) {
		if strings.Contains(a.path+"/", "/_delta_log/") {
			return fmt.Errorf("%w: %s %s is inside a _delta_log folder", ErrLocation, a.kind, a.path)
		}
		return nil
	}
	for _, part := range strings.Split(a.path, string(filepath.Separator)) {
		if part == "_delta_log" {
			return fmt.Errorf("%w: %s %s is inside a _delta_log folder", ErrLocation, a.kind, a.path)
		}
	}
	for dir := filepath.Dir(a.path); ; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(filepath.Join(dir, "_delta_log")); err == nil && fi.IsDir() {
			return fmt.Errorf("%w: %s %s is inside the Delta table %s", ErrLocation, a.kind, a.path, dir)
		}
		if filepath.Dir(dir) == dir {
			return nil
		}
	}
}

// CheckAreas refuses the areas of a new sink's definition d that collide
// with the data directory's own or with another sink's (others, by sink
// name). An equal Delta table (or one Iceberg table) is the "already the
// sink" of the caller (the same Table), not here.
func (b *Backends) CheckAreas(d *Definition, others map[string]*Definition) error {
	for _, a := range d.areas {
		if err := b.checkDataDirArea(a); err != nil {
			return err
		}
		if err := checkNotInDeltaTable(a); err != nil {
			return err
		}
		for name, od := range others {
			for _, o := range od.areas {
				if err := collide(a, o); err != nil {
					return fmt.Errorf("%w (the sink %s)", err, name)
				}
			}
		}
	}
	return nil
}

// collide says how a new sink's area a collides with another sink's o.
func collide(a, o sinkArea) error {
	bad := func(how string) error {
		return fmt.Errorf("%w: %s %s %s %s %s", ErrLocation, a.kind, a.path, how, o.kind, o.path)
	}
	switch {
	case a.kind == areaDeltaTable && o.kind == areaDeltaTable:
		if a.path == o.path {
			return nil // the caller says "already the sink"
		}
		if within(o.path, a.path) {
			return bad("is inside")
		}
		if within(a.path, o.path) {
			return bad("holds")
		}
	case a.kind == areaCatalogFile && o.kind == areaCatalogFile:
		// One catalog file may serve many sinks.
	case a.kind == areaWarehouse && o.kind == areaWarehouse:
		// Warehouses hold many Iceberg tables, one per sink.
	case o.kind == areaCatalogFile:
		if within(a.path, o.path) {
			return bad("holds")
		}
	case a.kind == areaCatalogFile:
		if within(o.path, a.path) {
			return bad("is inside")
		}
	default: // a Delta table and a warehouse
		if within(o.path, a.path) {
			return bad("is inside")
		}
		if within(a.path, o.path) {
			return bad("holds")
		}
	}
	return nil
}

// sinkAreas lists the places a definition writes to, canonical; path is
// its resolved location, so its WITH options, read (soErr when they do not
// read). Errors leave an area out: a stored definition that cannot be read
// fails when it is used.
func (b *Backends) sinkAreas(cs *sinkddl.CreateSink, path string, so sinkOptions, soErr error) []sinkArea {
	if cs.Format != sinkddl.FormatIceberg {
		return []sinkArea{{kind: areaDeltaTable, path: canonicalLocation(path)}}
	}
	if soErr != nil {
		return nil
	}
	props, err := b.catalogProperties(so, false)
	if err != nil {
		return nil
	}
	var areas []sinkArea
	if w, ok := so.catalog["warehouse"]; ok {
		if storageloc.IsLocation(w) {
			if l, err := storageloc.ParseLocation(w); err == nil {
				areas = append(areas, sinkArea{kind: areaWarehouse, path: l.String()})
			}
		} else if p, local, err := b.localPath(w, false); err == nil && local {
			areas = append(areas, sinkArea{kind: areaWarehouse, path: p})
		}
	}
	if f, err := sqliteCatalogFile(props); err == nil && f != "" {
		areas = append(areas, sinkArea{kind: areaCatalogFile, path: canonicalLocation(f)})
	}
	return areas
}

// canonicalLocation is a resolved location's canonical form, or the
// location itself when it is on object storage or cannot be resolved.
func canonicalLocation(p string) string {
	if storageloc.IsLocation(p) || !filepath.IsAbs(p) {
		return p
	}
	if c, err := canonicalPath(p); err == nil {
		return c
	}
	return p
}
