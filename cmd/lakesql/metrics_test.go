package main

import (
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestServeMetricsEndpoint starts `lakesql serve --metrics-listen`, scrapes
// /metrics with Prometheus' text parser, runs statements, and checks that
// the sink's and the server's figures move by what the statements did.
func TestServeMetricsEndpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	p := startServe(t, buildLakesql(t), []string{"LAKESQL_ROOT_PASSWORD=pw"},
		"--listen", "127.0.0.1:0", "--data", t.TempDir(), "--metrics-listen", "127.0.0.1:0")
	var url string
	select {
	case line := <-p.out:
		rest, ok := strings.CutPrefix(line, "lakesql: metrics on ")
		if !ok {
			t.Fatalf("want the metrics line after the ready line, got %q", line)
		}
		url = rest
	case <-time.After(10 * time.Second):
		t.Fatal("no metrics line")
	}
	db, err := sql.Open("mysql", fmt.Sprintf("root:pw@tcp(%s)/lakesql", p.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE SINK m INTO DELTA 'lake/m' (id BIGINT NOT NULL, v VARCHAR(10))")
	exec("INSERT INTO m VALUES (1, 'a'), (2, 'b')")
	// An upsert sink's transaction opens its epoch at its first write (an
	// appending one keeps its rows for a group commit), so its ROLLBACK
	// is an epoch rolled back.
	exec("CREATE SINK u INTO DELTA 'lake/u' (id BIGINT NOT NULL, PRIMARY KEY (id)) WITH (mode = 'upsert')")
	exec("INSERT INTO u VALUES (1)")
	before := scrape(t, url)

	exec("INSERT INTO m VALUES (3, 'c'), (4, 'd'), (5, 'e')")
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"INSERT INTO m VALUES (6, 'f')", "INSERT INTO u VALUES (2)"} {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("SELECT * FROM no_such_table"); err == nil {
		t.Fatal("a SELECT of a missing table succeeded")
	}
	after := scrape(t, url)

	sink := map[string]string{"sink": "m"}
	for _, c := range []struct {
		name  string
		delta float64
	}{
		{"lakesql_sink_rows_total", 3},
		{"lakesql_sink_commits_total", 1},
		{"lakesql_sink_epochs_committed_total", 1},
		// m's rolled-back transaction kept its rows and never opened an epoch.
		{"lakesql_sink_epochs_rolled_back_total", 0},
	} {
		if d := value(t, after, c.name, sink) - value(t, before, c.name, sink); d != c.delta {
			t.Errorf("%s moved by %v, want %v", c.name, d, c.delta)
		}
	}
	upsert := map[string]string{"sink": "u"}
	if d := value(t, after, "lakesql_sink_epochs_rolled_back_total", upsert) -
		value(t, before, "lakesql_sink_epochs_rolled_back_total", upsert); d != 1 {
		t.Errorf("lakesql_sink_epochs_rolled_back_total{sink=u} moved by %v, want 1", d)
	}
	for _, h := range []string{"lakesql_sink_commit_duration_seconds", "lakesql_group_commit_size"} {
		if d := histCount(t, after, h, sink) - histCount(t, before, h, sink); d != 1 {
			t.Errorf("%s counted %d more commits, want 1", h, d)
		}
	}
	// One transaction per version here: the group-size sum moved by 1.
	sum := func(f map[string]*dto.MetricFamily) float64 {
		return metric(t, f, "lakesql_group_commit_size", sink).GetHistogram().GetSampleSum()
	}
	if d := sum(after) - sum(before); d != 1 {
		t.Errorf("lakesql_group_commit_size sum moved by %v, want 1", d)
	}
	if v := value(t, after, "lakesql_sink_health", map[string]string{"sink": "m", "state": "healthy"}); v != 1 {
		t.Errorf("lakesql_sink_health{state=healthy} = %v, want 1", v)
	}
	if v := value(t, after, "lakesql_sink_live_files", sink); v < 1 {
		t.Errorf("lakesql_sink_live_files = %v, want at least the two commits' files", v)
	}
	if d := value(t, after, "lakesql_statements_total", map[string]string{"kind": "insert"}) -
		value(t, before, "lakesql_statements_total", map[string]string{"kind": "insert"}); d != 3 {
		t.Errorf("insert statements moved by %v, want 3", d)
	}
	// 1146: ER_NO_SUCH_TABLE.
	if v := value(t, after, "lakesql_errors_total", map[string]string{"code": "1146"}); v < 1 {
		t.Errorf("lakesql_errors_total{code=1146} = %v, want at least 1", v)
	}
	if v := value(t, after, "lakesql_connections", nil); v < 1 {
		t.Errorf("lakesql_connections = %v with a pool open", v)
	}
	if _, ok := after["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}
	if code, _ := p.stop(t); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// metric finds the series of family name whose labels include labels.
func metric(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no metric family %s", name)
	}
next:
	for _, m := range f.GetMetric() {
		for k, v := range labels {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m
	}
	t.Fatalf("no %s series with labels %v", name, labels)
	return nil
}

func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	m := metric(t, fams, name, labels)
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	t.Fatalf("%s is neither a counter nor a gauge", name)
	return 0
}

func histCount(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) uint64 {
	t.Helper()
	h := metric(t, fams, name, labels).GetHistogram()
	if h == nil {
		t.Fatalf("%s is not a histogram", name)
	}
	return h.GetSampleCount()
}
