package benchmark

// All is every workload, in the order.
func All() []Workload {
	return []Workload{
		IngestArrow(false),
		IngestArrow(true),
		IngestWire(),
		CommitLatency(),
		ConcurrentCommits(),
		SmallBatches(),
		OpenLongHistory(),
		Open300k(),
		Upsert(),
		UpsertDV(),
		DeleteDV(),
		SelectAgg(),
		IngestIceberg(),
		Memory(),
		SmallFiles(),
		Optimize(),
		Storage(),
		Startup(),
	}
}
