package delta

import (
	"slices"
	"strings"
)

// The table features lakesql turns on by table property (PROTOCOL.md,
// "Table Features"): each names its feature, whether readers must know it
// too, and the features it requires.
const (
	FeatureInCommitTimestamp = "inCommitTimestamp"
	FeatureRowTracking       = "rowTracking"
	FeatureDomainMetadata    = "domainMetadata"
	FeatureV2Checkpoint      = "v2Checkpoint"
	FeatureClustering        = "clustering"
)

// readerWriterFeatures are the features listed in readerFeatures as well
// as writerFeatures (PROTOCOL.md names each feature's kind).
var readerWriterFeatures = map[string]bool{
	"columnMapping":        true,
	"deletionVectors":      true,
	"timestampNtz":         true,
	"v2Checkpoint":         true,
	"vacuumProtocolCheck":  true,
	"typeWidening":         true,
	"typeWidening-preview": true,
	"variantType":          true,
	"catalogManaged":       true,
}

// featureRequires are the features another feature needs in the same
// protocol: row tracking and clustering keep their state in domain metadata.
var featureRequires = map[string][]string{
	FeatureRowTracking: {FeatureDomainMetadata},
	FeatureClustering:  {FeatureDomainMetadata},
}

// legacyImplied are the features a legacy writer version implies, which a
// protocol moving to writer version 7 must list to keep them.
var legacyImplied = map[int][]string{
	2: {"appendOnly", "invariants"},
	3: {"appendOnly", "invariants", "checkConstraints"},
	4: {"appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns"},
	5: {"appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns", "columnMapping"},
	6: {"appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns", "columnMapping", "identityColumns"},
}

// WithFeatures returns p with the features added (and those they require):
// writer version 7, listing what the old legacy version implied, and, for a
// reader-writer feature, reader version 3 listing it (and columnMapping
// when the old reader version 2 implied it). p itself is not changed.
func WithFeatures(p Protocol, features ...string) Protocol {
	var want []string
	var add func(f string)
	add = func(f string) {
		if slices.Contains(want, f) {
			return
		}
		want = append(want, f)
		for _, r := range featureRequires[f] {
			add(r)
		}
	}
	for _, f := range features {
		add(f)
	}
	out := Protocol{MinReaderVersion: p.MinReaderVersion, MinWriterVersion: p.MinWriterVersion,
		ReaderFeatures: slices.Clone(p.ReaderFeatures), WriterFeatures: slices.Clone(p.WriterFeatures)}
	missing := false
	for _, f := range want {
		if !out.HasWriterFeature(f) {
			missing = true
		}
		if readerWriterFeatures[f] && !slices.Contains(out.ReaderFeatures, f) {
			missing = true
		}
	}
	if !missing {
		return out
	}
	if out.MinWriterVersion < 7 {
		out.WriterFeatures = append(out.WriterFeatures, legacyImplied[out.MinWriterVersion]...)
		out.MinWriterVersion = 7
	}
	needReader := false
	for _, f := range want {
		needReader = needReader || readerWriterFeatures[f]
	}
	if needReader && out.MinReaderVersion < 3 {
		if out.MinReaderVersion == 2 {
			out.ReaderFeatures = append(out.ReaderFeatures, "columnMapping")
		}
		out.MinReaderVersion = 3
		if out.ReaderFeatures == nil {
			out.ReaderFeatures = []string{}
		}
	}
	for _, f := range want {
		if !slices.Contains(out.WriterFeatures, f) {
			out.WriterFeatures = append(out.WriterFeatures, f)
		}
		if readerWriterFeatures[f] && out.MinReaderVersion >= 3 && !slices.Contains(out.ReaderFeatures, f) {
			out.ReaderFeatures = append(out.ReaderFeatures, f)
		}
	}
	return out
}

// HasWriterFeature reports whether the protocol supports feature f: listed
// at writer version 7, or implied by a legacy writer version.
func (p Protocol) HasWriterFeature(f string) bool {
	if p.MinWriterVersion >= 7 {
		return slices.Contains(p.WriterFeatures, f)
	}
	return slices.Contains(legacyImplied[p.MinWriterVersion], f)
}

// PropertyFeatures returns the table features the table properties conf
// turn on (delta.enableInCommitTimestamps, delta.enableRowTracking,
// delta.checkpointPolicy = v2), in a fixed order. The colmap, dv and
// constraint properties are their owners' to map.
func PropertyFeatures(conf map[string]string) []string {
	var out []string
	if isTrue(conf["delta.enableInCommitTimestamps"]) {
		out = append(out, FeatureInCommitTimestamp)
	}
	if isTrue(conf["delta.enableRowTracking"]) {
		out = append(out, FeatureRowTracking)
	}
	if strings.EqualFold(strings.TrimSpace(conf["delta.checkpointPolicy"]), "v2") {
		out = append(out, FeatureV2Checkpoint)
	}
	return out
}

// isTrue reads a boolean table property as Spark does: in any case.
func isTrue(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "true") }
