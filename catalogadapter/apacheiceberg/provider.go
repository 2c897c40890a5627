// Package apacheiceberg is the Apache Iceberg backend of catalogadapter,
// on tableformat/iceberg (iceberg-go underneath): tables live in an Iceberg
// catalog (an embedded SQLite file by default; REST, Glue, Hive by
// properties) and are named namespace.table. Data files are staged
// invisibly, and each epoch becomes one snapshot whose summary records the
// writer id and epoch; Commit retries lost races itself.
package apacheiceberg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/catalogadapter"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// Compile-time checks: the contract, and the optional interfaces callers
// look for (RowCounter is checked in rowcount.go).
var (
	_ catalogadapter.Provider         = (*Provider)(nil)
	_ catalogadapter.Creator          = (*Provider)(nil)
	_ catalogadapter.Scanner          = (*Provider)(nil)
	_ catalogadapter.RowDeltaStager   = (*Provider)(nil)
	_ catalogadapter.ArrowStager      = (*Provider)(nil)
	_ catalogadapter.CredentialVendor = (*Provider)(nil)
)

// Defaults of Options fields left at zero.
const (
	DefaultMaxRetries  = 20
	DefaultBaseBackoff = 10 * time.Millisecond
	DefaultMaxBackoff  = 2 * time.Second
)

// Options tune a Provider. Zero values select the defaults.
type Options struct {
	// Now is the clock for credential expiry; time.Now when nil.
	Now func() time.Time
	// MaxRetries bounds the commit retries after lost races (default 20);
	// CommitOptions.MaxRetries overrides it per commit.
	MaxRetries int
	// BaseBackoff and MaxBackoff bound the exponential backoff between
	// retries (defaults 10ms and 2s).
	BaseBackoff, MaxBackoff time.Duration
	// FormatVersion of the tables this provider creates (default 2),
	// unless their properties set format-version.
	FormatVersion int
	// TargetFileSize is the data file size staged writes aim at (0: the
	// table's write.target-file-size-bytes, else iceberg-go's 512 MiB).
	TargetFileSize int64
	// IcebergGoWriter makes StageSQL always write through iceberg-go's
	// writer, never DuckDB's COPY (for measurements and comparisons).
	IcebergGoWriter bool
	// AllowedRoots are where, besides a table's location, the data and
	// delete files its manifests name may be (absolute local directories,
	// object storage locations); a scan naming any other file fails with
	// icetable.ErrPathOutsideTable.
	AllowedRoots []string
}

// Provider serves the tables of one Iceberg catalog. It holds no table
// state: any number of providers, in any number of processes, may write a
// table; the catalog's compare-and-swap arbitrates.
type Provider struct {
	cat   *icetable.Catalog
	opts  Options
	creds *catalogadapter.CredentialCache

	// beforeCommit, when set by a test, runs after an attempt has loaded
	// the table and built its change, just before it commits.
	beforeCommit func(attempt int)
	// beforeCompactCommit, when set by a test, runs before each attempt
	// of a compaction's commit, which then reloads the table.
	beforeCompactCommit func(attempt int)
}

// New returns a provider over an open catalog (icetable.OpenCatalog). The
// caller keeps the catalog and closes it after the provider's last use.
func New(cat *icetable.Catalog, opts Options) *Provider {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxRetries <= 0 {
		opts.MaxRetries = DefaultMaxRetries
	}
	if opts.BaseBackoff <= 0 {
		opts.BaseBackoff = DefaultBaseBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	if opts.MaxBackoff < opts.BaseBackoff {
		opts.MaxBackoff = opts.BaseBackoff
	}
	p := &Provider{cat: cat, opts: opts}
	p.creds = catalogadapter.NewLocalCredentialCache(opts.Now)
	return p
}

// ParseIdent reads a table location such as 'db.t' or 'a.b.t': the last
// part is the table, the ones before it its namespace (at least one).
func ParseIdent(s string) (catalogadapter.TableIdent, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) < 2 {
		return catalogadapter.TableIdent{}, fmt.Errorf("%w: Iceberg table %q needs a namespace: namespace.table", catalogadapter.ErrInvalid, s)
	}
	for _, p := range parts {
		if strings.TrimSpace(p) == "" || p != strings.TrimSpace(p) {
			return catalogadapter.TableIdent{}, fmt.Errorf("%w: Iceberg table %q has an empty or padded part", catalogadapter.ErrInvalid, s)
		}
	}
	id := catalogadapter.TableIdent{Namespace: parts[:len(parts)-1], Name: parts[len(parts)-1]}
	return id, id.Validate()
}

// StoredSchema is the Arrow schema a table created from s reports: small
// integers widen to int32, uint32 to int64. A sink creating an Iceberg
// table declares this schema, so that it matches the table it attaches to.
func StoredSchema(s *arrow.Schema) (*arrow.Schema, error) {
	out, err := icetable.StoredArrowSchema(s)
	return out, mapErr(err)
}

// identifier checks id and turns it into iceberg-go's form.
func identifier(id catalogadapter.TableIdent) (table.Identifier, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	if len(id.Namespace) == 0 {
		return nil, fmt.Errorf("%w: Iceberg table %q needs a namespace", catalogadapter.ErrInvalid, id.Name)
	}
	if strings.Contains(id.Name, ".") {
		return nil, fmt.Errorf("%w: Iceberg table name %q contains a dot", catalogadapter.ErrInvalid, id.Name)
	}
	out := append(table.Identifier{}, id.Namespace...)
	return append(out, id.Name), nil
}

// mapErr keeps err and adds the catalogadapter sentinel its
// tableformat/iceberg sentinel stands for.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	for _, m := range []struct{ from, to error }{
		{icetable.ErrNoTable, catalogadapter.ErrNoTable},
		{icetable.ErrTableExists, catalogadapter.ErrTableExists},
		{icetable.ErrConflict, catalogadapter.ErrConflict},
		{icetable.ErrUnsupported, catalogadapter.ErrUnsupported},
		{icetable.ErrInvalid, catalogadapter.ErrInvalid},
		{icetable.ErrTimeout, catalogadapter.ErrTimeout},
		{icetable.ErrSchemaRule, catalogadapter.ErrSchemaChange},
	} {
		if errors.Is(err, m.from) && !errors.Is(err, m.to) {
			return fmt.Errorf("%w: %w", m.to, err)
		}
	}
	return err
}

// load loads the table at id.
func (p *Provider) load(ctx context.Context, id catalogadapter.TableIdent) (*table.Table, table.Identifier, error) {
	ident, err := identifier(id)
	if err != nil {
		return nil, nil, err
	}
	tbl, err := p.cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, nil, mapErr(err)
	}
	return tbl, ident, nil
}

// TableSpec implements catalogadapter.Provider. Version is the current
// snapshot id, -1 for a table without snapshots.
func (p *Provider) TableSpec(ctx context.Context, id catalogadapter.TableIdent) (catalogadapter.TableSpec, error) {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	tbl, _, err := p.load(ctx, id)
	if err != nil {
		return catalogadapter.TableSpec{}, err
	}
	return tableSpec(id, tbl)
}

func tableSpec(id catalogadapter.TableIdent, tbl *table.Table) (catalogadapter.TableSpec, error) {
	schema := tbl.Schema()
	as, err := icetable.ArrowSchema(schema)
	if err != nil {
		return catalogadapter.TableSpec{}, fmt.Errorf("table spec of %s: %w", id, mapErr(err))
	}
	spec := catalogadapter.TableSpec{
		Schema:     as,
		SchemaSpec: catalogadapter.SchemaSpec{Version: int64(schema.ID), Timestamp: time.UnixMilli(tbl.Metadata().LastUpdatedMillis()).UTC()},
		Properties: maps.Clone(map[string]string(tbl.Properties())),
		Version:    -1,
	}
	if spec.Properties == nil {
		spec.Properties = map[string]string{}
	}
	if s := tbl.CurrentSnapshot(); s != nil {
		spec.Version = s.SnapshotID
	}
	for _, f := range schema.Fields() {
		spec.SchemaSpec.Fields = append(spec.SchemaSpec.Fields, catalogadapter.FieldSpec{
			ID: f.ID, Name: f.Name, Type: f.Type.String(), Nullable: !f.Required, Doc: f.Doc,
		})
	}
	fields, err := icetable.SpecFields(schema, tbl.Spec())
	if err != nil {
		return catalogadapter.TableSpec{}, fmt.Errorf("table spec of %s: %w", id, mapErr(err))
	}
	for _, f := range fields {
		tr, err := fromIceTransform(f.Transform)
		if err != nil {
			return catalogadapter.TableSpec{}, fmt.Errorf("table spec of %s: %w", id, err)
		}
		spec.PartitionSpec.Fields = append(spec.PartitionSpec.Fields, catalogadapter.PartitionField{
			SourceID: f.SourceID, Name: f.Column, Transform: tr,
		})
	}
	return spec, nil
}

func fromIceTransform(t ice.Transform) (catalogadapter.Transform, error) {
	switch tt := t.(type) {
	case ice.IdentityTransform:
		return catalogadapter.Transform{Kind: catalogadapter.Identity}, nil
	case ice.BucketTransform:
		return catalogadapter.Transform{Kind: catalogadapter.Bucket, Param: tt.NumBuckets}, nil
	case ice.TruncateTransform:
		return catalogadapter.Transform{Kind: catalogadapter.Truncate, Param: tt.Width}, nil
	case ice.YearTransform:
		return catalogadapter.Transform{Kind: catalogadapter.Year}, nil
	case ice.MonthTransform:
		return catalogadapter.Transform{Kind: catalogadapter.Month}, nil
	case ice.DayTransform:
		return catalogadapter.Transform{Kind: catalogadapter.Day}, nil
	case ice.HourTransform:
		return catalogadapter.Transform{Kind: catalogadapter.Hour}, nil
	}
	return catalogadapter.Transform{}, fmt.Errorf("%w: partition transform %s", catalogadapter.ErrUnsupported, t)
}

func toIceTransform(t catalogadapter.Transform) (ice.Transform, error) {
	switch t.Kind {
	case catalogadapter.Identity, "":
		return ice.IdentityTransform{}, nil
	case catalogadapter.Bucket:
		if t.Param <= 0 {
			return nil, fmt.Errorf("%w: bucket needs a positive count, got %d", catalogadapter.ErrInvalid, t.Param)
		}
		return ice.BucketTransform{NumBuckets: t.Param}, nil
	case catalogadapter.Truncate:
		if t.Param <= 0 {
			return nil, fmt.Errorf("%w: truncate needs a positive width, got %d", catalogadapter.ErrInvalid, t.Param)
		}
		return ice.TruncateTransform{Width: t.Param}, nil
	case catalogadapter.Year:
		return ice.YearTransform{}, nil
	case catalogadapter.Month:
		return ice.MonthTransform{}, nil
	case catalogadapter.Day:
		return ice.DayTransform{}, nil
	case catalogadapter.Hour:
		return ice.HourTransform{}, nil
	}
	return nil, fmt.Errorf("%w: unknown partition transform %q", catalogadapter.ErrInvalid, t.Kind)
}

// CreateTable implements catalogadapter.Creator. TargetFileSize becomes
// write.target-file-size-bytes; CheckpointInterval has no Iceberg meaning
// and is ignored. Delta-flavoured properties are translated the same way
// (delta.targetFileSize, delta.checkpointInterval); any other delta.* key
// is refused.
func (p *Provider) CreateTable(ctx context.Context, id catalogadapter.TableIdent, def catalogadapter.TableDef) error {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	ident, err := identifier(id)
	if err != nil {
		return err
	}
	if def.Schema == nil {
		return fmt.Errorf("create Iceberg table %s: %w: no schema", id, catalogadapter.ErrInvalid)
	}
	schema, err := icetable.SchemaFromArrow(def.Schema)
	if err != nil {
		return fmt.Errorf("create Iceberg table %s: %w", id, mapErr(err))
	}
	var parts []icetable.PartitionField
	for _, f := range def.PartitionSpec.Fields {
		tr, err := toIceTransform(f.Transform)
		if err != nil {
			return fmt.Errorf("create Iceberg table %s: %w", id, err)
		}
		parts = append(parts, icetable.PartitionField{Column: f.Name, Transform: tr})
	}
	props := map[string]string{}
	for k, v := range def.Properties {
		switch {
		case k == "delta.targetFileSize":
			props[table.WriteTargetFileSizeBytesKey] = v
		case k == "delta.checkpointInterval":
		case strings.HasPrefix(k, "delta."):
			return fmt.Errorf("create Iceberg table %s: %w: Delta property %q has no Iceberg meaning", id, catalogadapter.ErrInvalid, k)
		default:
			props[k] = v
		}
	}
	if def.TargetFileSize > 0 {
		props[table.WriteTargetFileSizeBytesKey] = strconv.FormatInt(def.TargetFileSize, 10)
	}
	_, err = p.cat.CreateTable(ctx, ident, icetable.TableDef{
		Schema: schema, Partition: parts, Properties: props, FormatVersion: p.formatVersion(props),
	})
	return mapErr(err)
}

func (p *Provider) formatVersion(props map[string]string) int {
	if _, ok := props[table.PropertyFormatVersion]; ok {
		return 0 // the property decides
	}
	return p.opts.FormatVersion
}

// LastEpoch implements catalogadapter.Provider by walking the main
// branch's snapshot ancestry for the newest snapshot of writerID.
func (p *Provider) LastEpoch(ctx context.Context, id catalogadapter.TableIdent, writerID string) (int64, bool, error) {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	if writerID == "" {
		return 0, false, fmt.Errorf("last epoch of %s: %w: empty writer id", id, catalogadapter.ErrInvalid)
	}
	tbl, _, err := p.load(ctx, id)
	if err != nil {
		return 0, false, err
	}
	rec, ok, err := icetable.LastEpoch(tbl.Metadata(), writerID)
	if err != nil {
		return 0, false, fmt.Errorf("last epoch of %s: %w", id, mapErr(err))
	}
	return rec.Epoch, ok, nil
}

// SecurityContext implements catalogadapter.CredentialVendor. Files are not
// encrypted; the credential is a local token, minted so callers exercise
// the same renewal path as with vended credentials.
func (p *Provider) SecurityContext(ctx context.Context, id catalogadapter.TableIdent) (catalogadapter.SecurityContext, error) {
	if _, err := identifier(id); err != nil {
		return catalogadapter.SecurityContext{}, err
	}
	cred, err := p.creds.Get(ctx, id)
	if err != nil {
		return catalogadapter.SecurityContext{}, fmt.Errorf("credential for %s: %w", id, err)
	}
	return catalogadapter.SecurityContext{
		Encryption: catalogadapter.Encryption{Level: catalogadapter.EncryptionNone},
		Credential: cred,
	}, nil
}
