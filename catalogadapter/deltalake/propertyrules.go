package deltalake

// The table properties SetProperties gives a rule: those that change the
// protocol or the schema, those lakesql manages itself, and those whose
// feature this backend cannot honour yet. A property without a rule is
// stored as it is. The helpers that build a feature (deletion vectors,
// writer table features) replace its refusal here with a rule of their own.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// propertyChange is the table version SetProperties is building: the
// rules read the table as it was and change the protocol and schema to
// commit. conf already holds every set and unset.
type propertyChange struct {
	old    *delta.Snapshot
	proto  delta.Protocol
	schema *delta.StructType
	conf   map[string]string
}

// propertyRule checks one property set to value (unset: removed) and
// makes the changes it asks for.
type propertyRule func(c *propertyChange, key, value string, unset bool) error

// propertyRules are the rules by property key.
var propertyRules = map[string]propertyRule{
	delta.ColumnMappingModeKey:  columnMappingRule,
	delta.ColumnMappingMaxIDKey: managed("column mapping assigns it"),
	"delta.appendOnly":          appendOnlyRule,
	"delta.checkpointInterval":  positiveInt,
	// Features this backend does not honour yet: the table would ask of
	// every writer what we cannot do.
	"delta.enableDeletionVectors":          deletionVectorsRule,
	"delta.enableChangeDataFeed":           notHonoured("changeDataFeed (lakesql writes no cdc files)"),
	"delta.enableRowTracking":              notHonoured("rowTracking"),
	"delta.enableInCommitTimestamps":       notHonoured("inCommitTimestamp"),
	"delta.enableTypeWidening":             notHonoured("typeWidening"),
	"delta.checkpointPolicy":               notHonoured("v2Checkpoint"),
	"delta.enableIcebergCompatV1":          notHonoured("icebergCompatV1"),
	"delta.enableIcebergCompatV2":          notHonoured("icebergCompatV2"),
	"delta.universalFormat.enabledFormats": notHonoured("UniForm"),
	"delta.minReaderVersion":               managed("the protocol follows the table's features"),
	"delta.minWriterVersion":               managed("the protocol follows the table's features"),
}

// propertyPrefixRules are the rules of whole families of keys.
var propertyPrefixRules = map[string]propertyRule{
	"delta.constraints.": managed("ALTER SINK ... ADD CONSTRAINT and DROP CONSTRAINT set them"),
	"delta.feature.":     notHonoured("a table feature named by property"),
}

// ruleFor returns the rule of key, nil when it has none.
func ruleFor(key string) propertyRule {
	if r, ok := propertyRules[key]; ok {
		return r
	}
	for prefix, r := range propertyPrefixRules {
		if strings.HasPrefix(key, prefix) {
			return r
		}
	}
	return nil
}

// notHonoured refuses a property whose feature this backend cannot
// honour, naming it.
func notHonoured(feature string) propertyRule {
	return func(_ *propertyChange, key, value string, unset bool) error {
		if unset || strings.EqualFold(value, "false") {
			return nil // turning a feature off asks nothing of a writer
		}
		return fmt.Errorf("%w: table property %s needs the Delta feature %s, which lakesql does not write yet",
			catalogadapter.ErrUnsupported, key, feature)
	}
}

// managed refuses a property lakesql sets itself.
func managed(why string) propertyRule {
	return func(_ *propertyChange, key, _ string, _ bool) error {
		return fmt.Errorf("%w: table property %s is not set by hand: %s", catalogadapter.ErrInvalid, key, why)
	}
}

func positiveInt(_ *propertyChange, key, value string, unset bool) error {
	if n, err := strconv.ParseInt(value, 10, 64); !unset && (err != nil || n < 1) {
		return fmt.Errorf("%w: table property %s must be a positive integer, got %q", catalogadapter.ErrInvalid, key, value)
	}
	return nil
}

// appendOnlyRule: delta.appendOnly = true needs writer 2, or the
// appendOnly feature listed on a table-features protocol.
func appendOnlyRule(c *propertyChange, key, value string, unset bool) error {
	if unset || strings.EqualFold(value, "false") {
		return nil
	}
	if !strings.EqualFold(value, "true") {
		return fmt.Errorf("%w: table property %s must be true or false, got %q", catalogadapter.ErrInvalid, key, value)
	}
	switch {
	case c.proto.MinWriterVersion < 2:
		c.proto.MinWriterVersion = 2
	case c.proto.MinWriterVersion >= 7 && !slices.Contains(c.proto.WriterFeatures, "appendOnly"):
		c.proto.WriterFeatures = append(slices.Clone(c.proto.WriterFeatures), "appendOnly")
	}
	return nil
}

// columnMappingRule turns column mapping on in name mode for an existing
// table (PROTOCOL.md, "Column Mapping"; Spark does the same): the protocol
// upgraded to support it, and every field given a column id and, as its
// physical name, its current name, which is what the existing data files
// call it, so no file is rewritten. Any other change of mode is refused:
// id mode reads columns by Parquet field id, which existing files lack;
// turning mapping off, or changing modes, would need every file rewritten.
func columnMappingRule(c *propertyChange, key, value string, unset bool) error {
	from := delta.ColumnMappingMode(c.old.Metadata.Configuration)
	to := "none"
	if !unset {
		to = strings.ToLower(value)
	}
	if !delta.ValidColumnMappingMode(to) {
		return fmt.Errorf("%w: table property %s must be none, name or id, got %q", catalogadapter.ErrInvalid, key, value)
	}
	switch {
	case from == to:
		if !unset {
			c.conf[key] = to
		}
		return nil
	case from == "none" && to == "id":
		return fmt.Errorf("%w: column mapping mode id cannot be turned on for an existing table: "+
			"its data files carry no field ids (Spark refuses it too); use 'name', or create the table with id mode",
			catalogadapter.ErrSchemaChange)
	case from != "none":
		return fmt.Errorf("%w: column mapping mode cannot change from %s to %s: every data file would have to be rewritten",
			catalogadapter.ErrSchemaChange, from, to)
	}
	maxID, err := delta.MaxColumnID(c.conf)
	if err != nil {
		return fmt.Errorf("%w: %w", catalogadapter.ErrCorrupt, err)
	}
	mapped, maxID := delta.AssignColumnMapping(delta.StripColumnMapping(c.schema), maxID, true)
	c.schema = mapped
	c.conf[key] = to
	c.conf[delta.ColumnMappingMaxIDKey] = strconv.FormatInt(maxID, 10)
	c.proto = delta.ColumnMappingProtocol(c.proto)
	return nil
}
