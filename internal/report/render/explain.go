package render

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/stats"
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
	fmt.Fprintf(w, "What changed, base %s (%s) → new %s (%s), steps by their change: CPU µs per operation per role (the %d functions that changed most, by self and by total CPU), statements, waits\n",
		report.Printable(e.Base), runList(e.BaseRuns), report.Printable(e.New), runList(e.NewRuns), e.Top)
	fmt.Fprintln(w, "\nSummary")
	if len(e.Summary) == 0 {
		fmt.Fprintln(w, "  no step's throughput or any role's CPU per op changed beyond its interval")
	}
	for _, s := range e.Summary {
		fmt.Fprintf(w, "  %s\n", report.Printable(s.Text))
	}
	for _, s := range e.Steps {
		fmt.Fprintf(w, "\nstep %s: %s → %s ops/s (%s)\n", report.Printable(s.Step), rateCell(s.BaseRate), rateCell(s.NewRate), changeCell(s.Change))
		if err := explainCPUText(w, e, s); err != nil {
			return err
		}
		if err := explainStatementsText(w, s); err != nil {
			return err
		}
		if err := explainWaitsText(w, s); err != nil {
			return err
		}
	}
	if len(e.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range e.Notes {
			fmt.Fprintf(w, "note: %s\n", report.Printable(n))
		}
	}
	fmt.Fprintln(w, "\nΔ [95%] over blocks or runs: the change of µs/op across the configs' blocks of paired trials (interleaved, duet sweeps) or runs, its Hodges–Lehmann estimate and 95% interval; change: more or less only when that interval excludes 0, the change is at least 2% of the role's CPU per op and beyond the noise of sampling (a statement's: when its interval at 95% for all the step's statements together, Bonferroni, excludes 0 and the change is at least 2% of all their µs/op); ? when it cannot tell; explained: the part of a changed role's CPU per op its changed functions' self CPU accounts for.")
	fmt.Fprintf(w, "noise: beyond when the change exceeds the noise of sampling (an exact Poisson rate test of the samples, p < %g over the role's functions compared, Bonferroni), within otherwise: a change within it is no finding; the runs' own noise is larger still, so compare configs of several runs.\n", report.NoiseAlpha)
	fmt.Fprintln(w, "self: samples where the function is the leaf frame; total: samples whose stack holds it (once per stack). share: its part of the role's change (of all statements' change for a statement); – when its change is larger than the role's, which other functions' changes then offset. symbols: where the configs ran different builds, a function with samples in one only, or ten times the CPU in one, may be inlined or renamed in the other rather than changed: its % is not shown. Statements' µs/op: planning plus execution time per operation of the step; blocks are shared buffers per call. Waits: each role's share of samples per wait class, Δ in percentage points.")
	return nil
}

// explainCPUText is a step's CPU table: each role's CPU per op ("all") and then its
// functions by self and by total CPU.
func explainCPUText(w io.Writer, e report.Explain, s report.ExplainStep) error {
	if len(s.Roles) == 0 {
		return nil
	}
	fmt.Fprintf(w, "CPU: %d ops in %s, %d in %s\n", s.BaseOps, report.Printable(e.Base), s.NewOps, report.Printable(e.New))
	{
		// A last column says where the builds' symbols differ, when any role's do; its cells
		// are padded to one width so that they read left-aligned.
		builds, width := false, utf8.RuneCountInString("symbols")
		for _, r := range s.Roles {
			if r.Builds != [2]string{} {
				builds = true
				width = max(width, utf8.RuneCountInString(report.Printable(buildsCell(r.Builds))))
				for _, f := range slices.Concat(r.Self, r.Total) {
					width = max(width, utf8.RuneCountInString(report.Printable(f.Build)))
				}
			}
		}
		left := func(s string) string {
			s = report.Printable(s)
			return s + strings.Repeat(" ", width-utf8.RuneCountInString(s))
		}
		t := newTable(w, 3)
		head := []string{"role", "kind", "function", "base µs/op", "new µs/op", "Δ µs/op", "Δ %", "share", "noise", "Δ [95%] over " + unitsName(s), "change"}
		if builds {
			head = append(head, left("symbols"))
		}
		t.row(head...)
		for _, r := range s.Roles {
			all := math.NaN()
			if r.Delta != 0 {
				all = 1
			}
			row := []string{r.Role, "all", fmt.Sprintf("(%d → %d samples)", r.BaseSamples, r.NewSamples), usOp(r.Base), usOp(r.New), signedUS(r.Delta), pctCell(pctOf(r.Delta, r.Base)), shareCell(all), noiseCell(r.Beyond),
				shiftCell(r.Shift), changeMark(r.Shift, r.Changed)}
			if r.Builds != [2]string{} {
				row = append(row, left(buildsCell(r.Builds)))
			}
			t.row(row...)
			for _, k := range []struct {
				kind string
				fns  []report.FunctionChange
			}{{"self", r.Self}, {"total", r.Total}} {
				for _, f := range k.fns {
					pct := pctCell(f.Pct)
					if f.Build != "" {
						pct = "–"
					}
					row := []string{"", k.kind, f.Function, usOp(f.Base), usOp(f.New), signedUS(f.Delta), pct, shareCell(f.Share), noiseCell(f.Beyond),
						shiftCell(f.Shift), changeMark(f.Shift, f.Changed)}
					if f.Build != "" {
						row = append(row, left(f.Build))
					}
					t.row(row...)
				}
			}
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	for _, r := range s.Roles {
		if l := explainedLine(r); l != "" {
			fmt.Fprintf(w, "%s\n", report.Printable(l))
		}
	}
	return nil
}

// unitsName names what a step's intervals are over: blocks of paired trials, or runs.
func unitsName(s report.ExplainStep) string {
	for _, r := range s.Roles {
		if r.Paired {
			return "blocks"
		}
	}
	return "runs"
}

// shiftCell is a change across units with its interval, "–" without one.
func shiftCell(s stats.Shift) string {
	if !s.HasCI {
		return "–"
	}
	return fmt.Sprintf("%s [%s, %s]", signedUS(s.Estimate), signedUS(s.Lo), signedUS(s.Hi))
}

// changeMark is the verdict of a role's or function's change: "more" or "less" CPU per op
// when it is one (its interval and the rules of explainpairs.go), "?" when the interval
// cannot tell, nothing without an interval.
func changeMark(s stats.Shift, changed bool) string {
	switch {
	case changed && s.Estimate > 0:
		return "more"
	case changed:
		return "less"
	case s.HasCI:
		return "?"
	}
	return ""
}

// explainedLine says how much of a role's change its changed functions account for, and
// where else to look when it is little ("" for a role without an interval).
func explainedLine(r report.ExplainRole) string {
	if !r.Shift.HasCI {
		return ""
	}
	what := fmt.Sprintf("%s: CPU per op %s µs [%s, %s] over %d %s", r.Role, signedUS(r.Shift.Estimate), signedUS(r.Shift.Lo), signedUS(r.Shift.Hi), r.Units, map[bool]string{true: "blocks", false: "runs"}[r.Paired])
	if !r.Changed {
		return what + ": not a change (its interval, or under 2% of the role's CPU)"
	}
	if (math.IsNaN(r.Explained) || len(r.ExplainedBy) == 0) && r.Beneath != "" {
		return fmt.Sprintf("%s: no function's self CPU explains it; %.0f%% of it lies under %s (total CPU: its callees')", what, 100*r.BeneathFraction, r.Beneath)
	}
	if math.IsNaN(r.Explained) || len(r.ExplainedBy) == 0 {
		return what + ": no function's change is a finding on its own; look at the statements, waits and IO per op"
	}
	by := strings.Join(r.ExplainedBy[:min(5, len(r.ExplainedBy))], ", ")
	if len(r.ExplainedBy) > 5 {
		by += fmt.Sprintf(" and %d more", len(r.ExplainedBy)-5)
	}
	line := fmt.Sprintf("%s: %.0f%% of it explained by %s (self CPU)", what, 100*r.Explained, by)
	if math.Abs(r.Explained) < 0.5 {
		line += "; the rest is spread thin or elsewhere: look at the statements, waits and IO per op"
	}
	return line
}

// buildsCell says which builds a role's configs profiled.
func buildsCell(b [2]string) string { return "builds differ: " + b[0] + " → " + b[1] }

// explainStatementsText is a step's statements table and its plan changes side by side.
func explainStatementsText(w io.Writer, s report.ExplainStep) error {
	if len(s.Statements) == 0 {
		return nil
	}
	fmt.Fprintf(w, "statements: %d ops in base, %d in new\n", s.BaseStatementOps, s.NewStatementOps)
	// The per-call columns the engine keeps: a column zero in every row is left out.
	cols := []struct {
		name string
		get  func(report.StatementCost) float64
	}{
		{"plan µs/call", func(c report.StatementCost) float64 { return c.PlanUSPerCall }},
		{"exec µs/call", func(c report.StatementCost) float64 { return c.ExecUSPerCall }},
		{"rows/call", func(c report.StatementCost) float64 { return c.RowsPerCall }},
		{"examined/call", func(c report.StatementCost) float64 { return c.RowsExaminedPerCall }},
		{"hit/call", func(c report.StatementCost) float64 { return c.HitPerCall }},
		{"read/call", func(c report.StatementCost) float64 { return c.ReadPerCall }},
		{"dirtied/call", func(c report.StatementCost) float64 { return c.DirtiedPerCall }},
		{"WAL B/call", func(c report.StatementCost) float64 { return c.WALBytesPerCall }},
		{"jit µs/call", func(c report.StatementCost) float64 { return c.JITUSPerCall }},
	}
	head := []string{"statement", "calls/op", "base µs/op", "new µs/op", "Δ µs/op", "share"}
	var shown []int
	for i, col := range cols {
		for _, c := range s.Statements {
			if col.get(c.Base) != 0 || col.get(c.New) != 0 {
				shown = append(shown, i)
				head = append(head, col.name)
				break
			}
		}
	}
	units := "runs"
	for _, c := range s.Statements {
		if c.Shift.Paired {
			units = "blocks"
		}
	}
	t := newTable(w, 2)
	t.row(append(head, "Δ [95%] over "+units, "change", "plan")...)
	arrow := func(a, b float64) string { return usOp(a) + " → " + usOp(b) }
	for _, c := range s.Statements {
		plan := "same"
		switch {
		case c.PlanChanged:
			plan = "CHANGED"
		case c.Base.Plan == "" || c.New.Plan == "":
			plan = "–"
		}
		if c.BaseCustom != "" || c.NewCustom != "" {
			plan += ", custom ≠ generic"
		}
		row := []string{report.Clip(report.Printable(c.Query), 60), arrow(c.Base.CallsPerOp, c.New.CallsPerOp), usOp(c.Base.USPerOp), usOp(c.New.USPerOp),
			signedUS(c.DeltaUSPerOp), shareCell(c.Share)}
		for _, i := range shown {
			row = append(row, arrow(cols[i].get(c.Base), cols[i].get(c.New)))
		}
		t.row(append(row, shiftCell(c.Shift), changeMark(c.Shift, c.Changed), plan)...)
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, c := range s.Statements {
		if !c.PlanChanged {
			continue
		}
		fmt.Fprintf(w, "plan changed: %s\n", report.Clip(report.Printable(c.Query), 100))
		if c.PlanDiff != "" {
			fmt.Fprintf(w, "first difference: %s\n", report.Clip(report.Printable(c.PlanDiff), 300))
		}
		if err := sideBySide(w, "base", "new", c.BasePlan, c.NewPlan); err != nil {
			return err
		}
	}
	// Where a config's custom plan (with one execution's parameters) is not its generic
	// plan: the statement ran with either, as the server's plan cache chose.
	for _, c := range s.Statements {
		for _, side := range []struct {
			name, diff string
			cost       report.StatementCost
			custom     []string
		}{{"base", c.BaseCustom, c.Base, c.BaseCustomPlan}, {"new", c.NewCustom, c.New, c.NewCustomPlan}} {
			if side.diff == "" {
				continue
			}
			fmt.Fprintf(w, "custom plan ≠ generic plan in %s: %s\n", side.name, report.Clip(report.Printable(c.Query), 100))
			fmt.Fprintf(w, "with %s; first difference (generic → custom): %s\n",
				report.Clip(report.Printable(side.cost.CustomParams), 200), report.Clip(report.Printable(side.diff), 300))
			if err := sideBySide(w, "generic", "custom", report.PlanOutline(side.cost.Plan), side.custom); err != nil {
				return err
			}
		}
	}
	return nil
}

// sideBySide writes two plans' outlines in two columns under their names.
func sideBySide(w io.Writer, an, bn string, a, b []string) error {
	pt := newTable(w, 4)
	pt.row(an, bn)
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		pt.row(report.Printable(x), report.Printable(y))
	}
	return pt.flush()
}

// explainWaitsText is a step's wait shares per role: the classes that changed by at least
// half a percentage point, or all of a role's when none did.
func explainWaitsText(w io.Writer, s report.ExplainStep) error {
	if len(s.Waits) == 0 {
		return nil
	}
	fmt.Fprintln(w, "waits: share of each role's samples")
	t := newTable(w, 2)
	t.row("role", "wait", "base", "new", "Δ pts", "samples")
	for _, c := range s.Waits {
		if math.Abs(c.Delta) < 0.005 && c.Base < 0.05 && c.New < 0.05 {
			continue
		}
		t.row(c.Role, report.Printable(c.Wait), fmt.Sprintf("%.0f%%", 100*c.Base), fmt.Sprintf("%.0f%%", 100*c.New),
			fmt.Sprintf("%+.0f", 100*c.Delta), fmt.Sprintf("%d → %d", c.BaseSamples, c.NewSamples))
	}
	return t.flush()
}

// noiseCell says whether a change of CPU per op is beyond the noise of sampling.
func noiseCell(beyond bool) string {
	if beyond {
		return "beyond"
	}
	return "within"
}

// rateCell is a step's rate, "–" when unknown.
func rateCell(r float64) string {
	if r <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", r)
}

// changeCell is a relative change in %, "–" when unknown.
func changeCell(c float64) string {
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return "–"
	}
	return fmt.Sprintf("%+.1f%%", 100*c)
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
	Summary  []jsonStepSummary `json:"summary"`
}

type jsonExplainStep struct {
	Step             string                `json:"step"`
	BaseRate         float64               `json:"base_ops_per_sec"`
	NewRate          float64               `json:"new_ops_per_sec"`
	Change           *float64              `json:"change"` // new/base − 1; null when unknown
	BaseOps          int64                 `json:"base_ops"`
	NewOps           int64                 `json:"new_ops"`
	Roles            []jsonExplainRole     `json:"roles"`
	BaseStatementOps int64                 `json:"base_statement_ops"`
	NewStatementOps  int64                 `json:"new_statement_ops"`
	Statements       []jsonStatementChange `json:"statements"`
	Waits            []jsonWaitChange      `json:"waits"`
}

type jsonStatementChange struct {
	Query        string            `json:"query"`
	Base         jsonStatementCost `json:"base"`
	New          jsonStatementCost `json:"new"`
	DeltaUSPerOp float64           `json:"delta_us_per_op"`
	Share        *float64          `json:"share"`
	// Interval is the change across units, Changed explain's verdict (report.StatementChange).
	Interval    *jsonShift `json:"interval"`
	Changed     bool       `json:"changed"`
	PlanChanged bool       `json:"plan_changed"`
	PlanDiff    string     `json:"plan_difference,omitempty"`
	// BaseCustom, NewCustom: where each config's custom plan differs from its generic one.
	BaseCustom string   `json:"base_custom_plan_difference,omitempty"`
	NewCustom  string   `json:"new_custom_plan_difference,omitempty"`
	BasePlan   []string `json:"base_plan_outline,omitempty"`
	NewPlan    []string `json:"new_plan_outline,omitempty"`
}

type jsonStatementCost struct {
	Calls               int64   `json:"calls"`
	CallsPerOp          float64 `json:"calls_per_op"`
	USPerOp             float64 `json:"us_per_op"`
	PlanUSPerCall       float64 `json:"plan_us_per_call"`
	ExecUSPerCall       float64 `json:"exec_us_per_call"`
	RowsPerCall         float64 `json:"rows_per_call"`
	RowsExaminedPerCall float64 `json:"rows_examined_per_call"`
	HitPerCall          float64 `json:"shared_blks_hit_per_call"`
	ReadPerCall         float64 `json:"shared_blks_read_per_call"`
	DirtiedPerCall      float64 `json:"shared_blks_dirtied_per_call"`
	WrittenPerCall      float64 `json:"shared_blks_written_per_call"`
	WALBytesPerCall     float64 `json:"wal_bytes_per_call"`
	JITUSPerCall        float64 `json:"jit_us_per_call"`
	Plan                string  `json:"plan,omitempty"` // EXPLAIN's JSON as the server gave it
	// CustomPlan is EXPLAIN's JSON with CustomParams, one execution's parameters.
	CustomPlan   string `json:"custom_plan,omitempty"`
	CustomParams string `json:"custom_plan_parameters,omitempty"`
}

type jsonWaitChange struct {
	Role        string  `json:"role"`
	Wait        string  `json:"wait"`
	BaseShare   float64 `json:"base_share"`
	NewShare    float64 `json:"new_share"`
	DeltaShare  float64 `json:"delta_share"`
	BaseSamples int64   `json:"base_samples"`
	NewSamples  int64   `json:"new_samples"`
}

// jsonStepSummary is a step's summary: its throughput ratio with its interval and verdict
// (nulls without), and the paragraph.
type jsonStepSummary struct {
	Step    string   `json:"step"`
	Ratio   *float64 `json:"ratio"`
	Lo      *float64 `json:"ci_lo"`
	Hi      *float64 `json:"ci_hi"`
	Verdict string   `json:"verdict"`
	Text    string   `json:"text"`
}

type jsonExplainRole struct {
	Role         string               `json:"role"`
	BaseUSPerOp  float64              `json:"base_us_per_op"`
	NewUSPerOp   float64              `json:"new_us_per_op"`
	DeltaUSPerOp float64              `json:"delta_us_per_op"`
	BaseSamples  int64                `json:"base_samples"`
	NewSamples   int64                `json:"new_samples"`
	PValue       float64              `json:"p_value"`
	BeyondNoise  bool                 `json:"beyond_noise"`
	Self         []jsonFunctionChange `json:"self"`
	Total        []jsonFunctionChange `json:"total"`
	// BaseBuild and NewBuild are the builds of the role's code, when they differ.
	BaseBuild string `json:"base_build,omitempty"`
	NewBuild  string `json:"new_build,omitempty"`
	// The change across units (blocks or runs: report.ExplainRole.Shift) and whether it
	// is one; the fraction of it the changed functions account for (null: none).
	Units       int        `json:"units"`
	Paired      bool       `json:"paired"`
	Interval    *jsonShift `json:"interval"`
	Changed     bool       `json:"changed"`
	Explained   *float64   `json:"explained_fraction"`
	ExplainedBy []string   `json:"explained_by"`
	// Beneath: the changed function by total CPU most of an unexplained change lies under.
	Beneath         string   `json:"beneath,omitempty"`
	BeneathFraction *float64 `json:"beneath_fraction"`
}

// jsonShift is a change of µs/op across units with its 95% interval (null: too few
// units for one).
type jsonShift struct {
	Estimate float64 `json:"estimate"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
}

type jsonFunctionChange struct {
	Function     string   `json:"function"`
	BaseUSPerOp  float64  `json:"base_us_per_op"`
	NewUSPerOp   float64  `json:"new_us_per_op"`
	DeltaUSPerOp float64  `json:"delta_us_per_op"`
	DeltaPct     *float64 `json:"delta_pct"` // null: not in the base
	Share        *float64 `json:"share"`     // fraction of the role's change; null when it did not change
	BaseSamples  int64    `json:"base_samples"`
	NewSamples   int64    `json:"new_samples"`
	PValue       float64  `json:"p_value"`      // the change against sampling noise (stats.PoissonRateP)
	BeyondNoise  bool     `json:"beyond_noise"` // p_value below report.NoiseAlpha ÷ the functions compared
	// Build: the builds differ and these figures may be their symbols (report.FunctionChange.Build).
	Build string `json:"build,omitempty"`
	// Interval is the change across units; Changed whether explain calls it a change.
	Interval *jsonShift `json:"interval"`
	Changed  bool       `json:"changed"`
}

// ExplainJSON writes an explanation as one JSON object.
func ExplainJSON(w io.Writer, e report.Explain) error {
	finite := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	interval := func(s stats.Shift) *jsonShift {
		if !s.HasCI {
			return nil
		}
		return &jsonShift{Estimate: report.Finite(s.Estimate), Lo: report.Finite(s.Lo), Hi: report.Finite(s.Hi)}
	}
	fns := func(cs []report.FunctionChange) []jsonFunctionChange {
		out := make([]jsonFunctionChange, 0, len(cs))
		for _, c := range cs {
			out = append(out, jsonFunctionChange{Function: c.Function, BaseUSPerOp: c.Base, NewUSPerOp: c.New,
				DeltaUSPerOp: c.Delta, DeltaPct: finite(c.Pct), Share: finite(c.Share),
				BaseSamples: c.BaseSamples, NewSamples: c.NewSamples, PValue: c.P, BeyondNoise: c.Beyond, Build: c.Build,
				Interval: interval(c.Shift), Changed: c.Changed})
		}
		return out
	}
	j := jsonExplain{Base: e.Base, New: e.New, BaseRuns: nonNilSlice(e.BaseRuns), NewRuns: nonNilSlice(e.NewRuns),
		Top: e.Top, Steps: []jsonExplainStep{}, Notes: nonNilSlice(e.Notes), Summary: []jsonStepSummary{}}
	for _, s := range e.Summary {
		js := jsonStepSummary{Step: s.Step, Text: s.Text}
		if s.HasRatio {
			js.Ratio, js.Verdict = finite(s.Ratio.Estimate), string(s.Ratio.Verdict)
			if s.Ratio.HasCI {
				js.Lo, js.Hi = finite(s.Ratio.Lo), finite(s.Ratio.Hi)
			}
		}
		j.Summary = append(j.Summary, js)
	}
	for _, s := range e.Steps {
		js := jsonExplainStep{Step: s.Step, BaseRate: s.BaseRate, NewRate: s.NewRate, Change: finite(s.Change),
			BaseOps: s.BaseOps, NewOps: s.NewOps, Roles: []jsonExplainRole{},
			BaseStatementOps: s.BaseStatementOps, NewStatementOps: s.NewStatementOps,
			Statements: []jsonStatementChange{}, Waits: []jsonWaitChange{}}
		cost := func(c report.StatementCost) jsonStatementCost {
			return jsonStatementCost{Calls: c.Calls, CallsPerOp: c.CallsPerOp, USPerOp: c.USPerOp, PlanUSPerCall: c.PlanUSPerCall,
				ExecUSPerCall: c.ExecUSPerCall, RowsPerCall: c.RowsPerCall, RowsExaminedPerCall: c.RowsExaminedPerCall,
				HitPerCall: c.HitPerCall, ReadPerCall: c.ReadPerCall, DirtiedPerCall: c.DirtiedPerCall, WrittenPerCall: c.WrittenPerCall,
				WALBytesPerCall: c.WALBytesPerCall, JITUSPerCall: c.JITUSPerCall, Plan: c.Plan,
				CustomPlan: c.CustomPlan, CustomParams: c.CustomParams}
		}
		for _, c := range s.Statements {
			js.Statements = append(js.Statements, jsonStatementChange{Query: c.Query, Base: cost(c.Base), New: cost(c.New),
				DeltaUSPerOp: c.DeltaUSPerOp, Share: finite(c.Share), Interval: interval(c.Shift), Changed: c.Changed, PlanChanged: c.PlanChanged, PlanDiff: c.PlanDiff, BaseCustom: c.BaseCustom, NewCustom: c.NewCustom, BasePlan: c.BasePlan, NewPlan: c.NewPlan})
		}
		for _, c := range s.Waits {
			js.Waits = append(js.Waits, jsonWaitChange{Role: c.Role, Wait: c.Wait, BaseShare: c.Base, NewShare: c.New, DeltaShare: c.Delta,
				BaseSamples: c.BaseSamples, NewSamples: c.NewSamples})
		}
		for _, r := range s.Roles {
			js.Roles = append(js.Roles, jsonExplainRole{Role: r.Role, BaseUSPerOp: r.Base, NewUSPerOp: r.New, DeltaUSPerOp: r.Delta,
				BaseSamples: r.BaseSamples, NewSamples: r.NewSamples, PValue: r.P, BeyondNoise: r.Beyond, Self: fns(r.Self), Total: fns(r.Total),
				BaseBuild: r.Builds[0], NewBuild: r.Builds[1],
				Units: r.Units, Paired: r.Paired, Interval: interval(r.Shift), Changed: r.Changed,
				Explained: finite(r.Explained), ExplainedBy: nonNilSlice(r.ExplainedBy),
				Beneath: r.Beneath, BeneathFraction: finite(r.BeneathFraction)})
		}
		j.Steps = append(j.Steps, js)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}
