package render

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
	"github.com/dbperf/dbperf/internal/stats"
	"github.com/dbperf/dbperf/internal/store"
)

// The marks tests build comparisons from synthetic stored runs — identical configs with
// noise (A/A), a clear 20% effect over 8 interleaved (paired) trials, a noisy difference
// that cannot be told from noise, one run per config, and one-op steps in every run — and
// check, in every format (text with and without colour, Markdown, CSV, TSV, JSON, HTML),
// that a cell is marked better or worse (▲ ▼, green or red, class better/worse) exactly
// when its ratio's verdict is higher or lower, and that one-op steps never show a per-op
// figure.

// jitters vary the trials a little (±0.5%), deterministically.
var jitters = []float64{-0.004, 0.003, 0.001, -0.002, 0.005, -0.001, 0.002, -0.003}

// bigJitters vary them a lot (±15%): a difference of a few percent is lost in it.
var bigJitters = []float64{-0.15, 0.12, 0.02, -0.09, 0.15, -0.04, 0.07, -0.12}

// marksSpec is one synthetic run: speed scales the load and the queries, lxSecs is the
// one-op index build's duration, trial the interleaved design's trial ("" = none).
type marksSpec struct {
	id            int64
	label         string
	speed         float64
	lxSecs        float64
	cleanupSecs   float64
	trial         string
	otherCPUPct   float64 // stored other_cpu_pct of the qp step (0 = not stored)
	sysbenchNoOps bool    // add a sysbench-like delete step whose DELETEs mostly found nothing
}

func marksRun(sp marksSpec) store.Run {
	f := sp.speed
	hw := func(busy float64) *metrics.HW { return reporttest.HW(busy, busy*0.6, 0.5, 2048) }
	step := func(seq int, group string, r metrics.StepResult, h *metrics.HW) store.Step {
		r.Status = metrics.StatusOK
		r.StartedAt = reporttest.Start
		return store.Step{ID: sp.id*100 + int64(seq), Seq: seq, Group: group, Result: reporttest.WithHW(r, h)}
	}
	load := step(0, "write", metrics.StepResult{Name: "l.i0", Seconds: 2 / f, Kind: "load", Primary: "insert",
		Labels: []metrics.LabelStats{reporttest.RowsLabel("insert", 100000, 0)}, ClientCPUSec: 0.8}, hw(2.6/f))
	index := metrics.LabelStats{Label: "index", Role: "index", Unit: metrics.UnitRows, Statements: 1, Events: 1, Rows: 100000,
		Service: reporttest.Lat(int64(sp.lxSecs*1e6), int64(sp.lxSecs*1e6), int64(sp.lxSecs*1e6), int64(sp.lxSecs*1e6), int64(sp.lxSecs*1e6))}
	lx := step(1, "write", metrics.StepResult{Name: "l.x", Seconds: sp.lxSecs, Kind: "load", Primary: "index",
		Labels: []metrics.LabelStats{index}, ClientCPUSec: 0.01}, hw(sp.lxSecs*0.9))
	cl := metrics.LabelStats{Label: "cleanup", Role: "cleanup", Unit: metrics.UnitOps, Statements: 1, Events: 1,
		Service: reporttest.Lat(350000, 350000, 350000, 350000, 350000)}
	cleanup := step(2, "", metrics.StepResult{Name: "cleanup", Seconds: sp.cleanupSecs, Kind: "cleanup", Primary: "cleanup",
		Labels: []metrics.LabelStats{cl}, ClientCPUSec: 0.002}, hw(0.35))
	qp := step(3, "point", metrics.StepResult{Name: "qp100", Seconds: 5, Kind: "read-write", Primary: "point-query",
		Labels: []metrics.LabelStats{reporttest.QueryLabel(int64(25000 * f))}, ClientCPUSec: 0.5}, hw(6/f))
	if sp.otherCPUPct > 0 {
		qp.Result.Metrics[metrics.MetricOtherCPUPct] = sp.otherCPUPct
		qp.Result.Metrics[metrics.MetricStealPct] = 1
	}
	steps := []store.Step{load, lx, cleanup, qp}
	if sp.sysbenchNoOps {
		del := metrics.LabelStats{Label: "delete", Role: "query", Unit: metrics.UnitOps, Statements: 86662, Events: 86662,
			Rows: 9997, Service: reporttest.Lat(40, 60, 90, 200, 3000)}
		steps = append(steps, step(4, "point", metrics.StepResult{Name: "delete", Seconds: 30, Kind: "write", Primary: "delete",
			Labels: []metrics.LabelStats{del}, ClientCPUSec: 1}, hw(12)))
	}
	params := map[string]any{"clients": json.Number("1")}
	if sp.trial != "" {
		params["sweep"], params["trial"] = "sw1", sp.trial
	}
	return store.Run{ID: sp.id,
		RunMeta: store.RunMeta{Workload: "insertbench", WorkloadVersion: 3, Engine: "postgres", EngineVersion: "16.4",
			Label: sp.label, Seed: 1, StartedAt: reporttest.Start.Add(time.Duration(sp.id) * time.Minute), StepGroups: reporttest.IBGroups(),
			Params: params, Env: map[string]string{"server_processes": "managed server", "io_devices": "nvme0n1"}},
		Status: store.RunOK, FinishedAt: reporttest.Start.Add(time.Duration(sp.id)*time.Minute + 30*time.Second),
		Steps: steps,
	}
}

// marksConfig is n runs of a config: speed × (1 + jitter[i]); paired gives them trials
// b1/s1 … bn/s1 (so two paired configs match trial by trial).
func marksConfig(first int64, label string, n int, speed float64, jit []float64, lxSecs float64, paired bool, tweak func(i int, sp *marksSpec)) []marksSpec {
	var out []marksSpec
	for i := range n {
		sp := marksSpec{id: first + int64(i), label: label, speed: speed * (1 + jit[i%len(jit)]), lxSecs: lxSecs * (1 - jit[i%len(jit)]),
			cleanupSecs: 10 * (1 + jit[(i+2)%len(jit)]/5)}
		if paired {
			sp.trial = fmt.Sprintf("b%d/s1", i+1)
		}
		if tweak != nil {
			tweak(i, &sp)
		}
		out = append(out, sp)
	}
	return out
}

// marksComparison builds the comparison of the configs (the first is the base).
func marksComparison(configs ...[]marksSpec) (report.Report, report.Comparison) {
	var runs []store.Run
	var groups []report.Group
	for _, cfg := range configs {
		g := report.Group{Name: cfg[0].label}
		for _, sp := range cfg {
			runs = append(runs, marksRun(sp))
			g.RunIDs = append(g.RunIDs, sp.id)
		}
		groups = append(groups, g)
	}
	rep := report.Build(runs)
	rep.Location = time.UTC
	c := report.Compare(rep, groups, 0)
	rep.Comparison = &c
	return rep, c
}

type marksScenario struct {
	name string
	rep  report.Report
	c    report.Comparison
}

func marksScenarios() []marksScenario {
	var out []marksScenario
	add := func(name string, configs ...[]marksSpec) {
		rep, c := marksComparison(configs...)
		out = append(out, marksScenario{name, rep, c})
	}
	// A/A: the same config twice, noise only; paired; a step whose DELETEs mostly did nothing.
	noOps := func(_ int, sp *marksSpec) { sp.sysbenchNoOps = true }
	add("aa",
		marksConfig(1, "a", 8, 1, jitters, 3, true, noOps),
		marksConfig(101, "a2", 8, 1, append(jitters[3:], jitters[:3]...), 3, true, noOps))
	// A clear 20% effect over 8 paired trials; the faster config's index build takes twice
	// as long (a one-op step: if it were in the geomean, that would not be 1.2); one of its
	// runs had a busy machine in qp100.
	add("effect",
		marksConfig(1, "a", 8, 1, jitters, 3, true, nil),
		marksConfig(201, "fast", 8, 1.2, jitters, 6, true, func(i int, sp *marksSpec) {
			if i == 2 {
				sp.otherCPUPct = 12
			}
		}))
	// A 5% difference in ±15% noise, unpaired: cannot be told from noise.
	add("noisy",
		marksConfig(1, "a", 8, 1, bigJitters, 3, false, nil),
		marksConfig(301, "noisy", 8, 1.05, append(bigJitters[5:], bigJitters[:5]...), 3, false, nil))
	// One run per config: ratios, no verdicts.
	add("n1",
		marksConfig(1, "a", 1, 1, jitters, 3, false, nil),
		marksConfig(401, "one", 1, 1.2, jitters, 3, false, nil))
	return out
}

// relTables are the tables whose cells are ratios.
var relTables = []string{"relative", "geomean", "by_group", "hw_relative", "kv_relative"}

// checkCellModel: a cell's class follows its verdict alone.
func checkCellModel(t *testing.T, where string, cell report.Cell) {
	t.Helper()
	if cell.Rel != nil {
		if want := cell.Rel.Class(); cell.Class != want {
			t.Errorf("%s: class %q for verdict %q, want %q", where, cell.Class, cell.Rel.Verdict, want)
		}
		if !cell.Rel.HasCI && cell.Class != report.ClassNone {
			t.Errorf("%s: no interval but class %q", where, cell.Class)
		}
		return
	}
	if cell.Class == report.ClassBetter || cell.Class == report.ClassWorse || cell.Class == report.ClassUnstable || cell.Class == report.ClassSame {
		t.Errorf("%s: class %q without a ratio", where, cell.Class)
	}
}

// signed says whether a cell must carry a better/worse mark.
func signed(cell report.Cell, base bool) bool {
	return !base && cell.Present && cell.Rel != nil && cell.Rel.Significant()
}

// checkMark checks one rendered cell: its text (plain or with colour escapes) carries ▲/▼
// or green/red exactly when the cell is signed, the same direction, and a cell without a
// verdict or unstable has neither colour nor any mark but ?.
func checkMark(t *testing.T, where string, cell report.Cell, base bool, text, colour string) {
	t.Helper()
	hasUp, hasDown := strings.Contains(text, markBetter), strings.Contains(text, markWorse)
	green, red := colour == ansiGreen, colour == ansiRed
	if signed(cell, base) {
		better := cell.Class == report.ClassBetter
		if colour == "" && (hasUp != better || hasDown == better) {
			t.Errorf("%s: %q: want %s", where, text, map[bool]string{true: markBetter, false: markWorse}[better])
		}
		if colour != "none" && colour != "" && (green != better || red == better) {
			t.Errorf("%s: %q coloured %q, want %s", where, text, colour, map[bool]string{true: "green", false: "red"}[better])
		}
		return
	}
	if hasUp || hasDown {
		t.Errorf("%s: %q marked without a verdict higher or lower (%+v)", where, text, cell.Rel)
	}
	if green || red && cell.Class != report.ClassSLAMiss {
		t.Errorf("%s: %q coloured %q without a verdict higher or lower", where, text, colour)
	}
	if cell.Rel != nil && (cell.Rel.Verdict == stats.VerdictNone || cell.Rel.Verdict == stats.VerdictUnstable) {
		if colour != "" && colour != "none" {
			t.Errorf("%s: %q coloured %q with verdict %q", where, text, colour, cell.Rel.Verdict)
		}
		if strings.Contains(text, " "+markSame) || strings.Contains(text, markSLAMiss) {
			t.Errorf("%s: %q marked with verdict %q", where, text, cell.Rel.Verdict)
		}
		if (cell.Rel.Verdict == stats.VerdictUnstable) != strings.Contains(text, markUnstable) {
			t.Errorf("%s: %q: ? iff unstable (verdict %q)", where, text, cell.Rel.Verdict)
		}
	}
}

var (
	cellSplit   = regexp.MustCompile(`\s{2,}`)
	ansiCode    = regexp.MustCompile("\x1b\\[[0-9;]*m")
	htmlTableRe = regexp.MustCompile(`(?s)<h2 id="([a-z_]+)">[^<]*</h2>\s*(?:<div class="scroll">\s*)?<table>(.*?)</table>`)
	htmlRowRe   = regexp.MustCompile(`(?s)<tr( class="base")?>(.*?)</tr>`)
	htmlCellRe  = regexp.MustCompile(`<td class="num( [a-z-]+)?"(?: title="[^"]*")?>([^<]*)</td>`)
)

// textBlocks maps a text report's table titles to their rows (tokens per cell, colour
// codes kept), header and legend left out.
func textBlocks(out string) map[string][][]string {
	blocks := map[string][][]string{}
	for _, block := range strings.Split(out, "\n\n")[1:] {
		lines := strings.Split(strings.TrimRight(block, "\n"), "\n")
		var rows [][]string
		for _, l := range lines[min(2, len(lines)):] {
			if strings.HasPrefix(l, "  ") {
				break
			}
			rows = append(rows, cellSplit.Split(l, -1))
		}
		blocks[lines[0]] = rows
	}
	return blocks
}

func colourOfText(tok string) string {
	for _, c := range []string{ansiGreen, ansiRed, ansiGrey} {
		if strings.HasPrefix(tok, c) {
			return c
		}
	}
	return ""
}

// checkText checks the text report with and without colour: every cell of every table is
// cellText of the model's cell, marked as its verdict says.
func checkText(t *testing.T, sc marksScenario, colour bool) {
	t.Helper()
	var buf bytes.Buffer
	if err := CompareText(&buf, sc.c, colour); err != nil {
		t.Fatal(err)
	}
	if !colour && strings.Contains(buf.String(), "\x1b[") {
		t.Errorf("%s: colour codes without colour", sc.name)
	}
	blocks := textBlocks(buf.String())
	for _, tb := range sc.c.Tables {
		if len(tb.Rows) == 0 {
			continue
		}
		rows, ok := blocks[tb.Title]
		if !ok || len(rows) != len(tb.Rows) {
			t.Fatalf("%s text colour=%v: table %q has %d rows, want %d", sc.name, colour, tb.Title, len(rows), len(tb.Rows))
		}
		for ri, r := range tb.Rows {
			toks := rows[ri][len(tb.HeadColumns):]
			if len(toks) != len(r.Cells) {
				t.Fatalf("%s text: %s row %v: %d cells %q, want %d", sc.name, tb.ID, r.Head, len(toks), toks, len(r.Cells))
			}
			for i, cell := range r.Cells {
				where := fmt.Sprintf("%s text colour=%v %s %v %s", sc.name, colour, tb.ID, r.Head, tb.Columns[i])
				plain := ansiCode.ReplaceAllString(toks[i], "")
				if want := cellText(cell, r.Shown(cell), !colour); plain != want {
					t.Errorf("%s: %q, want %q", where, plain, want)
				}
				c := ""
				if colour {
					c = colourOfText(toks[i])
				}
				checkMark(t, where, cell, r.Base, plain, c)
			}
		}
	}
}

func checkMarkdown(t *testing.T, sc marksScenario) {
	t.Helper()
	var buf bytes.Buffer
	if err := Markdown(&buf, sc.c); err != nil {
		t.Fatal(err)
	}
	blocks := map[string][][]string{}
	title := ""
	for _, l := range strings.Split(buf.String(), "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			title = strings.TrimPrefix(l, "## ")
		case strings.HasPrefix(l, "| ") && title != "":
			blocks[title] = append(blocks[title], strings.Split(strings.TrimSuffix(strings.TrimPrefix(l, "| "), " |"), " | "))
		}
	}
	for _, tb := range sc.c.Tables {
		if len(tb.Rows) == 0 {
			continue
		}
		rows := blocks[mdEscape(tb.Title)]
		if len(rows) != len(tb.Rows)+1 {
			t.Fatalf("%s md: table %q has %d lines, want %d", sc.name, tb.Title, len(rows), len(tb.Rows)+1)
		}
		for ri, r := range tb.Rows {
			toks := rows[ri+1][len(tb.HeadColumns):]
			for i, cell := range r.Cells {
				where := fmt.Sprintf("%s md %s %v %s", sc.name, tb.ID, r.Head, tb.Columns[i])
				if want := mdEscape(cellText(cell, r.Shown(cell), true)); toks[i] != want {
					t.Errorf("%s: %q, want %q", where, toks[i], want)
				}
				checkMark(t, where, cell, r.Base, toks[i], "")
			}
		}
	}
}

// checkCSV: the class column says better or worse only for signed cells, and the verdict
// column is the model's.
func checkCSV(t *testing.T, sc marksScenario, sep rune) {
	t.Helper()
	var buf bytes.Buffer
	if err := CSV(&buf, sc.c, sep); err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(&buf)
	r.Comma = sep
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string][]string{}
	for _, rec := range recs[1:] {
		byKey[rec[0]+"|"+rec[1]+"|"+rec[2]] = rec
	}
	for _, tb := range sc.c.Tables {
		for _, row := range tb.Rows {
			for i, cell := range row.Cells {
				where := fmt.Sprintf("%s csv(%q) %s %v %s", sc.name, sep, tb.ID, row.Head, tb.Columns[i])
				rec, ok := byKey[tb.ID+"|"+strings.Join(row.Head, " / ")+"|"+tb.Columns[i]]
				if ok != cell.Present {
					t.Errorf("%s: record %v, cell present %v", where, ok, cell.Present)
					continue
				}
				if !ok {
					continue
				}
				class, verdict := rec[13], rec[14]
				if (class == "better" || class == "worse") != signed(cell, false) {
					t.Errorf("%s: class %q, verdict %q", where, class, verdict)
				}
				if cell.Rel != nil && verdict != string(cell.Rel.Verdict) {
					t.Errorf("%s: verdict %q, want %q", where, verdict, cell.Rel.Verdict)
				}
			}
		}
	}
}

func checkJSON(t *testing.T, sc marksScenario) {
	t.Helper()
	var buf bytes.Buffer
	if err := JSON(&buf, sc.rep); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Comparison struct {
			Tables []struct {
				ID   string `json:"id"`
				Rows []struct {
					Cells []*struct {
						Class   string   `json:"class"`
						Verdict *string  `json:"verdict"`
						Unit    string   `json:"unit"`
						MDEPct  *float64 `json:"mde_pct"`
					} `json:"cells"`
				} `json:"rows"`
			} `json:"tables"`
			Notes []struct {
				Kind string `json:"kind"`
				Text string `json:"text"`
			} `json:"notes"`
		} `json:"comparison"`
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Comparison.Tables) != len(sc.c.Tables) || len(out.Comparison.Notes) != len(sc.c.Notes) {
		t.Fatalf("%s json: %d tables, %d notes", sc.name, len(out.Comparison.Tables), len(out.Comparison.Notes))
	}
	for ti, tb := range sc.c.Tables {
		for ri, row := range tb.Rows {
			for i, cell := range row.Cells {
				where := fmt.Sprintf("%s json %s %v %s", sc.name, tb.ID, row.Head, tb.Columns[i])
				jc := out.Comparison.Tables[ti].Rows[ri].Cells[i]
				if (jc != nil) != cell.Present {
					t.Errorf("%s: JSON cell %v, present %v", where, jc != nil, cell.Present)
					continue
				}
				if jc == nil {
					continue
				}
				if (jc.Class == "better" || jc.Class == "worse") != signed(cell, false) {
					t.Errorf("%s: class %q", where, jc.Class)
				}
				if cell.Rel != nil && (jc.Verdict == nil || *jc.Verdict != string(cell.Rel.Verdict)) {
					t.Errorf("%s: verdict %v, want %q", where, jc.Verdict, cell.Rel.Verdict)
				}
				if cell.Rel != nil && cell.Rel.HasMDE != (jc.MDEPct != nil) {
					t.Errorf("%s: mde_pct %v, HasMDE %v", where, jc.MDEPct, cell.Rel.HasMDE)
				}
			}
		}
	}
}

func checkHTML(t *testing.T, sc marksScenario) {
	t.Helper()
	var buf bytes.Buffer
	if err := HTML(&buf, sc.rep); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	found := map[string]string{}
	for _, m := range htmlTableRe.FindAllStringSubmatch(page, -1) {
		found[m[1]] = m[2]
	}
	for _, tb := range sc.c.Tables {
		if len(tb.Rows) == 0 {
			continue
		}
		rows := htmlRowRe.FindAllStringSubmatch(found[tb.ID], -1)
		if len(rows) != len(tb.Rows)+1 {
			t.Fatalf("%s html: table %s has %d rows, want %d", sc.name, tb.ID, len(rows), len(tb.Rows)+1)
		}
		for ri, r := range tb.Rows {
			cells := htmlCellRe.FindAllStringSubmatch(rows[ri+1][2], -1)
			if len(cells) != len(r.Cells) {
				t.Fatalf("%s html: %s row %v has %d cells, want %d", sc.name, tb.ID, r.Head, len(cells), len(r.Cells))
			}
			for i, cell := range r.Cells {
				where := fmt.Sprintf("%s html %s %v %s", sc.name, tb.ID, r.Head, tb.Columns[i])
				class, text := strings.TrimSpace(cells[i][1]), html.UnescapeString(cells[i][2])
				if want := cellText(cell, r.Shown(cell), false); text != want {
					t.Errorf("%s: %q, want %q", where, text, want)
				}
				if (class == "better" || class == "worse") != signed(cell, r.Base) {
					t.Errorf("%s: class %q (%+v)", where, class, cell.Rel)
				}
				colour := "none"
				switch class {
				case "better":
					colour = ansiGreen
				case "worse", "sla-miss":
					colour = ansiRed
				case "same", "target":
					colour = ansiGrey
				case "unstable", "":
					colour = ""
				}
				checkMark(t, where, cell, r.Base, text, colour)
			}
		}
	}
}

// TestMarksFollowVerdicts renders every scenario in every format and checks every cell.
func TestMarksFollowVerdicts(t *testing.T) {
	for _, sc := range marksScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			for _, tb := range sc.c.Tables {
				for _, r := range tb.Rows {
					for i, cell := range r.Cells {
						checkCellModel(t, fmt.Sprintf("%s %v %s", tb.ID, r.Head, tb.Columns[i]), cell)
					}
				}
			}
			checkText(t, sc, false)
			checkText(t, sc, true)
			checkMarkdown(t, sc)
			checkCSV(t, sc, ',')
			checkCSV(t, sc, '\t')
			checkJSON(t, sc)
			checkHTML(t, sc)
		})
	}
}

// verdicts counts the verdicts of the non-base cells of the relative tables.
func verdicts(c report.Comparison) map[stats.Verdict]int {
	out := map[stats.Verdict]int{}
	for _, tb := range c.Tables {
		if !slices.Contains(relTables, tb.ID) {
			continue
		}
		for _, r := range tb.Rows {
			for _, cell := range r.Cells {
				if cell.Rel != nil {
					out[cell.Rel.Verdict]++
				}
			}
		}
	}
	return out
}

func scenario(t *testing.T, name string) marksScenario {
	t.Helper()
	for _, sc := range marksScenarios() {
		if sc.name == name {
			return sc
		}
	}
	t.Fatalf("no scenario %s", name)
	return marksScenario{}
}

func renderAll(t *testing.T, sc marksScenario) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, render := range map[string]func(*bytes.Buffer) error{
		"text":   func(b *bytes.Buffer) error { return CompareText(b, sc.c, false) },
		"colour": func(b *bytes.Buffer) error { return CompareText(b, sc.c, true) },
		"md":     func(b *bytes.Buffer) error { return Markdown(b, sc.c) },
		"csv":    func(b *bytes.Buffer) error { return CSV(b, sc.c, ',') },
		"json":   func(b *bytes.Buffer) error { return JSON(b, sc.rep) },
		"html":   func(b *bytes.Buffer) error { return HTML(b, sc.rep) },
	} {
		var buf bytes.Buffer
		if err := render(&buf); err != nil {
			t.Fatal(err)
		}
		out[name] = buf.String()
	}
	return out
}

// tableText is a text report without its legend and note lines (which name the marks).
func tableText(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "_") && !strings.HasPrefix(l, "- ") &&
			!strings.Contains(l, `class="legend"`) && !strings.HasPrefix(l, "<li>") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// Identical configs: noise only, so no cell anywhere is better or worse.
func TestMarksAA(t *testing.T) {
	sc := scenario(t, "aa")
	v := verdicts(sc.c)
	if v[stats.VerdictHigher]+v[stats.VerdictLower] > 0 || v[stats.VerdictSame] == 0 {
		t.Errorf("A/A verdicts %v: want none higher or lower, some the same", v)
	}
	for name, out := range renderAll(t, sc) {
		tt := tableText(out)
		for _, bad := range []string{markBetter, markWorse, ansiGreen, ansiRed, `"better"`, `"worse"`, "num better", "num worse", ",better,", ",worse,"} {
			if strings.Contains(tt, bad) {
				t.Errorf("A/A %s shows %q", name, bad)
			}
		}
	}
	// sysbench's delete at a tiny scale: 86,662 DELETEs, 9,997 rows deleted.
	var note *report.Note
	for i, n := range sc.c.Notes {
		if n.Kind == report.NoteNoOpWrites {
			note = &sc.c.Notes[i]
		}
	}
	if note == nil || note.Label != "delete" || math.Abs(note.SharePct-88.46) > 0.01 ||
		!strings.Contains(note.Text, "delete: at least 88% of the DELETEs (label delete) affected no row") {
		t.Errorf("no-op note: %+v", note)
	}
	for name, out := range renderAll(t, sc) {
		if !strings.Contains(out, "affected no row") {
			t.Errorf("%s has no no-op note", name)
		}
	}
}

// A 20% effect over 8 paired trials: better, in every format.
func TestMarksEffect(t *testing.T) {
	sc := scenario(t, "effect")
	for _, col := range []string{"l.i0", "qp100"} {
		cell := reporttest.CellAt(t, sc.c, "relative", []string{"fast"}, col)
		if cell.Rel == nil || !cell.Rel.Paired || cell.Rel.Pairs != 8 || cell.Rel.Verdict != stats.VerdictHigher ||
			cell.Class != report.ClassBetter || math.Abs(cell.Median-1.2) > 0.01 || !cell.Rel.HasMDE {
			t.Errorf("fast %s: %+v %+v", col, cell.Summary, cell.Rel)
		}
	}
	// The one-op l.x took twice as long: worse (lower is better), but not in the geomean.
	if cell := reporttest.CellAt(t, sc.c, "relative", []string{"fast"}, "l.x"); cell.Unit != "ratio" || cell.Class != report.ClassWorse ||
		math.Abs(cell.Median-2) > 0.05 {
		t.Errorf("fast l.x: %+v class %s", cell.Summary, cell.Class)
	}
	for _, col := range []string{"write (l.*)", "all"} {
		if g := reporttest.CellAt(t, sc.c, "geomean", []string{"fast"}, col); math.Abs(g.Median-1.2) > 0.01 || g.Class != report.ClassBetter {
			t.Errorf("fast geomean %s = %+v class %s (one-op steps must be left out)", col, g.Summary, g.Class)
		}
	}
	// The busy run's qp100: noted, and the step's interval widened by its 13% (the base's
	// share was not measured, so the busy config's largest is taken).
	if w := sc.c.Widen("qp100"); math.Abs(w-0.13) > 1e-9 {
		t.Errorf("qp100 widen = %v, want 0.13", w)
	}
	qp, li := reporttest.CellAt(t, sc.c, "relative", []string{"fast"}, "qp100"), reporttest.CellAt(t, sc.c, "relative", []string{"fast"}, "l.i0")
	if qp.Rel.Hi/qp.Rel.Lo < 1.13*1.13 || li.Rel.Hi/li.Rel.Lo > 1.1 {
		t.Errorf("qp100 interval %v–%v not widened (l.i0 %v–%v)", qp.Rel.Lo, qp.Rel.Hi, li.Rel.Lo, li.Rel.Hi)
	}
	// Sizes are not disturbed by a busy CPU: not widened.
	if db := reporttest.CellAt(t, sc.c, "hw_relative", []string{metrics.MetricDBGB, "fast"}, "qp100"); db.Rel == nil || db.Rel.Verdict != stats.VerdictSame {
		t.Errorf("fast qp100 dbgb: %+v", db.Rel)
	}
	busy := false
	for _, n := range sc.c.Notes {
		busy = busy || n.Kind == report.NoteBusy && strings.HasPrefix(n.Text, "qp100: other processes and steal took over 10% of the CPU: 13% in run 203 (fast); the intervals of its throughput and CPU ratios are widened by 13% (how much more of the CPU one config's runs lost")
	}
	if !busy {
		t.Errorf("no busy note: %+v", sc.c.Notes)
	}
	out := renderAll(t, sc)
	for name, want := range map[string]string{"text": markBetter, "colour": ansiGreen, "md": markBetter, "csv": ",better,",
		"json": `"class": "better"`, "html": `class="num better"`} {
		shown := out[name]
		if name == "text" || name == "colour" || name == "md" {
			shown = tableText(shown) // their legends name the marks
		}
		if !strings.Contains(shown, want) {
			t.Errorf("%s shows no %q", name, want)
		}
	}
	if !strings.Contains(out["text"], "smallest change these trials can detect (80% power), fast: l.i0 ") {
		t.Errorf("text has no MDE line:\n%s", out["text"])
	}
	if !strings.Contains(out["html"], "smallest detectable change") || !strings.Contains(out["csv"], "mde_pct") {
		t.Error("no MDE in the HTML titles or the CSV")
	}
}

// A small difference in big noise: unstable, marked ? and never better or worse.
func TestMarksNoisy(t *testing.T) {
	sc := scenario(t, "noisy")
	for _, col := range []string{"l.i0", "qp100"} {
		cell := reporttest.CellAt(t, sc.c, "relative", []string{"noisy"}, col)
		if cell.Rel == nil || cell.Rel.Paired || cell.Rel.Verdict != stats.VerdictUnstable || cell.Class != report.ClassUnstable {
			t.Errorf("noisy %s: %+v %+v", col, cell.Summary, cell.Rel)
		}
	}
	if v := verdicts(sc.c); v[stats.VerdictHigher]+v[stats.VerdictLower] > 0 {
		t.Errorf("noisy verdicts %v", v)
	}
	out := renderAll(t, sc)
	if !strings.Contains(tableText(out["text"]), " "+markUnstable) || !strings.Contains(out["html"], `class="num unstable"`) {
		t.Error("unstable cells not marked ?")
	}
}

// One run per config: ratios without any verdict or mark, and a line saying what a verdict needs.
func TestMarksOneRun(t *testing.T) {
	sc := scenario(t, "n1")
	v := verdicts(sc.c)
	if len(v) != 1 || v[stats.VerdictNone] == 0 || !sc.c.TooFew {
		t.Errorf("n=1 verdicts %v, TooFew %v", v, sc.c.TooFew)
	}
	if cell := reporttest.CellAt(t, sc.c, "relative", []string{"one"}, "l.i0"); math.Abs(cell.Median-1.2) > 0.01 || cell.Class != report.ClassNone {
		t.Errorf("one l.i0: %+v class %q", cell.Summary, cell.Class)
	}
	if g := reporttest.CellAt(t, sc.c, "geomean", []string{"one"}, "all"); math.Abs(g.Median-1.2) > 0.01 || g.Class != report.ClassNone || g.Rel.HasCI {
		t.Errorf("one geomean: %+v class %q", g.Summary, g.Class)
	}
	for name, out := range renderAll(t, sc) {
		bads := []string{markBetter, markWorse, " " + markSame, " " + markUnstable, "\x1b["}
		switch name {
		case "html":
			bads = []string{"num better", "num worse", "num same", "num unstable"}
		case "json":
			bads = []string{`"class": "better"`, `"class": "worse"`, `"class": "same"`, `"class": "unstable"`}
		case "csv":
			bads = []string{",better,", ",worse,", ",same,", ",unstable,"}
		}
		for _, bad := range bads {
			if strings.Contains(tableText(out), bad) || name == "json" && strings.Contains(out, bad) {
				t.Errorf("n=1 %s shows %q", name, bad)
			}
		}
		if !strings.Contains(out, "no verdict (no mark, no colour) where a config has fewer than 4 trials, or 6 pairs") {
			t.Errorf("n=1 %s does not say how many trials a verdict needs", name)
		}
	}
}

// One-op steps (the cleanup, l.x's index build): their duration and CPU seconds, never a
// per-op figure; out of the latency table and every geomean; a note says so.
func TestMarksOneOpSteps(t *testing.T) {
	for _, sc := range marksScenarios() {
		c := sc.c
		if !c.IsOneOp("l.x") || !c.IsOneOp("cleanup") || c.IsOneOp("l.i0") || c.IsOneOp("qp100") {
			t.Fatalf("%s: one-op steps %v", sc.name, c.OneOpSteps())
		}
		for _, tb := range c.Tables {
			for _, r := range tb.Rows {
				for i, cell := range r.Cells {
					col := tb.Columns[i]
					if !cell.Present || !c.IsOneOp(col) {
						continue
					}
					switch {
					case tb.ID == "throughput" && cell.Unit != "s":
						t.Errorf("%s %s %v: throughput of a one-op step in %q", sc.name, col, r.Head, cell.Unit)
					case (tb.ID == "hw" || tb.ID == "hw_relative" || tb.ID == "kv" || tb.ID == "kv_relative") && report.PerOpMetric(r.Head[0]):
						t.Errorf("%s %s: per-op %s %v", sc.name, col, tb.ID, r.Head)
					}
				}
				if tb.ID == "latency" && c.IsOneOp(r.Head[0]) {
					t.Errorf("%s: latency of one-op step %v", sc.name, r.Head)
				}
			}
		}
		if cell := reporttest.CellAt(t, c, "hw", []string{"server_cpu_s", "a"}, "cleanup"); !cell.Present || cell.Unit != "s" || math.Abs(cell.Median-0.21) > 1e-9 {
			t.Errorf("%s: cleanup server CPU seconds %+v", sc.name, cell)
		}
		if cell := reporttest.CellAt(t, c, "hw", []string{metrics.MetricCPUPerOp, "a"}, "l.x"); cell.Present {
			t.Errorf("%s: l.x cpupq %+v", sc.name, cell)
		}
		one := false
		for _, n := range c.Notes {
			one = one || n.Kind == report.NoteOneOp && n.Text == "l.x, cleanup: one operation each; shown as duration and CPU seconds, left out of geomeans and the latency table"
		}
		if !one {
			t.Errorf("%s: no one-op note in %+v", sc.name, c.Notes)
		}
		// The per-op rates stored for them (cpupq of a one-op step is its whole CPU in µs)
		// appear in no format.
		for name, out := range renderAll(t, sc) {
			for _, r := range sc.rep.Runs {
				for _, s := range r.Steps {
					if !c.IsOneOp(s.Name) {
						continue
					}
					for _, m := range []string{metrics.MetricCPUPerOp, metrics.MetricServerCPUPerOp} {
						v := s.HW.Metrics[m]
						if name == "json" {
							continue // the runs' own stored metrics are in the JSON's runs
						}
						if strings.Contains(out, report.FormatNum(v)) && v > 1000 {
							t.Errorf("%s %s: %s's %s %s shown", sc.name, name, s.Name, m, report.FormatNum(v))
						}
					}
				}
			}
		}
	}
}

// A busy step in a report of one config has no ratio to widen, and configs that lost as
// much CPU as each other get no "widened by 0.0%" (issue 42: a single-run report listed it
// for 41 steps).
func TestBusyNoteWithoutWidening(t *testing.T) {
	busy := func(_ int, sp *marksSpec) { sp.otherCPUPct = 12 }
	for _, tc := range []struct {
		name    string
		configs [][]marksSpec
		want    string
	}{
		{"one config", [][]marksSpec{marksConfig(1, "a", 1, 1, jitters, 3, false, busy)}, ""},
		{"both alike", [][]marksSpec{marksConfig(1, "a", 8, 1, jitters, 3, true, busy), marksConfig(101, "b", 8, 1, jitters, 3, true, busy)},
			"not widened: the configs' runs lost about as much"},
	} {
		_, c := marksComparison(tc.configs...)
		found := false
		for _, n := range c.Notes {
			if n.Kind != report.NoteBusy {
				continue
			}
			found = true
			if strings.Contains(n.Text, "widened by") || tc.want != "" && !strings.Contains(n.Text, tc.want) {
				t.Errorf("%s: %q", tc.name, n.Text)
			}
		}
		if !found {
			t.Errorf("%s: no busy note in %+v", tc.name, c.Notes)
		}
	}
}
