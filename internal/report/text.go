package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/store"
)

// listTimeLayout is how `dbperf runs` shows start times.
const listTimeLayout = "2006-01-02 15:04:05"

// headerTimeLayout is how a report's run header shows times.
const headerTimeLayout = "2006-01-02 15:04:05 MST"

// RenderRuns writes the `dbperf runs` list: a header and one aligned line per run, times
// in the local zone. Every value is Printable, and a label longer than LabelWidth runes
// is clipped, so that one run's label can neither forge a line nor widen every other.
func RenderRuns(w io.Writer, runs []store.RunSummary) error {
	return renderRuns(w, runs, time.Local)
}

func renderRuns(w io.Writer, runs []store.RunSummary, loc *time.Location) error {
	t := newTable(w)
	t.row("id", "started", "workload", "engine", "version", "label", "status", "steps")
	for _, r := range runs {
		t.row(fmt.Sprint(r.ID), r.StartedAt.In(loc).Format(listTimeLayout), r.Workload, r.Engine,
			orDash(r.EngineVersion), orDash(Clip(Printable(r.Label), LabelWidth)), r.Status, fmt.Sprint(r.Steps))
	}
	return t.flush()
}

// LabelWidth is the widest label `dbperf runs` shows, in runes; `dbperf report LABEL`
// takes the whole label.
const LabelWidth = 40

// RenderText writes rep for a terminal: per run a short header, a table with one row per
// step (a step with several labels continues on the following lines), a latency table
// with service and, for rate-limited labels, response time, and notes (errors, step
// notes, audit details). Times are shown in rep.Location (default time.Local).
func RenderText(w io.Writer, rep Report) error {
	loc := rep.Location
	if loc == nil {
		loc = time.Local
	}
	var buf bytes.Buffer
	for i, r := range rep.Runs {
		if i > 0 {
			buf.WriteString("\n")
		}
		if err := renderRunText(&buf, r, loc); err != nil {
			return fmt.Errorf("report: render run %d: %w", r.ID, err)
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("report: write text: %w", err)
	}
	return nil
}

func renderRunText(w *bytes.Buffer, r RunReport, loc *time.Location) error {
	engine := r.Engine
	if r.EngineVersion != "" {
		engine += " " + r.EngineVersion
	}
	fmt.Fprintf(w, "run %d: %s v%d on %s, label %s, status %s\n",
		r.ID, Printable(r.Workload), r.WorkloadVersion, Printable(engine), Printable(orDash(r.Label)), Printable(string(r.Status)))

	line := []string{"started " + r.StartedAt.In(loc).Format(headerTimeLayout)}
	if !r.FinishedAt.IsZero() {
		line = append(line, "finished "+r.FinishedAt.In(loc).Format(headerTimeLayout))
	}
	line = append(line, fmt.Sprintf("seed %d", r.Seed))
	for _, k := range []string{"scale", "clients"} {
		if v, ok := r.Params[k]; ok {
			line = append(line, fmt.Sprintf("%s %v", k, v))
		}
	}
	fmt.Fprintln(w, Printable(strings.Join(line, ", ")))
	// How the server was reached (cli stores these with the engine's settings).
	switch r.EngineSettings["dbperf.managed"] {
	case "true":
		fmt.Fprintf(w, "managed server, profile %s\n", Printable(orDash(r.EngineSettings["dbperf.profile"])))
	case "false":
		fmt.Fprintf(w, "server %s\n", Printable(r.EngineSettings["dbperf.dsn"]))
	}
	if cpu := cpuLine(r.Env); cpu != "" {
		fmt.Fprintln(w, Printable(cpu))
	}
	if len(r.Steps) == 0 {
		fmt.Fprintln(w, "no steps")
		return nil
	}

	fmt.Fprintln(w)
	t := newTable(w)
	t.row("step", "status", "secs", "throughput", "ops (per sec, p99)", "background (achieved/target)", "client µs/op", "audit")
	for _, s := range r.Steps {
		ops := opsCells(s)
		bg := backgroundCells(s)
		if len(bg) == 0 {
			bg = []string{"-"}
		}
		if len(ops) == 0 {
			ops = []string{"-"}
		}
		for i := range max(len(ops), len(bg)) {
			if i == 0 {
				t.row(s.Name, string(s.Status), fmt.Sprintf("%.1f", s.Seconds), throughput(s), cell(ops, i), cell(bg, i),
					cpuPerOp(s), orDash(s.Audit.Status))
				continue
			}
			t.row("", "", "", "", cell(ops, i), cell(bg, i), "", "")
		}
	}
	if err := t.flush(); err != nil {
		return err
	}

	if hasOps(r.Steps) {
		fmt.Fprintln(w)
		t = newTable(w)
		t.row("step", "label", "latency", "p50", "p90", "p99", "p99.9", "p99.99", "max", "count", "errors", "late", "missed")
		for _, s := range r.Steps {
			name := s.Name
			for _, o := range s.Ops {
				lateMissed := []string{"-", "-"}
				if o.HasResponse || o.TargetPerSec > 0 {
					lateMissed = []string{fmt.Sprint(o.Late), fmt.Sprint(o.Missed)}
				}
				t.row(append([]string{name, o.Label, "service"}, append(opLatencyCells(o, o.Service),
					fmt.Sprintf("%d %s", o.Count, o.Unit), fmt.Sprint(o.Errors), lateMissed[0], lateMissed[1])...)...)
				if o.HasResponse {
					t.row(append([]string{"", "", "response"}, opLatencyCells(o, o.Response)...)...)
				}
				name = ""
			}
		}
		if err := t.flush(); err != nil {
			return err
		}
	}

	if hasHW(r.Steps) {
		fmt.Fprintln(w)
		if err := renderHWText(w, r); err != nil {
			return err
		}
	}

	var notes []string
	for _, s := range r.Steps {
		if s.Error != "" {
			notes = append(notes, fmt.Sprintf("%s %s: %s", s.Name, s.Status, s.Error))
		}
		if s.Audit.Detail != "" {
			notes = append(notes, fmt.Sprintf("%s audit %s: %s", s.Name, orDash(s.Audit.Status), s.Audit.Detail))
		}
		if s.Status == metrics.StatusInterrupted && len(s.Ops) == 0 && len(s.Intervals) > 0 {
			notes = append(notes, fmt.Sprintf("%s interrupted: no step totals (the process ended mid-step); %s stored, see --format json",
				s.Name, plural(len(s.Intervals), "interval")))
		}
		if s.Note != "" {
			notes = append(notes, fmt.Sprintf("%s note: %s", s.Name, s.Note))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "notes")
		for _, n := range notes {
			fmt.Fprintf(w, "  %s\n", Printable(n))
		}
	}
	return nil
}

func cpuLine(env map[string]string) string {
	model, cores := env["cpu_model"], env["cores"]
	switch {
	case model != "" && cores != "":
		return fmt.Sprintf("cpu %s, %s cores", model, cores)
	case model != "":
		return "cpu " + model
	case cores != "":
		return fmt.Sprintf("cpu %s cores", cores)
	}
	return ""
}

func hasOps(steps []StepReport) bool {
	for _, s := range steps {
		if len(s.Ops) > 0 {
			return true
		}
	}
	return false
}

// opsCells is one "label rate/s p99 latency" cell per label, primary first.
func opsCells(s StepReport) []string {
	var cells []string
	if p, ok := s.PrimaryOp(); ok {
		cells = append(cells, opCell(p))
	}
	for _, o := range s.Ops {
		if o.Label != s.Primary {
			cells = append(cells, opCell(o))
		}
	}
	return cells
}

// opCell is "label rate/s p99 latency"; an op of several statements (a sysbench
// transaction) also shows its events: "read-only 16000/s (1000 tx/s) p99 2.1ms", the
// latency being the transaction's.
func opCell(o Op) string {
	switch {
	case !measured(o):
		return o.Label + " -"
	case single(o):
		return fmt.Sprintf("%s 1 op in %s", o.Label, formatUS(o.Service.Max))
	}
	if o.Events != o.Statements && o.Events > 0 {
		return fmt.Sprintf("%s %s/s (%s tx/s) p99 %s", o.Label, formatRate(o.PerSec), formatRate(o.EventsPerSec), formatUS(o.Service.P99))
	}
	return fmt.Sprintf("%s %s/s p99 %s", o.Label, formatRate(o.PerSec), formatUS(o.Service.P99))
}

func backgroundCells(s StepReport) []string {
	var cells []string
	for _, b := range s.Background {
		name := b.Role
		if name == "" {
			name = b.Label
		}
		cells = append(cells, fmt.Sprintf("%s %s/%s %s", name, formatRate(b.AchievedPerSec), formatRate(b.TargetPerSec), b.SLA))
	}
	return cells
}

// throughput is the primary label's rate with its unit, e.g. "52341 rows/s" or "1234 q/s".
func throughput(s StepReport) string {
	p, ok := s.PrimaryOp()
	if !ok || !measured(p) || single(p) && p.Unit != metrics.UnitRows {
		return "-" // nothing finished, or one op (a cleanup): its duration is the step's secs
	}
	return formatRate(p.PerSec) + " " + unitPerSec(p.LabelStats)
}

func unitPerSec(l metrics.LabelStats) string {
	switch {
	case l.Unit == metrics.UnitRows:
		return "rows/s"
	case l.Role == "query" || strings.HasSuffix(l.Label, "query"):
		return "q/s"
	}
	return "ops/s"
}

func cpuPerOp(s StepReport) string {
	if p, ok := s.PrimaryOp(); !ok || p.Count == 0 || single(p) && p.Unit != metrics.UnitRows {
		return "-"
	}
	return fmt.Sprintf("%.1f", s.ClientCPUPerOpUS)
}

// latencyCells are the percentiles; p99.99 is "-" in runs stored before it was kept.
func latencyCells(l metrics.Latency) []string {
	p9999 := "-"
	if l.P9999 > 0 {
		p9999 = formatUS(l.P9999)
	}
	return []string{formatUS(l.P50), formatUS(l.P90), formatUS(l.P99), formatUS(l.P999), p9999, formatUS(l.Max)}
}

// opLatencyCells are an op's percentiles: "-" when no op finished (never a 0 that was not
// measured), only the max for a single op (its percentiles would all be that one op).
func opLatencyCells(o Op, l metrics.Latency) []string {
	switch {
	case !measured(o):
		return []string{"-", "-", "-", "-", "-", "-"}
	case single(o):
		return []string{"-", "-", "-", "-", "-", formatUS(l.Max)}
	}
	return latencyCells(l)
}

// measured says some op of the label finished: its rate and latencies mean something.
func measured(o Op) bool { return o.Events > 0 }

// single says the label is one op (a cleanup's wait, l.x's index build).
func single(o Op) bool { return o.Events == 1 }

// formatRate prints a rate compactly: whole numbers from 100 up, else 3 significant digits.
func formatRate(v float64) string {
	switch {
	case v >= 100 || v == 0:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// formatUS prints microseconds as µs below 1 ms, ms below 1 s, else s.
func formatUS(us int64) string {
	switch {
	case us < 1000:
		return fmt.Sprintf("%dµs", us)
	case us < 1_000_000:
		return fmt.Sprintf("%.1fms", float64(us)/1e3)
	}
	return fmt.Sprintf("%.2fs", float64(us)/1e6)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func cell(cells []string, i int) string {
	if i < len(cells) {
		return cells[i]
	}
	return ""
}

// table is a tabwriter whose rows all have the header's number of cells (tabwriter aligns
// a column only over consecutive lines that have it) and which strips the padding left at
// the end of lines whose last cells are empty.
type table struct {
	out   io.Writer
	buf   bytes.Buffer
	tw    *tabwriter.Writer
	ncols int // of the first row; shorter rows are padded so that columns stay aligned
}

func newTable(out io.Writer) *table {
	t := &table{out: out}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 8, 2, ' ', 0)
	return t
}

func (t *table) row(cells ...string) {
	if t.ncols == 0 {
		t.ncols = len(cells)
	}
	for len(cells) < t.ncols {
		cells = append(cells, "")
	}
	// A cell's own tab or newline would break the columns: every cell is Printable.
	cells = slices.Clone(cells)
	for i, c := range cells {
		cells[i] = Printable(c)
	}
	// Writes to a bytes.Buffer through tabwriter cannot fail; errors surface in flush.
	_, _ = io.WriteString(t.tw, strings.Join(cells, "\t")+"\n")
}

func (t *table) flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	lines := strings.SplitAfter(t.buf.String(), "\n")
	var out strings.Builder
	for _, l := range lines {
		if l == "" {
			continue
		}
		out.WriteString(strings.TrimRight(l, " \n"))
		out.WriteString("\n")
	}
	_, err := io.WriteString(t.out, out.String())
	return err
}

func hasHW(steps []StepReport) bool {
	for _, s := range steps {
		if len(s.HW.Metrics) > 0 {
			return true
		}
	}
	return false
}

// renderHWText writes the HW-efficiency table (one row per step; per-connection CPU by
// role continues on the following lines) and, once each, why metrics are missing.
func renderHWText(w *bytes.Buffer, r RunReport) error {
	names := metrics.MetricNames()
	t := newTable(w)
	t.row(append(append([]string{"step"}, names...), "conn cpu")...)
	reasons := map[string][]string{}
	var order []string
	var oneOps []string // one-op steps: CPU seconds instead of per-op figures
	for _, s := range r.Steps {
		if s.Status == metrics.StatusSkipped {
			continue
		}
		one := oneOp(r, s)
		if one {
			oneOps = append(oneOps, oneOpCPU(s))
		}
		row := []string{s.Name}
		for _, n := range names {
			if one && perOpMetric(n) {
				row = append(row, "-")
				continue
			}
			v, ok := s.HW.Metrics[n]
			if !ok {
				row = append(row, "-")
				why := s.HW.Absent[n]
				if _, seen := reasons[why]; !seen {
					order = append(order, why)
				}
				if !slices.Contains(reasons[why], n) {
					reasons[why] = append(reasons[why], n)
				}
				continue
			}
			row = append(row, formatMetric(v))
		}
		conn := connCPUCells(s.HW.ConnCPU)
		t.row(append(row, cell(conn, 0))...)
		for i := 1; i < len(conn); i++ {
			t.row(append(make([]string, len(names)+1), conn[i])...)
		}
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, l := range metricsLegend(metrics.HWDefs()) {
		fmt.Fprintln(w, l)
	}
	for _, n := range hwNotes(r) {
		fmt.Fprintf(w, "  %s\n", n)
	}
	for _, why := range order {
		fmt.Fprintf(w, "  - %s: %s\n", strings.Join(reasons[why], " "), why)
	}
	for _, l := range oneOps {
		fmt.Fprintf(w, "  - %s\n", l)
	}
	return nil
}

// oneOpCPU says a one-op step has no per-op figures and gives its CPU seconds instead.
func oneOpCPU(s StepReport) string {
	var parts []string
	if h := s.HW.HW; h != nil {
		if !h.Remote {
			parts = append(parts, fmt.Sprintf("machine %.2f s", h.CPU.BusySec()))
		}
		if h.Server.Known && !h.Embedded {
			parts = append(parts, fmt.Sprintf("server %.2f s", h.Server.CPUSec))
		}
	}
	parts = append(parts, fmt.Sprintf("dbperf %.2f s", s.ClientCPUSec))
	return fmt.Sprintf("%s: one operation per client, no per-op figures (they would be the whole step's); CPU %s",
		s.Name, strings.Join(parts, ", "))
}

// formatMetric prints a metric with about three significant digits.
func formatMetric(v float64) string {
	// Rounded to 3 significant digits first, so that 9.996 prints as 10.0, not 10.00.
	if r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64); err == nil {
		v = r
	}
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
