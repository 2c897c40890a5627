package sinkdef

// Resolving a CREATE SINK against the data directory and the sink engine:
// its location, its WITH options, its Arrow schema and its format's
// provider (Iceberg's in iceberg.go).

import (
	"context"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/internal/bytesize"
	"github.com/lakesql/lakesql/internal/storageloc"
	"github.com/lakesql/lakesql/sinkddl"
	"github.com/lakesql/lakesql/sqlsink"
	"github.com/lakesql/lakesql/tableformat/objectstore"
)

// resolveLocation turns a written location into an absolute, clean path or
// a canonical object storage location, relative ones under tableRoot, and
// checks that it stays within one of the allowed roots.
func resolveLocation(tableRoot string, roots []string, loc string) (string, error) {
	if strings.TrimSpace(loc) == "" {
		return "", fmt.Errorf("%w: the location is empty", ErrLocation)
	}
	if storageloc.IsLocation(loc) {
		return resolveObjectLocation(roots, loc)
	}
	if strings.Contains(loc, "://") || looksLikeScheme(loc) {
		return "", fmt.Errorf("%w: location %q: the schemes are %s, or a local path", ErrLocation, loc,
			strings.Join(storageloc.Schemes, ", "))
	}
	if storageloc.IsLocation(tableRoot) && !filepath.IsAbs(loc) {
		rel := path.Clean(filepath.ToSlash(loc))
		if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", fmt.Errorf("%w: location %q leaves the table root %s", ErrLocation, loc, tableRoot)
		}
		return resolveObjectLocation(roots, tableRoot+"/"+rel)
	}
	if strings.ContainsFunc(loc, unicode.IsControl) {
		return "", fmt.Errorf("%w: location %q holds a control character", ErrLocation, loc)
	}
	p := loc
	if !filepath.IsAbs(p) {
		p = filepath.Join(tableRoot, p)
	}
	return confineLocal(roots, loc, p)
}

// confineLocal cleans the absolute path p (written as loc), resolves the
// symlinks of its longest existing prefix (canonicalPath) and checks that
// it lies inside one of the local roots, themselves canonical: a root
// itself is not a location.
func confineLocal(roots []string, loc, p string) (string, error) {
	p = filepath.Clean(p)
	if err := checkPathLength(p); err != nil {
		return "", fmt.Errorf("%w: location %q: %w", ErrLocation, loc, err)
	}
	c, err := canonicalPath(p)
	if err != nil {
		return "", fmt.Errorf("%w: location %q: %w", ErrLocation, loc, err)
	}
	if err := checkPathLength(c); err != nil {
		return "", fmt.Errorf("%w: location %q resolves to %s: %w", ErrLocation, loc, c, err)
	}
	isRoot := false
	for _, r := range roots {
		if storageloc.IsLocation(r) || !within(r, c) {
			continue
		}
		if r != c {
			return c, nil
		}
		isRoot = true
	}
	if isRoot {
		return "", fmt.Errorf("%w: location %q resolves to %s, an allowed root itself: name a folder in it", ErrLocation, loc, c)
	}
	how := ""
	if c != p {
		how = " through a symlink"
	}
	return "", fmt.Errorf("%w: location %q resolves%s to %s, which is outside the allowed roots (%s)",
		ErrLocation, loc, how, c, strings.Join(roots, ", "))
}

// looksLikeScheme reports whether a relative location starts like a URL
// or a drive ("file:x", "s3:/x", "c:\\x"): taken as a path, it would name
// a folder "file:" under the table root, which is not what was meant.
func looksLikeScheme(loc string) bool {
	if filepath.IsAbs(loc) {
		return false
	}
	first, _, _ := strings.Cut(filepath.ToSlash(loc), "/")
	return strings.Contains(first, ":")
}

// maxNameBytes is the longest file name the file systems lakesql runs on
// take (NAME_MAX); maxPathBytes bounds a local table's folder, leaving
// room under PATH_MAX for the table's own files and partition folders.
const (
	maxNameBytes = 255
	maxPathBytes = 1024
)

// checkPathLength refuses a path the file system would refuse when the
// table is created, so that CREATE SINK says why (1210) instead of
// failing in the table provider.
func checkPathLength(p string) error {
	if len(p) > maxPathBytes {
		return fmt.Errorf("the path is %d bytes long, more than %d", len(p), maxPathBytes)
	}
	for _, part := range strings.Split(p, string(filepath.Separator)) {
		if len(part) > maxNameBytes {
			return fmt.Errorf("the path has a name of %d bytes, more than %d", len(part), maxNameBytes)
		}
	}
	return nil
}

// maxWriterIDBytes bounds writer_id, which names the sink's staging
// journal file (with 24 bytes more) as well as its Delta txn.
const maxWriterIDBytes = 200

// sinkOptions is what WITH (...) sets.
type sinkOptions struct {
	mode               sqlsink.Mode
	delivery           sqlsink.Delivery
	writerID           string
	targetFileSize     int64
	flushRows          int64
	flushBytes         int64
	flushAge           time.Duration
	checkpointInterval int
	memoryLimit        string
	// noAutoCompact: auto_compact = false; compactMinFiles 0: the default.
	noAutoCompact   bool
	compactMinFiles int
	// Iceberg only: the format version of a created table (0: the
	// backend's default, 2), and the catalog properties, catalog.* keys
	// without their prefix.
	formatVersion int
	catalog       map[string]string
	// Delta on object storage: the storage.* options, keys in full.
	storage map[string]string
	// Delta only: column_mapping, the created table's column mapping mode
	// (name or id; "" or none: off).
	columnMapping string
}

// knownOptions lists the WITH keys CREATE SINK accepts, for error messages.
var knownOptions = []string{"catalog.*", "storage.*", "auto_compact", "checkpoint_interval", "column_mapping", "compact_min_files", "delivery", "flush_age", "flush_bytes", "flush_rows",
	"format_version", "memory_limit", "mode", "target_file_size", "writer_id"}

// parseOptions reads WITH (...) for a sink of the format: an option of the
// other format is refused, never ignored.
func parseOptions(format string, opts []sinkddl.Option) (sinkOptions, error) {
	var so sinkOptions
	for _, o := range opts {
		bad := func(msg string, args ...any) error {
			return fmt.Errorf("%w: option %s: %s", ErrOption, o.Key, fmt.Sprintf(msg, args...))
		}
		if k, ok := strings.CutPrefix(o.Key, catalogPrefix); ok {
			if format != sinkddl.FormatIceberg {
				return so, bad("catalog properties are for Iceberg sinks; a Delta table is a path")
			}
			if so.catalog == nil {
				so.catalog = map[string]string{}
			}
			so.catalog[k] = o.Value
			continue
		}
		if strings.HasPrefix(o.Key, storagePrefix) {
			if format == sinkddl.FormatIceberg {
				return so, bad("storage options are for Delta sinks; an Iceberg table's storage is its catalog's (catalog.s3.* properties)")
			}
			if so.storage == nil {
				so.storage = map[string]string{}
			}
			so.storage[o.Key] = o.Value
			if err := storageloc.CheckOption(o.Key, o.Value); err != nil {
				return so, fmt.Errorf("%w: %w", ErrOption, err)
			}
			continue
		}
		switch o.Key {
		case "mode":
			switch strings.ToLower(o.Value) {
			case "append":
				so.mode = sqlsink.ModeAppend
			case "upsert":
				so.mode = sqlsink.ModeUpsert
			default:
				return so, bad("%q is not a mode (append or upsert)", o.Value)
			}
		case "delivery":
			switch strings.ToLower(o.Value) {
			case "exactly-once", "exactly_once":
				so.delivery = sqlsink.ExactlyOnce
			case "at-least-once", "at_least_once":
				so.delivery = sqlsink.AtLeastOnce
			default:
				return so, bad("%q is not a delivery (exactly-once or at-least-once)", o.Value)
			}
		case "writer_id":
			if o.Value == "" {
				return so, bad("the writer id must not be empty")
			}
			if len(o.Value) > maxWriterIDBytes {
				return so, bad("the writer id is %d bytes long, more than %d", len(o.Value), maxWriterIDBytes)
			}
			so.writerID = o.Value
		case "target_file_size", "flush_bytes":
			n, err := bytesize.Parse(o.Value)
			if err != nil {
				return so, bad("%v", err)
			}
			if o.Key == "target_file_size" {
				so.targetFileSize = n
			} else {
				so.flushBytes = n
			}
		case "flush_rows":
			n, err := strconv.ParseInt(o.Value, 10, 64)
			if err != nil || n <= 0 {
				return so, bad("%q is not a positive row count", o.Value)
			}
			so.flushRows = n
		case "flush_age":
			d, err := time.ParseDuration(o.Value)
			if err != nil || d <= 0 {
				return so, bad("%q is not a positive duration such as '5m'", o.Value)
			}
			so.flushAge = d
		case "checkpoint_interval":
			if format != sinkddl.FormatDelta {
				return so, bad("Delta only (an Iceberg table has no checkpoints)")
			}
			n, err := strconv.Atoi(o.Value)
			if err != nil || n <= 0 {
				return so, bad("%q is not a positive number of commits", o.Value)
			}
			so.checkpointInterval = n
		case "format_version":
			if format != sinkddl.FormatIceberg {
				return so, bad("Iceberg only")
			}
			switch o.Value {
			case "1", "2", "3":
				so.formatVersion = int(o.Value[0] - '0')
			default:
				return so, bad("%q is not an Iceberg format version lakesql writes (1, 2 or 3)", o.Value)
			}
		case "auto_compact":
			switch {
			case o.Kind == sinkddl.OptionInteger:
				return so, bad("%s is not TRUE or FALSE", o.Value)
			case strings.EqualFold(o.Value, "true"):
				so.noAutoCompact = false
			case strings.EqualFold(o.Value, "false"):
				so.noAutoCompact = true
			default:
				return so, bad("%q is not TRUE or FALSE", o.Value)
			}
		case "compact_min_files":
			n, err := strconv.Atoi(o.Value)
			if err != nil || n < 2 || n > sqlsink.MaxCompactMinFiles {
				return so, bad("%q is not a number of files from 2 to %d", o.Value, sqlsink.MaxCompactMinFiles)
			}
			so.compactMinFiles = n
		case "column_mapping":
			if format != sinkddl.FormatDelta {
				return so, bad("Delta only (an Iceberg table maps columns by field id natively)")
			}
			switch v := strings.ToLower(o.Value); v {
			case "none", "name", "id":
				so.columnMapping = v
			default:
				return so, bad("%q is not a column mapping mode (none, name or id)", o.Value)
			}
		case "memory_limit":
			if _, err := bytesize.Parse(o.Value); err != nil {
				return so, bad("%v", err)
			}
			so.memoryLimit = o.Value
		default:
			return so, fmt.Errorf("%w: unknown option %s (known: %s)", ErrOption, o.Key, strings.Join(knownOptions, ", "))
		}
	}
	return so, nil
}

// arrowSchema builds the sink's schema from the column definitions.
func arrowSchema(cols []sinkddl.ColumnDef) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: c.Type, Nullable: !c.NotNull}
	}
	return arrow.NewSchema(fields, nil)
}

// sinkConfig turns a definition into the sink engine's configuration: the
// provider of its format and catalog, and its table, at its resolved
// location: a Delta table's absolute path, an Iceberg table's name.
func (b *Backends) sinkConfig(ctx context.Context, d *Definition) (sqlsink.Config, error) {
	cs, path, so := d.cs, d.Path, d.so
	if d.soErr != nil {
		return sqlsink.Config{}, d.soErr
	}
	var err error
	cfg := sqlsink.Config{
		Name:               cs.Name,
		Mode:               so.mode,
		Delivery:           so.delivery,
		Key:                cs.PrimaryKey,
		WriterID:           so.writerID,
		TargetFileSize:     so.targetFileSize,
		FlushRows:          so.flushRows,
		FlushBytes:         so.flushBytes,
		FlushAge:           so.flushAge,
		CheckpointInterval: so.checkpointInterval,
		MemoryLimit:        so.memoryLimit,
		DisableAutoCompact: so.noAutoCompact,
		CompactMinFiles:    so.compactMinFiles,
		TempDir:            filepath.Join(b.opts.DataDir, "tmp"),
		StateDir:           filepath.Join(b.opts.DataDir, "state"),
		Buffers:            b.opts.Buffers,
	}
	if cs.Format == sinkddl.FormatIceberg {
		if cfg.Table, _, err = icebergTable(path); err != nil {
			return sqlsink.Config{}, err
		}
		props, err := b.catalogProperties(so, false)
		if err != nil {
			return sqlsink.Config{}, err
		}
		if cfg.Provider, err = b.icebergProvider(ctx, props); err != nil {
			return sqlsink.Config{}, err
		}
		if len(cs.Columns) > 0 {
			if cfg.Schema, err = icebergSchema(cs.Columns); err != nil {
				return sqlsink.Config{}, err
			}
		}
		if so.formatVersion > 0 {
			cfg.TableProperties = map[string]string{"format-version": strconv.Itoa(so.formatVersion)}
		}
		cfg.PartitionSpec = partitionSpec(cs.PartitionBy)
		return cfg, nil
	}
	cfg.Provider = b.provider
	switch {
	case storageloc.IsLocation(path):
		storage := maps.Clone(b.opts.Storage)
		if storage == nil {
			storage = map[string]string{}
		}
		maps.Copy(storage, so.storage)
		if _, err := objectstore.FromProperties(storage); err != nil {
			return sqlsink.Config{}, fmt.Errorf("%w: %w", ErrOption, err)
		}
		if cfg.Provider, err = b.deltaProvider(storage); err != nil {
			return sqlsink.Config{}, err
		}
	case len(so.storage) > 0:
		return sqlsink.Config{}, fmt.Errorf("%w: storage options are for object storage locations (s3://, gs://, azblob://), not the local path %s",
			ErrOption, path)
	}
	cfg.Table.Name = path
	if so.columnMapping != "" && so.columnMapping != "none" {
		cfg.TableProperties = map[string]string{"delta.columnMapping.mode": so.columnMapping}
	}
	if len(cs.Columns) > 0 {
		cfg.Schema = arrowSchema(cs.Columns)
	}
	for _, p := range cs.PartitionBy {
		if p.Transform != sinkddl.TransformIdentity {
			return sqlsink.Config{}, fmt.Errorf("%w: PARTITION BY %s: Delta sinks partition by plain columns only", ErrNotSupported, p)
		}
		cfg.PartitionColumns = append(cfg.PartitionColumns, p.Column)
	}
	return cfg, nil
}
