package planner

// The sink registry: the definitions of the sinks, persisted as JSON in the
// data directory (sinks.json), written to a temporary file and renamed over
// the old one so that a crash leaves either the old or the new file.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
)

// registryFile is the name of the registry in the data directory.
const registryFile = "sinks.json"

// registryVersion is the format version of sinks.json.
const registryVersion = 1

// sinkRecord is one persisted sink definition.
type sinkRecord struct {
	// Name is the sink's name as written.
	Name string `json:"name"`
	// Format is the table's format, delta or iceberg (the statement says
	// it too; records written before Iceberg sinks have none: delta).
	Format string `json:"format,omitempty"`
	// Statement is the canonical CREATE SINK text, without IF NOT EXISTS.
	// It holds the catalog.* options' real values, secrets included: they
	// open the catalog again after a restart (so the file is 0600).
	Statement string `json:"statement"`
	// Path is the resolved location of the table: a Delta table's
	// absolute path, an Iceberg table's namespace.table.
	Path string `json:"path"`
	// Columns is the table's schema when the sink was created or
	// attached, or last altered: a sink whose table changed underneath
	// fails on use.
	Columns []storedColumn `json:"columns,omitempty"`
	// Pending is the definition an ALTER SINK in flight leads to (see
	// altersink.go), "" when none is.
	Pending string `json:"pending,omitempty"`
}

// storedColumn is one column of a persisted schema; Type is the Arrow
// type's text, enough to notice a change.
type storedColumn struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
}

func storedColumns(s *arrow.Schema) []storedColumn {
	out := make([]storedColumn, len(s.Fields()))
	for i, f := range s.Fields() {
		out[i] = storedColumn{Name: f.Name, Type: f.Type.String(), Nullable: f.Nullable}
	}
	return out
}

// schemaChange describes how the table's schema differs from the stored
// one, or returns "" when it does not.
func schemaChange(stored []storedColumn, now *arrow.Schema) string {
	cur := storedColumns(now)
	if len(cur) != len(stored) {
		return fmt.Sprintf("it had %d columns, it has %d", len(stored), len(cur))
	}
	for i := range stored {
		if stored[i] != cur[i] {
			return fmt.Sprintf("column %d was %s %s (nullable %v), it is %s %s (nullable %v)", i+1,
				stored[i].Name, stored[i].Type, stored[i].Nullable, cur[i].Name, cur[i].Type, cur[i].Nullable)
		}
	}
	return ""
}

type registryDoc struct {
	Version int          `json:"version"`
	Sinks   []sinkRecord `json:"sinks"`
}

// loadRegistry reads the registry; a missing file is an empty registry.
func loadRegistry(dir string) ([]sinkRecord, error) {
	b, err := os.ReadFile(filepath.Join(dir, registryFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read sink registry: %w", err)
	}
	var doc registryDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("read sink registry %s: %w", filepath.Join(dir, registryFile), err)
	}
	if doc.Version != registryVersion {
		return nil, fmt.Errorf("read sink registry %s: unknown format version %d (this lakesql reads %d)",
			filepath.Join(dir, registryFile), doc.Version, registryVersion)
	}
	return doc.Sinks, nil
}

// saveRegistry replaces the registry atomically. The file is readable by
// its owner only (os.CreateTemp makes it 0600): definitions may hold
// catalog secrets.
func saveRegistry(dir string, sinks []sinkRecord) error {
	if sinks == nil {
		sinks = []sinkRecord{}
	}
	b, err := json.MarshalIndent(registryDoc{Version: registryVersion, Sinks: sinks}, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, registryFile+".tmp-*")
	if err != nil {
		return fmt.Errorf("write sink registry: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, registryFile))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write sink registry: %w", err)
	}
	return nil
}
