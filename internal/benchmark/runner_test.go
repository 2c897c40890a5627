package benchmark

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// fakeSides records the order of its calls and returns preset figures.
type fakeSides struct {
	calls  []string
	a, b   []float64 // figures per call, warm-up first
	failAt int       // the call (1-based) that fails; 0: none
	closed bool
}

func (f *fakeSides) next(side string, vs []float64) (Sample, error) {
	f.calls = append(f.calls, side)
	if len(f.calls) == f.failAt {
		return Sample{}, errors.New("boom")
	}
	n := 0
	for _, c := range f.calls {
		if c == side {
			n++
		}
	}
	return Sample{Value: vs[n-1], Extra: map[string]float64{"x": vs[n-1] * 2}}, nil
}

func (f *fakeSides) Lakesql(context.Context) (Sample, error)   { return f.next("A", f.a) }
func (f *fakeSides) Reference(context.Context) (Sample, error) { return f.next("B", f.b) }
func (f *fakeSides) Close() error                              { f.closed = true; return nil }

func TestInterleave(t *testing.T) {
	f := &fakeSides{a: []float64{1, 10, 30, 20}, b: []float64{1, 20, 20, 20}}
	var seen []int
	as, bs, err := interleave(context.Background(), "w", f, 3, true, func(run int, a, b Sample) { seen = append(seen, run) })
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.calls, " "); got != "A B A B A B A B" {
		t.Errorf("calls %q, want A B A B A B A B (a warm-up pair and 3 runs)", got)
	}
	if fmt.Sprint(seen) != "[0 1 2 3]" {
		t.Errorf("progress runs %v", seen)
	}
	if len(as) != 3 || len(bs) != 3 || as[0].Value != 10 {
		t.Errorf("timed samples %v %v: the warm-up must not count", as, bs)
	}

	f = &fakeSides{a: []float64{1, 2}, b: []float64{1, 2}}
	if _, _, err := interleave(context.Background(), "w", f, 2, false, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.calls, " "); got != "A B A B" {
		t.Errorf("without warm-up: calls %q", got)
	}

	f = &fakeSides{a: []float64{1, 2, 3}, b: []float64{1, 2, 3}, failAt: 4}
	if _, _, err := interleave(context.Background(), "w", f, 2, true, nil); err == nil || !strings.Contains(err.Error(), "reference: boom") {
		t.Errorf("a failing run: %v", err)
	}
	f = &fakeSides{a: []float64{0}, b: []float64{1}}
	if _, _, err := interleave(context.Background(), "w", f, 1, false, nil); err == nil {
		t.Error("a zero figure was accepted")
	}
}

func TestSummarizeInto(t *testing.T) {
	as := []Sample{{Value: 10}, {Value: 30}, {Value: 20, Extra: map[string]float64{"p50_ms": 4}}}
	bs := []Sample{{Value: 20}, {Value: 20}, {Value: 40}}
	var r Result
	summarizeInto(&r, as, bs)
	if r.Lakesql.Median != 20 || r.Ref.Median != 20 || r.Ratio != 1 {
		t.Errorf("medians %v / %v, ratio %v", r.Lakesql.Median, r.Ref.Median, r.Ratio)
	}
	// Paired ratios 0.5, 1.5, 0.5.
	if r.PairedRatio != 0.5 {
		t.Errorf("paired ratio %v, want 0.5", r.PairedRatio)
	}
	if r.LakesqlExtra["p50_ms"] != 4 || r.RefExtra != nil {
		t.Errorf("extras %v %v", r.LakesqlExtra, r.RefExtra)
	}
}

func TestRunAndReports(t *testing.T) {
	var f *fakeSides
	ws := []Workload{
		{Name: "fast", Unit: "rows/s", Target: AtLeast(0.8), Quick: Size{N: 5, Runs: 3}, Full: Size{N: 50, Runs: 5},
			Describe: func(n int) string { return fmt.Sprintf("%d rows", n) }, Reference: "the fake",
			Setup: func(_ context.Context, env Env, n int) (Sides, error) {
				if _, err := os.Stat(env.Dir); err != nil {
					return nil, err
				}
				f = &fakeSides{a: []float64{1, 9, 10, 11}, b: []float64{1, 10, 10, 10}}
				return f, nil
			}},
		{Name: "later", Unit: "ms", Target: AtMost(2),
			Setup: func(context.Context, Env, int) (Sides, error) {
				return nil, fmt.Errorf("%w: the other engineer is still on it", ErrUnavailable)
			}},
		{Name: "broken", Unit: "MiB", Target: AtMost(1),
			Setup: func(context.Context, Env, int) (Sides, error) { return nil, errors.New("no disk") }},
	}
	rs := Run(context.Background(), ws, Options{Quick: true, Dir: t.TempDir()})
	if len(rs) != 3 {
		t.Fatalf("%d results", len(rs))
	}
	if r := rs[0]; r.Err != nil || r.N != 5 || r.Runs != 3 || r.Size != "5 rows" || r.Ratio != 1 || !r.Met() || !f.closed {
		t.Errorf("fast: %+v (closed %v)", r, f.closed)
	}
	if r := rs[1]; r.Unavailable == "" || r.Err != nil || r.Met() {
		t.Errorf("later: %+v", r)
	}
	if r := rs[2]; r.Err == nil || !strings.Contains(r.Err.Error(), "no disk") {
		t.Errorf("broken: %+v", r)
	}

	var text bytes.Buffer
	if err := WriteTable(&text, rs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| fast ", "10.0 rows/s (9.00–11.0)", "| 1.00 ", "≥ 0.8", "| yes",
		"not available yet", "FAILED", "later: not available: the other engineer", "broken: FAILED: setup: no disk"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, text.String())
		}
	}

	var js bytes.Buffer
	if err := WriteJSON(&js, rs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(js.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d JSON lines:\n%s", len(lines), js.String())
	}
	var first struct {
		Name      string  `json:"name"`
		Lakesql   float64 `json:"lakesql"`
		Reference float64 `json:"reference"`
		Unit      string  `json:"unit"`
		Ratio     float64 `json:"ratio"`
		Target    string  `json:"target"`
		Met       bool    `json:"target_met"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.Name != "fast" || first.Lakesql != 10 || first.Reference != 10 || first.Unit != "rows/s" ||
		first.Ratio != 1 || first.Target != ">= 0.8" || !first.Met {
		t.Errorf("first line %+v", first)
	}
	var later map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &later); err != nil {
		t.Fatal(err)
	}
	if later["available"] != false || later["ratio"] != 0.0 {
		t.Errorf("an unavailable workload: %v", later)
	}
}

func TestSelect(t *testing.T) {
	ws, err := Select(All(), []string{"memory", "upsert"})
	if err != nil || len(ws) != 2 || ws[0].Name != "memory" {
		t.Fatalf("Select: %v %v", ws, err)
	}
	if _, err := Select(All(), []string{"nope"}); err == nil || !strings.Contains(err.Error(), "ingest-arrow") {
		t.Errorf("unknown name: %v", err)
	}
	all, _ := Select(All(), nil)
	if len(all) != 18 {
		t.Errorf("%d workloads, want 18 (the issues' 9, issue 18's small-files, optimize and storage, issue 19's upsert-dv and delete-dv, issue 20's startup and open-300k, group commit's concurrent-commits and small-batches)", len(all))
	}
	for _, w := range all {
		if w.Quick.Runs < 3 || w.Full.Runs < 3 || w.Quick.N <= 0 || w.Full.N < w.Quick.N || w.Setup == nil || w.Describe == nil {
			t.Errorf("%s: sizes %+v / %+v", w.Name, w.Quick, w.Full)
		}
		if math.IsNaN(w.Target.Ratio) || w.Target.Ratio <= 0 {
			t.Errorf("%s: target %v", w.Name, w.Target)
		}
	}
}
