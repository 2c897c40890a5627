package sqlsink

import (
	"encoding/json"
	"math"
	"testing"
)

// TestFloatStatsWithNaNAndInfinity: lakesql's SQL refuses NaN and the
// infinities (MySQL has neither), but a batch written through this
// package's Arrow API may hold them, and Delta stores them. The statistics
// of each file must then still bound every value in it, in Spark's order
// (-Inf < numbers < +Inf < NaN), so that no reader skips a file holding
// the value it looks for: JSON has no NaN or infinity, so such a bound is
// left out, and a file with a NaN gets no bounds on that column at all.
func TestFloatStatsWithNaNAndInfinity(t *testing.T) {
	e := newEnv(t)
	s := e.open(e.config("floats"))
	epochs := [][]float64{
		{math.Inf(1), 5},
		{math.Inf(-1), 3},
		{math.NaN(), 7},
		{math.Inf(-1), math.Inf(1)},
		{2, 4},
	}
	id := int64(0)
	for i, vals := range epochs {
		var rows []row
		for _, v := range vals {
			id++
			rows = append(rows, row{ID: id, Amount: v, Region: "r"})
		}
		e.epoch(s, int64(i+1), batch(t, rows...))
	}

	log := readLog(t, e.dir)
	if len(log) != len(epochs)+1 {
		t.Fatalf("%d versions, want %d", len(log), len(epochs)+1)
	}
	for i, vals := range epochs {
		adds := log[i+1].adds
		if len(adds) != 1 {
			t.Fatalf("version %d: %d files, want 1", i+1, len(adds))
		}
		var st struct {
			MinValues map[string]any `json:"minValues"`
			MaxValues map[string]any `json:"maxValues"`
		}
		if err := json.Unmarshal([]byte(adds[0].Stats), &st); err != nil {
			t.Fatalf("version %d: stats %q: %v", i+1, adds[0].Stats, err)
		}
		minV, hasMin := st.MinValues["amount"].(float64)
		maxV, hasMax := st.MaxValues["amount"].(float64)
		for _, v := range vals {
			if math.IsNaN(v) && (hasMin || hasMax) {
				t.Errorf("version %d: stats %s bound a column holding NaN", i+1, adds[0].Stats)
			}
			if hasMin && v < minV || hasMax && v > maxV {
				t.Errorf("version %d: stats %s leave out %v", i+1, adds[0].Stats, v)
			}
		}
	}
	// A file of finite values keeps its bounds: the rule above drops only
	// what JSON cannot hold.
	if got := log[5].adds[0].Stats; !json.Valid([]byte(got)) {
		t.Fatalf("stats %q are not JSON", got)
	}
	var last struct {
		MinValues map[string]any `json:"minValues"`
		MaxValues map[string]any `json:"maxValues"`
	}
	if err := json.Unmarshal([]byte(log[5].adds[0].Stats), &last); err != nil {
		t.Fatal(err)
	}
	if last.MinValues["amount"] != float64(2) || last.MaxValues["amount"] != float64(4) {
		t.Errorf("stats %s: want amount bounds 2..4", log[5].adds[0].Stats)
	}

	// And every value reads back.
	got := e.rows()
	if len(got) != int(id) {
		t.Fatalf("%d rows read back, want %d", len(got), id)
	}
	for _, r := range got {
		if r.ID == 5 && !math.IsNaN(r.Amount) {
			t.Errorf("row 5: amount %v, want NaN", r.Amount)
		}
		if r.ID == 1 && !math.IsInf(r.Amount, 1) || r.ID == 3 && !math.IsInf(r.Amount, -1) {
			t.Errorf("row %d: amount %v, want an infinity", r.ID, r.Amount)
		}
	}
}
