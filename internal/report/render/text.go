package render

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/store"
)

// listTimeLayout is how `dbperf runs` shows start times.
const listTimeLayout = "2006-01-02 15:04:05"

// headerTimeLayout is how a report's run header shows times.
const headerTimeLayout = "2006-01-02 15:04:05 MST"

// Runs writes the `dbperf runs` list: a header and one aligned line per run, times
// in the local zone. Every value is report.Printable, and a label longer than LabelWidth runes
// is clipped, so that one run's label can neither forge a line nor widen every other.
func Runs(w io.Writer, runs []store.RunSummary) error {
	return renderRuns(w, runs, time.Local)
}

func renderRuns(w io.Writer, runs []store.RunSummary, loc *time.Location) error {
	t := newTable(w, allLeft)
	t.row("id", "started", "workload", "engine", "version", "label", "status", "steps")
	for _, r := range runs {
		t.row(fmt.Sprint(r.ID), r.StartedAt.In(loc).Format(listTimeLayout), r.Workload, r.Engine,
			orDash(r.EngineVersion), orDash(report.Clip(report.Printable(r.Label), LabelWidth)), r.Status, fmt.Sprint(r.Steps))
	}
	return t.flush()
}

// LabelWidth is the widest label `dbperf runs` shows, in runes; `dbperf report LABEL`
// takes the whole label.
const LabelWidth = 40

// Text writes rep for a terminal: per run a short header, a table with one row per
// step (a step with several labels continues on the following lines), a latency table
// with service and, for rate-limited labels, response time, and notes (errors, step
// notes, audit details). Times are shown in rep.Location (default time.Local). On a
// writer with a width (Fit) a wider table goes in blocks of columns, the step repeated,
// and the prose wraps at spaces.
func Text(w io.Writer, rep report.Report) error {
	loc := rep.Location
	if loc == nil {
		loc = time.Local
	}
	var buf bytes.Buffer
	for i, r := range rep.Runs {
		if i > 0 {
			buf.WriteString("\n")
		}
		if err := renderRunText(&buf, r, loc, Columns(w)); err != nil {
			return fmt.Errorf("render: run %d: %w", r.ID, err)
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("render: write text: %w", err)
	}
	return nil
}

func renderRunText(w *bytes.Buffer, r report.RunReport, loc *time.Location, width int) error {
	writeRunHeader(w, r, loc, width)
	if len(r.Steps) == 0 {
		fmt.Fprintln(w, "no steps")
		return nil
	}

	fmt.Fprintln(w)
	t := newTable(w, allLeft).fit(width)
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
		t = newTable(w, allLeft).fit(width).repeat(3)
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
		if err := renderHWText(w, r, width); err != nil {
			return err
		}
	}

	notes := r.Notes()
	if len(notes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "notes")
		for _, n := range notes {
			writeWrapped(w, width, "  ", "  ", report.Printable(n))
		}
	}
	return nil
}

// writeRunHeader writes a run's header: what ran on which engine, when, with which
// seed and parameters, how the server was reached, the CPU and the queue job.
func writeRunHeader(w *bytes.Buffer, r report.RunReport, loc *time.Location, width int) {
	engine := r.Engine
	if r.EngineVersion != "" {
		engine += " " + r.EngineVersion
	}
	fmt.Fprintf(w, "run %d: %s v%d on %s, label %s, status %s\n",
		r.ID, report.Printable(r.Workload), r.WorkloadVersion, report.Printable(engine), report.Printable(orDash(r.Label)), report.Printable(string(r.Status)))

	line := []string{"started " + r.StartedAt.In(loc).Format(headerTimeLayout)}
	if !r.FinishedAt.IsZero() {
		line = append(line, "finished "+r.FinishedAt.In(loc).Format(headerTimeLayout))
	}
	line = append(line, fmt.Sprintf("seed %d", r.Seed))
	for _, k := range []string{"scale", "clients"} {
		v, ok := r.Params[k]
		if !ok {
			continue
		}
		// A test repeated at several thread counts (sysbench --threads 1,4) ran at each:
		// the stored clients is only the largest.
		if th, many := r.Params["threads"].([]any); k == "clients" && many && len(th) > 1 {
			ns := make([]string, len(th))
			for i, n := range th {
				ns[i] = fmt.Sprint(n)
			}
			line = append(line, "threads "+strings.Join(ns, ","))
			continue
		}
		line = append(line, fmt.Sprintf("%s %v", k, v))
	}
	writeItems(w, width, line)
	// How the server was reached (cli stores these with the engine's settings).
	switch r.EngineSettings["dbperf.managed"] {
	case "true":
		fmt.Fprintf(w, "managed server, profile %s%s\n", report.Printable(orDash(r.EngineSettings["dbperf.profile"])), report.Printable(limitsNote(r.Env)))
		if c := r.Env["cluster"]; c != "" {
			// dbperf run --cluster: the topology and the distance between its nodes.
			fmt.Fprintf(w, "cluster: %s; node latency %s\n", report.Printable(c), report.Printable(strings.SplitN(r.Env["node_latency"], " on every", 2)[0]))
			if cn := r.Env["client_nodes"]; strings.HasPrefix(cn, "--spread") {
				// Where the sessions went: each step's note names them.
				fmt.Fprintf(w, "clients: %s\n", report.Printable(cn))
			}
		}
	case "false":
		fmt.Fprintf(w, "server %s\n", report.Printable(r.EngineSettings["dbperf.dsn"]))
	}
	if cpu := cpuLine(r.Env); cpu != "" {
		fmt.Fprintln(w, report.Printable(cpu))
	}
	if job := r.Env[store.EnvQueueJob]; job != "" {
		// Taken from the queue by an agent (dbperf agent, docs/fleet.md).
		fmt.Fprintf(w, "queued job %s, attempt %s, run by agent %s of class %s\n", report.Printable(job),
			report.Printable(r.Env[store.EnvQueueAttempt]), report.Printable(r.Env[store.EnvAgent]), report.Printable(orDash(r.Env[store.EnvAgentClass])))
	}
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

func hasOps(steps []report.StepReport) bool {
	for _, s := range steps {
		if len(s.Ops) > 0 {
			return true
		}
	}
	return false
}

// opsCells is one "label rate/s p99 latency" cell per label, primary first.
func opsCells(s report.StepReport) []string {
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
func opCell(o report.Op) string {
	switch {
	case !o.Measured():
		return o.Label + " -"
	case o.Single():
		return fmt.Sprintf("%s 1 op in %s", o.Label, formatUS(o.Service.Max))
	}
	if o.Events != o.Statements && o.Events > 0 {
		return fmt.Sprintf("%s %s/s (%s tx/s) p99 %s", o.Label, formatRate(o.PerSec), formatRate(o.EventsPerSec), formatUS(o.Service.P99))
	}
	return fmt.Sprintf("%s %s/s p99 %s", o.Label, formatRate(o.PerSec), formatUS(o.Service.P99))
}

func backgroundCells(s report.StepReport) []string {
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
func throughput(s report.StepReport) string {
	p, ok := s.PrimaryOp()
	if !ok || !p.Measured() || p.Single() && p.Unit != metrics.UnitRows {
		return "-" // nothing finished, or one op (a cleanup): its duration is the step's secs
	}
	return formatRate(p.PerSec) + " " + p.RateUnit()
}

func cpuPerOp(s report.StepReport) string {
	if p, ok := s.PrimaryOp(); !ok || p.Count == 0 || p.Single() && p.Unit != metrics.UnitRows {
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
func opLatencyCells(o report.Op, l metrics.Latency) []string {
	switch {
	case !o.Measured():
		return []string{"-", "-", "-", "-", "-", "-"}
	case o.Single():
		return []string{"-", "-", "-", "-", "-", formatUS(l.Max)}
	}
	return latencyCells(l)
}

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

func hasHW(steps []report.StepReport) bool {
	for _, s := range steps {
		if len(s.HW.Metrics) > 0 {
			return true
		}
	}
	return false
}

// renderHWText writes the HW-efficiency table (one row per step; per-connection CPU by
// role continues on the following lines) and, once each, why metrics are missing.
func renderHWText(w *bytes.Buffer, r report.RunReport, width int) error {
	names := metrics.MetricNames()
	t := newTable(w, allLeft).fit(width)
	t.row(append(append([]string{"step"}, names...), "conn cpu")...)
	reasons := map[string][]string{}
	var order []string
	var oneOps []string // one-op steps: CPU seconds instead of per-op figures
	anyConn := false
	for _, s := range r.Steps {
		if s.Status == metrics.StatusSkipped {
			continue
		}
		one := r.IsOneOp(s)
		if one {
			oneOps = append(oneOps, oneOpCPU(s))
		}
		row := []string{s.Name}
		for _, n := range names {
			if one && report.PerOpMetric(n) {
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
			row = append(row, report.FormatNum(v))
		}
		conn := connCPUCells(s.RoleCPUs(), one)
		anyConn = anyConn || len(conn) > 0
		t.row(append(row, cell(conn, 0))...)
		for i := 1; i < len(conn); i++ {
			t.row(append(make([]string, len(names)+1), conn[i])...)
		}
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, l := range report.MetricsLegend(metrics.HWDefs()) {
		writeWrapped(w, width, "", "  ", l)
	}
	if anyConn {
		for i, l := range report.ConnCPULegend() {
			if i == 0 {
				l = "conn cpu: " + l
			}
			wrap := 110
			if width > 0 {
				wrap = min(wrap, width)
			}
			for _, part := range wrapWords(l, wrap) {
				fmt.Fprintln(w, part)
			}
		}
	}
	for _, n := range r.HWNotes() {
		writeWrapped(w, width, "  ", "  ", n)
	}
	for _, why := range order {
		writeWrapped(w, width, "  - ", "", strings.Join(reasons[why], " ")+": "+why)
	}
	for _, l := range oneOps {
		writeWrapped(w, width, "  - ", "", l)
	}
	return nil
}

// oneOpCPU says a one-op step has no per-op figures and gives its CPU seconds instead.
func oneOpCPU(s report.StepReport) string {
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

// wrapWords breaks s at spaces into lines of at most width runes (a longer word stays whole).
func wrapWords(s string, width int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len([]rune(line))+1+len([]rune(word)) > width {
			out = append(out, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

// connCPUCells are "role 117 µs/query" per role: its CPU per operation of its own work,
// or "role 1.23 s", its CPU seconds over the step, where it has none or the step is one-op.
func connCPUCells(cs []report.RoleCPU, oneOp bool) []string {
	var out []string
	for _, c := range cs {
		v, unit := c.Figure(oneOp)
		num := report.FormatNum(v)
		if unit == report.ConnCPUSecUnit {
			num = fmt.Sprintf("%.2f", v)
		}
		out = append(out, fmt.Sprintf("%s %s %s", strings.ReplaceAll(c.Role, "_", " "), num, unit))
	}
	return out
}

// limitsNote is a managed server's cgroup limits (--server-memory, --server-cpus) as the
// run's env records them, shortened to their values ("" without limits).
func limitsNote(env map[string]string) string {
	var parts []string
	for _, k := range []struct{ key, name string }{{"server_memory", "memory"}, {"server_cpus", "cpus"}} {
		v := env[k.key]
		if v == "" {
			continue
		}
		if i := strings.Index(v, " ("); i > 0 {
			v = v[:i]
		}
		parts = append(parts, k.name+" "+v)
	}
	if len(parts) == 0 {
		return ""
	}
	return ", limited to " + strings.Join(parts, ", ")
}
