// Package metrics exports a lakesql server's figures to Prometheus: the
// counters SHOW SINK STATUS reads for each open sink, and the server's
// connection, statement and error counters. Everything is read from the
// server at scrape time (a prometheus.Collector); nothing is counted twice.
package metrics

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lakesql/lakesql/planner"
	"github.com/lakesql/lakesql/planner/wire"
	"github.com/lakesql/lakesql/sqlsink"
)

// healthStates are the values of lakesql_sink_health's state label.
var healthStates = []sqlsink.HealthStatus{sqlsink.Healthy, sqlsink.Degraded, sqlsink.Unhealthy}

// scrapeTimeout bounds the reading of the tables' layouts in one scrape.
const scrapeTimeout = 10 * time.Second

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("lakesql_"+name, help, labels, nil)
}

var (
	sinkCommits     = desc("sink_commits_total", "Table versions the sink made since it was opened.", "sink")
	sinkRows        = desc("sink_rows_total", "Rows the sink committed since it was opened.", "sink")
	sinkBytes       = desc("sink_bytes_total", "Bytes of data files the sink committed since it was opened.", "sink")
	sinkCommitted   = desc("sink_epochs_committed_total", "Epochs committed.", "sink")
	sinkRolledBack  = desc("sink_epochs_rolled_back_total", "Epochs rolled back.", "sink")
	sinkSkipped     = desc("sink_epochs_skipped_total", "Replayed epochs skipped (already in the table).", "sink")
	sinkFlushes     = desc("sink_flushes_total", "Staging runs before a commit.", "sink")
	sinkConflicts   = desc("sink_conflicts_total", "Commits that had to redo their merge.", "sink")
	sinkRetries     = desc("sink_retries_total", "Lost commit races retried.", "sink")
	sinkCommitSecs  = desc("sink_commit_duration_seconds", "Duration of the epoch commits that landed (skipped replays included).", "sink")
	sinkBufRows     = desc("sink_buffered_rows", "Rows of the open epoch not yet staged.", "sink")
	sinkBufBytes    = desc("sink_buffered_bytes", "Arrow size of the rows not yet staged.", "sink")
	sinkLiveFiles   = desc("sink_live_files", "Live data files of the sink's table.", "sink")
	sinkSmallFiles  = desc("sink_small_files", "Live data files smaller than OPTIMIZE's target.", "sink")
	sinkHealth      = desc("sink_health", "1 for the sink's health state, 0 for the others.", "sink", "state")
	connsOpen       = desc("connections", "Client connections open now.")
	connsTotal      = desc("connections_total", "Client connections accepted since the server started.")
	statements      = desc("statements_total", "Statements run, by their first keyword (other for the rest).", "kind")
	statementErrors = desc("errors_total", "Statements that failed, by the MySQL error code the client got.", "code")
	groupCommit     = desc("group_commit_size", "Epochs (transactions) per table version, by sink.", "sink")
)

// Collector reads a server's figures at scrape time.
type Collector struct {
	srv *wire.Server
}

// NewCollector makes a Collector of srv.
func NewCollector(srv *wire.Server) *Collector { return &Collector{srv: srv} }

// Describe sends every metric's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{sinkCommits, sinkRows, sinkBytes, sinkCommitted, sinkRolledBack, sinkSkipped,
		sinkFlushes, sinkConflicts, sinkRetries, sinkCommitSecs, sinkBufRows, sinkBufBytes, sinkLiveFiles,
		sinkSmallFiles, sinkHealth, connsOpen, connsTotal, statements, statementErrors, groupCommit} {
		ch <- d
	}
}

// Collect sends the figures as they are now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	for _, r := range c.srv.Engine().OpenSinkReports(ctx) {
		collectSink(ch, r)
	}
	st := c.srv.Stats()
	ch <- prometheus.MustNewConstMetric(connsOpen, prometheus.GaugeValue, float64(st.ConnectionsOpen))
	ch <- prometheus.MustNewConstMetric(connsTotal, prometheus.CounterValue, float64(st.ConnectionsTotal))
	for kind, n := range st.Statements {
		ch <- prometheus.MustNewConstMetric(statements, prometheus.CounterValue, float64(n), kind)
	}
	for code, n := range st.Errors {
		ch <- prometheus.MustNewConstMetric(statementErrors, prometheus.CounterValue, float64(n), strconv.Itoa(code))
	}
}

func collectSink(ch chan<- prometheus.Metric, r planner.SinkReport) {
	m := r.Metrics
	counter := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), r.Name)
	}
	gauge := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), r.Name)
	}
	counter(sinkCommits, m.Commits)
	counter(sinkRows, m.RowsWritten)
	counter(sinkBytes, m.BytesWritten)
	counter(sinkCommitted, m.EpochsCommitted)
	counter(sinkRolledBack, m.EpochsRolledBack)
	counter(sinkSkipped, m.EpochsSkipped)
	counter(sinkFlushes, m.Flushes)
	counter(sinkConflicts, m.Conflicts)
	counter(sinkRetries, m.Retries)
	gauge(sinkBufRows, m.BufferedRows)
	gauge(sinkBufBytes, m.BufferedBytes)
	if r.StatsKnown {
		gauge(sinkLiveFiles, r.Stats.LiveFiles)
		gauge(sinkSmallFiles, r.Stats.SmallFiles)
	}
	histogram(ch, sinkCommitSecs, m.CommitSeconds, sqlsink.CommitSecondsBuckets, r.Name)
	histogram(ch, groupCommit, m.GroupSizes, sqlsink.GroupSizeBuckets, r.Name)
	for _, s := range healthStates {
		v := 0.0
		if r.Health == s {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(sinkHealth, prometheus.GaugeValue, v, r.Name, string(s))
	}
}

func histogram(ch chan<- prometheus.Metric, d *prometheus.Desc, h sqlsink.Histogram, bounds []float64, sink string) {
	buckets := make(map[float64]uint64, len(h.Cumulative))
	for i, n := range h.Cumulative {
		buckets[bounds[i]] = n
	}
	ch <- prometheus.MustNewConstHistogram(d, h.Count, h.Sum, buckets, sink)
}
