package render

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/dbperf/dbperf/internal/report"
)

// ExplainFormats are the formats of `dbperf explain` (the first is the default): text and
// JSON.
func ExplainFormats() []Format[report.Explain] {
	return []Format[report.Explain]{
		{Name: "text", Ext: "txt", Render: func(w io.Writer, e report.Explain, _ Options) error {
			return ExplainText(w, e)
		}},
		{Name: "json", Ext: "json", Render: func(w io.Writer, e report.Explain, _ Options) error {
			return ExplainJSON(w, e)
		}},
	}
}

// ExplainText writes an explanation as text: per step a table of its roles, each role's
// CPU per op ("all") and then its functions by self and by total CPU.
func ExplainText(w io.Writer, e report.Explain) error {
	fmt.Fprintf(w, "CPU µs per operation, base %s (%s) → new %s (%s): the %d functions per role that changed most, by self and by total CPU\n",
		report.Printable(e.Base), runList(e.BaseRuns), report.Printable(e.New), runList(e.NewRuns), e.Top)
	for _, s := range e.Steps {
		fmt.Fprintf(w, "\nstep %s: %d ops in %s, %d in %s\n", report.Printable(s.Step), s.BaseOps, report.Printable(e.Base), s.NewOps, report.Printable(e.New))
		t := newTable(w, 3)
		t.row("role", "kind", "function", "base µs/op", "new µs/op", "Δ µs/op", "Δ %", "share")
		for _, r := range s.Roles {
			all := math.NaN()
			if r.Delta != 0 {
				all = 1
			}
			t.row(r.Role, "all", fmt.Sprintf("(%d → %d samples)", r.BaseSamples, r.NewSamples), usOp(r.Base), usOp(r.New), signedUS(r.Delta), pctCell(pctOf(r.Delta, r.Base)), shareCell(all))
			for _, k := range []struct {
				kind string
				fns  []report.FunctionChange
			}{{"self", r.Self}, {"total", r.Total}} {
				for _, f := range k.fns {
					t.row("", k.kind, f.Function, usOp(f.Base), usOp(f.New), signedUS(f.Delta), pctCell(f.Pct), shareCell(f.Share))
				}
			}
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	if len(e.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range e.Notes {
			fmt.Fprintf(w, "note: %s\n", report.Printable(n))
		}
	}
	fmt.Fprintln(w, "\nself: samples where the function is the leaf frame; total: samples whose stack holds it (once per stack). share: its part of the role's change.")
	return nil
}

func runList(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	if len(ids) == 1 {
		return "run " + parts[0]
	}
	return "runs " + strings.Join(parts, ", ")
}

func pctOf(delta, base float64) float64 {
	if base == 0 {
		return math.NaN()
	}
	return 100 * delta / base
}

// usOp is a CPU µs per op: three significant digits at most, at least two decimals below 1.
func usOp(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 0.01 || a == 0:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

func signedUS(v float64) string {
	s := usOp(v)
	if v >= 0 && !strings.HasPrefix(s, "-") {
		return "+" + s
	}
	return s
}

func pctCell(p float64) string {
	if math.IsNaN(p) {
		return "new"
	}
	return fmt.Sprintf("%+.1f%%", p)
}

func shareCell(s float64) string {
	if math.IsNaN(s) {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*s)
}

type jsonExplain struct {
	Base     string            `json:"base"`
	New      string            `json:"new"`
	BaseRuns []int64           `json:"base_runs"`
	NewRuns  []int64           `json:"new_runs"`
	Top      int               `json:"top"`
	Steps    []jsonExplainStep `json:"steps"`
	Notes    []string          `json:"notes"`
}

type jsonExplainStep struct {
	Step    string            `json:"step"`
	BaseOps int64             `json:"base_ops"`
	NewOps  int64             `json:"new_ops"`
	Roles   []jsonExplainRole `json:"roles"`
}

type jsonExplainRole struct {
	Role         string               `json:"role"`
	BaseUSPerOp  float64              `json:"base_us_per_op"`
	NewUSPerOp   float64              `json:"new_us_per_op"`
	DeltaUSPerOp float64              `json:"delta_us_per_op"`
	BaseSamples  int64                `json:"base_samples"`
	NewSamples   int64                `json:"new_samples"`
	Self         []jsonFunctionChange `json:"self"`
	Total        []jsonFunctionChange `json:"total"`
}

type jsonFunctionChange struct {
	Function     string   `json:"function"`
	BaseUSPerOp  float64  `json:"base_us_per_op"`
	NewUSPerOp   float64  `json:"new_us_per_op"`
	DeltaUSPerOp float64  `json:"delta_us_per_op"`
	DeltaPct     *float64 `json:"delta_pct"` // null: not in the base
	Share        *float64 `json:"share"`     // fraction of the role's change; null when it did not change
}

// ExplainJSON writes an explanation as one JSON object.
func ExplainJSON(w io.Writer, e report.Explain) error {
	finite := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	fns := func(cs []report.FunctionChange) []jsonFunctionChange {
		out := make([]jsonFunctionChange, 0, len(cs))
		for _, c := range cs {
			out = append(out, jsonFunctionChange{Function: c.Function, BaseUSPerOp: c.Base, NewUSPerOp: c.New,
				DeltaUSPerOp: c.Delta, DeltaPct: finite(c.Pct), Share: finite(c.Share)})
		}
		return out
	}
	j := jsonExplain{Base: e.Base, New: e.New, BaseRuns: nonNilSlice(e.BaseRuns), NewRuns: nonNilSlice(e.NewRuns),
		Top: e.Top, Steps: []jsonExplainStep{}, Notes: nonNilSlice(e.Notes)}
	for _, s := range e.Steps {
		js := jsonExplainStep{Step: s.Step, BaseOps: s.BaseOps, NewOps: s.NewOps, Roles: []jsonExplainRole{}}
		for _, r := range s.Roles {
			js.Roles = append(js.Roles, jsonExplainRole{Role: r.Role, BaseUSPerOp: r.Base, NewUSPerOp: r.New, DeltaUSPerOp: r.Delta,
				BaseSamples: r.BaseSamples, NewSamples: r.NewSamples, Self: fns(r.Self), Total: fns(r.Total)})
		}
		j.Steps = append(j.Steps, js)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}
