package planner

import (
	"context"

	"github.com/lakesql/lakesql/sqlsink"
)

// SinkReport is what SHOW SINK STATUS reports of an open sink, for a
// monitoring exporter to read at scrape time.
type SinkReport struct {
	Name    string
	Metrics sqlsink.Metrics // since the sink was opened
	Health  sqlsink.HealthStatus
	// Stats are the table's layout (live and small files); StatsKnown is
	// false when the provider does not tell or reading them failed.
	Stats      sqlsink.TableStats
	StatsKnown bool
}

// OpenSinkReports reports the sinks open now, in name order. A sink not
// yet opened (or whose buffer the pool closed with the sink) is left out:
// a scrape never opens a table.
func (e *Engine) OpenSinkReports(ctx context.Context) []SinkReport {
	var out []SinkReport
	for _, n := range e.sinkNames() {
		h, ok := e.lookup(n)
		if !ok {
			continue
		}
		h.openMu.Lock()
		s := h.sink
		h.openMu.Unlock()
		if s == nil {
			continue
		}
		r := SinkReport{Name: h.rec.Name, Metrics: s.Metrics(), Health: s.Health().Status}
		if st, known, err := s.TableStats(ctx); err == nil && known {
			r.Stats, r.StatsKnown = st, true
		}
		out = append(out, r)
	}
	return out
}
