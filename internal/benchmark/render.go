package benchmark

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// WriteTable writes the results as an aligned Markdown table (readable in
// a terminal, pasteable into the README), then one line per workload with
// what its reference is and its further figures.
func WriteTable(w io.Writer, rs []Result) error {
	head := []string{"workload", "size", "lakesql", "reference", "ratio", "target", "met"}
	rows := [][]string{head}
	for _, r := range rs {
		row := []string{r.Name, r.Size, "", "", "", r.Target.String(), ""}
		switch {
		case r.Err != nil:
			row[2], row[6] = "failed (see below)", "FAILED"
		case r.Unavailable != "":
			row[2], row[6] = "not available yet", "n/a"
		default:
			row[2] = withSpread(r.Lakesql, r.Unit)
			row[3] = withSpread(r.Ref, r.Unit)
			row[4] = formatRatio(r.Ratio)
			row[6] = map[bool]string{true: "yes", false: "NO"}[r.Met()]
		}
		rows = append(rows, row)
	}
	widths := make([]int, len(head))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for i, c := range cells {
			b.WriteString(" " + c + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)) + " |")
		}
		b.WriteString("\n")
	}
	line(rows[0])
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = strings.Repeat("-", widths[i])
	}
	line(sep)
	for _, row := range rows[1:] {
		line(row)
	}
	b.WriteString("\n")
	for _, r := range rs {
		b.WriteString(notes(r))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// withSpread is a median with the range of the runs: "11.2M rows/s
// (10.9M–11.5M)".
func withSpread(s Summary, unit string) string {
	scale := strings.HasSuffix(unit, "/s")
	return fmt.Sprintf("%s (%s–%s)", formatValue(s.Median, unit), formatNumber(s.Min, scale), formatNumber(s.Max, scale))
}

// notes is the text under the table for one result.
func notes(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", r.Name)
	switch {
	case r.Err != nil:
		fmt.Fprintf(&b, "FAILED: %v\n", r.Err)
		return b.String()
	case r.Unavailable != "":
		fmt.Fprintf(&b, "%s\n", r.Unavailable) // "not available: why"
		return b.String()
	}
	fmt.Fprintf(&b, "median of %d runs per side, spread %.0f%% / %.0f%%, paired ratio %s; reference: %s",
		r.Runs, r.Lakesql.SpreadPct, r.Ref.SpreadPct, formatRatio(r.PairedRatio), r.Reference)
	if len(r.LakesqlExtra) > 0 || len(r.RefExtra) > 0 {
		fmt.Fprintf(&b, "; lakesql %s; reference %s", extraText(r.LakesqlExtra), extraText(r.RefExtra))
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "; note: %s", r.Note)
	}
	b.WriteString("\n")
	return b.String()
}

func extraText(m map[string]float64) string {
	if len(m) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %s", k, formatNumber(m[k], false)))
	}
	return strings.Join(parts, ", ")
}

// jsonResult is one line of --json output: the fields the issue names
// (name, lakesql, reference, unit, ratio, target) first, then the rest.
type jsonResult struct {
	Name        string  `json:"name"`
	Lakesql     float64 `json:"lakesql"`
	Reference   float64 `json:"reference"`
	Unit        string  `json:"unit"`
	Ratio       float64 `json:"ratio"`
	Target      string  `json:"target"`
	TargetMet   bool    `json:"target_met"`
	Available   bool    `json:"available"`
	Error       string  `json:"error,omitempty"`
	Unavailable string  `json:"unavailable,omitempty"`
	Size        string  `json:"size"`
	N           int     `json:"n"`
	Runs        int     `json:"runs"`
	// Spreads are (max - min) / median in percent; paired_ratio is the
	// median of back-to-back ratios.
	LakesqlMin         float64            `json:"lakesql_min"`
	LakesqlMax         float64            `json:"lakesql_max"`
	LakesqlSpreadPct   float64            `json:"lakesql_spread_pct"`
	ReferenceMin       float64            `json:"reference_min"`
	ReferenceMax       float64            `json:"reference_max"`
	ReferenceSpreadPct float64            `json:"reference_spread_pct"`
	PairedRatio        float64            `json:"paired_ratio"`
	ReferenceDescribed string             `json:"reference_is"`
	Note               string             `json:"note,omitempty"`
	LakesqlExtra       map[string]float64 `json:"lakesql_extra,omitempty"`
	ReferenceExtra     map[string]float64 `json:"reference_extra,omitempty"`
	ElapsedSeconds     float64            `json:"elapsed_s"`
}

// WriteJSON writes one JSON object per result, one per line. Figures that
// are not numbers (a workload that did not run) are written as 0, which
// JSON can carry, with available false or error set.
func WriteJSON(w io.Writer, rs []Result) error {
	enc := json.NewEncoder(w)
	for _, r := range rs {
		j := jsonResult{
			Name: r.Name, Lakesql: finite(r.Lakesql.Median), Reference: finite(r.Ref.Median), Unit: r.Unit,
			Ratio: finite(r.Ratio), Target: r.Target.ASCII(), TargetMet: r.Met(),
			Available: r.Unavailable == "" && r.Err == nil, Unavailable: r.Unavailable,
			Size: r.Size, N: r.N, Runs: r.Runs,
			LakesqlMin: finite(r.Lakesql.Min), LakesqlMax: finite(r.Lakesql.Max), LakesqlSpreadPct: finite(r.Lakesql.SpreadPct),
			ReferenceMin: finite(r.Ref.Min), ReferenceMax: finite(r.Ref.Max), ReferenceSpreadPct: finite(r.Ref.SpreadPct),
			PairedRatio: finite(r.PairedRatio), ReferenceDescribed: r.Reference, Note: r.Note,
			LakesqlExtra: r.LakesqlExtra, ReferenceExtra: r.RefExtra,
			ElapsedSeconds: math.Round(r.Elapsed.Seconds()*10) / 10,
		}
		if r.Err != nil {
			j.Error = r.Err.Error()
		}
		if err := enc.Encode(j); err != nil {
			return fmt.Errorf("write JSON result %s: %w", r.Name, err)
		}
	}
	return nil
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
