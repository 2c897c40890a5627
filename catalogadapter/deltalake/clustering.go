package deltalake

import "github.com/lakesql/lakesql/tableformat/delta"

// autoCompactOperation is the Operation auto-compaction passes to Compact
// (catalogadapter.CompactOptions).
const autoCompactOperation = "AUTO COMPACT"

// clusteredFile tells a file a clustering implementation wrote
// (clusteringProvider set) in a clustered table (the clustering feature):
// compaction, which is no clustering implementation, leaves it alone, so
// the table keeps its clustering. Unclustered files it may rewrite
// (PROTOCOL.md, "Writer Requirements for Clustered Table"). Appends need
// nothing more: their adds carry stats for every column, the clustering
// columns among them, and the delta.clustering domain is carried forward.
func clusteredFile(snap *delta.Snapshot, f *delta.Add) bool {
	return f.ClusteringProvider != nil && snap.Protocol.HasWriterFeature(delta.FeatureClustering)
}
