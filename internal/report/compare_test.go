package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dbperf/dbperf/internal/browsertest"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/stats"
	"github.com/dbperf/dbperf/internal/store"
)

// repeatRun is a stored run of a config whose speed is factor× the fixture's: an l.i0
// load and a qp100 read-write step (its delete writer at deleteRate of 100/s) with HW
// figures; jitter varies the repeats.
func repeatRun(id int64, label string, factor, jitter, deleteRate float64) store.Run {
	f := factor * (1 + jitter)
	load := withHW(metrics.StepResult{
		Name: "l.i0", Status: metrics.StatusOK, StartedAt: fixtureStart, Seconds: 2 / f, Kind: "load", Primary: "insert",
		Labels: []metrics.LabelStats{rowsLabel("insert", 100000, 0)}, Audit: metrics.Audit{Status: "ok"}, ClientCPUSec: 0.8,
	}, fixtureHW(2.6/f, 1.5/f, 0.8, 51200), metrics.ConnCPU{Role: "insert", Sessions: 1, CPUSec: 1.25 / f})
	qp := withHW(metrics.StepResult{
		Name: "qp100", Status: metrics.StatusOK, StartedAt: fixtureStart, Seconds: 5, Kind: "read-write", Primary: "point-query",
		Labels: []metrics.LabelStats{queryLabel(int64(25000 * f)), rowsLabel("insert", 500, 100), rowsLabel("delete", int64(5*deleteRate), 100)},
		Audit:  metrics.Audit{Status: "ok"}, ClientCPUSec: 0.5,
	}, fixtureHW(6, 4.4, 0.5, 2048),
		metrics.ConnCPU{Role: "query", Sessions: 1, CPUSec: 3.1}, metrics.ConnCPU{Role: "insert", Sessions: 1, CPUSec: 0.1})
	var ivs []metrics.Interval
	for i := range 5 {
		iv := rwIntervals(100, 0, [3]int64{int64(5000 * f), 100, int64(deleteRate)})[0]
		iv.Seq, iv.Start, iv.End = i, sec(float64(i)), sec(float64(i+1))
		iv.Labels[0].Service.P99 = int64(400 + 30*i)
		iv.HW = fixtureHW(1.2, 0.9, 0.1, 400)
		ivs = append(ivs, iv)
	}
	return store.Run{ID: id,
		RunMeta: store.RunMeta{Workload: "insertbench", WorkloadVersion: 3, Engine: "postgres", EngineVersion: "16.4",
			Label: label, Seed: 1, StartedAt: fixtureStart.Add(time.Duration(id) * time.Minute), StepGroups: ibGroups(),
			Env: map[string]string{"server_processes": "managed server: pid 4242 and its children", "io_devices": "nvme0n1"}},
		Status: store.RunOK, FinishedAt: fixtureStart.Add(time.Duration(id)*time.Minute + 30*time.Second),
		Steps: []store.Step{
			{ID: id*10 + 1, Seq: 0, Group: "write", Result: load, Intervals: []metrics.Interval{
				{Seq: 0, Start: 0, End: sec(2 / f), Labels: []metrics.LabelStats{rowsLabel("insert", 100000, 0)}, ClientCPUSec: 0.8}}},
			{ID: id*10 + 2, Seq: 1, Group: "point", Result: qp, Intervals: ivs},
		},
	}
}

// compareFixture: config a (base, 4 repeats), config b (4 repeats, ~20% faster, its
// delete writer misses the SLA) and one run of another workload (steps are the union).
func compareFixture() (Report, []Group) {
	jit := []float64{-0.01, 0, 0.012, 0.004}
	var runs []store.Run
	a, b := Group{Name: "a"}, Group{Name: "b"}
	for i, j := range jit {
		ra := repeatRun(int64(1+i), "a", 1, j, 100)
		rb := repeatRun(int64(11+i), "b", 1.2, -j, 90)
		runs = append(runs, ra, rb)
		a.RunIDs, b.RunIDs = append(a.RunIDs, ra.ID), append(b.RunIDs, rb.ID)
	}
	other := repeatRun(21, "", 0.9, 0, 100)
	other.Workload = "sysbench"
	other.Steps[1].Result.Name = "point-select"
	other.Steps = append(other.Steps, store.Step{ID: 299, Seq: 2, Result: metrics.StepResult{Name: "cleanup",
		Status: metrics.StatusOK, Seconds: 10, Kind: "cleanup", Primary: "cleanup",
		Labels: []metrics.LabelStats{{Label: "cleanup", Role: "cleanup", Unit: metrics.UnitOps, Statements: 1}}}})
	runs = append(runs, other)
	rep := Build(runs)
	rep.Location = time.UTC
	return rep, []Group{a, b, {Name: "run 21", RunIDs: []int64{21}}}
}

func compared(t *testing.T) (Report, Comparison) {
	t.Helper()
	rep, groups := compareFixture()
	c := Compare(rep, groups, 0)
	rep.Comparison = &c
	return rep, c
}

func cellAt(t *testing.T, c Comparison, table string, head []string, column string) Cell {
	t.Helper()
	tb := tableByID(c, table)
	if tb == nil {
		t.Fatalf("no table %s", table)
	}
	col := -1
	for i, name := range tb.Columns {
		if name == column {
			col = i
		}
	}
	for _, r := range tb.Rows {
		if strings.Join(r.Head, "/") == strings.Join(head, "/") && col >= 0 {
			return r.Cells[col]
		}
	}
	t.Fatalf("table %s has no cell %v / %s", table, head, column)
	return Cell{}
}

func TestCompareTables(t *testing.T) {
	_, c := compared(t)
	if strings.Join(c.Steps, ",") != "l.i0,qp100,point-select,cleanup" {
		t.Errorf("steps = %v, want the union in run order", c.Steps)
	}
	if !c.IsOneOp("cleanup") || c.IsOneOp("qp100") {
		t.Errorf("one-op steps: %v", c.oneOpSteps())
	}
	// Absolute: medians of the repeats, min and max, n.
	abs := cellAt(t, c, "throughput", []string{"a"}, "l.i0")
	if abs.N != 4 || math.Abs(abs.Median-50000*1.002) > 1 || abs.Min >= abs.Max || abs.Noisy {
		t.Errorf("a l.i0 = %+v", abs.Summary)
	}
	// Relative: b is 1.2× a, significant with 4 vs 4 separated runs; better.
	rel := cellAt(t, c, "relative", []string{"b"}, "qp100")
	if rel.Rel == nil || math.Abs(rel.Median-1.2) > 0.02 || rel.Rel.Verdict != stats.VerdictHigher || rel.Class != ClassBetter {
		t.Errorf("b qp100 relative = %+v %+v", rel.Summary, rel.Rel)
	}
	// A single run against 4: a ratio without a verdict, and no mark; said so in a note.
	one := cellAt(t, c, "relative", []string{"run 21"}, "l.i0")
	if one.Rel == nil || one.Rel.Verdict != stats.VerdictNone || one.Rel.HasCI || one.Class != ClassNone || !c.TooFew ||
		math.Abs(one.Median-0.9) > 0.01 {
		t.Errorf("run 21 relative = %+v %+v", one.Summary, one.Rel)
	}
	if cell := cellAt(t, c, "relative", []string{"a"}, "point-select"); cell.Present {
		t.Errorf("a has no point-select step but a relative cell %+v", cell)
	}
	// Geomean of write steps (l.i0 only) = its ratio.
	if g := cellAt(t, c, "geomean", []string{"b"}, "write (l.*)"); math.Abs(g.Median-1.2) > 0.02 {
		t.Errorf("b write geomean = %v", g.Median)
	}
	// Background: b's delete misses its SLA, the target row holds 100.
	if bg := cellAt(t, c, "background", []string{"b"}, "qp100 delete"); bg.Class != ClassSLAMiss || bg.Median != 90 {
		t.Errorf("b delete = %+v class %s", bg.Summary, bg.Class)
	}
	if tg := cellAt(t, c, "background", []string{"target"}, "qp100 insert"); tg.Median != 100 || tg.Class != ClassTarget {
		t.Errorf("target = %+v", tg)
	}
	// HW relative: lower is better, so b's smaller cpupq in l.i0 is better.
	if hw := cellAt(t, c, "hw_relative", []string{"cpupq", "b"}, "l.i0"); hw.Class != ClassBetter || hw.Median >= 0.9 {
		t.Errorf("b cpupq relative = %+v class %s", hw.Summary, hw.Class)
	}
	if cc := cellAt(t, c, "conn_cpu", []string{"query", "a"}, "qp100"); cc.Median != 3.1 {
		t.Errorf("conn cpu = %+v", cc.Summary)
	}
	if lat := cellAt(t, c, "latency", []string{"qp100", "point-query", "a"}, "p99"); lat.Median != 410 {
		t.Errorf("latency = %+v", lat.Summary)
	}
}

func TestCompareRenderersGolden(t *testing.T) {
	rep, c := compared(t)
	for _, tc := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"compare.txt.golden", func(b *bytes.Buffer) error { return RenderCompareText(b, c, false) }},
		{"compare-colour.txt.golden", func(b *bytes.Buffer) error { return RenderCompareText(b, c, true) }},
		{"compare.md.golden", func(b *bytes.Buffer) error { return RenderMarkdown(b, c) }},
		{"compare.csv.golden", func(b *bytes.Buffer) error { return RenderCSV(b, c, ',') }},
		{"compare.tsv.golden", func(b *bytes.Buffer) error { return RenderCSV(b, c, '\t') }},
		{"compare.json.golden", func(b *bytes.Buffer) error { return RenderJSON(b, rep) }},
		{"compare.html.golden", func(b *bytes.Buffer) error { return RenderHTML(b, rep) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.render(&buf); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, buf.Bytes())
		})
	}
}

func TestCompareTextMarkers(t *testing.T) {
	_, c := compared(t)
	var plain, colour bytes.Buffer
	if err := RenderCompareText(&plain, c, false); err != nil {
		t.Fatal(err)
	}
	if err := RenderCompareText(&colour, c, true); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("colour codes without colour")
	}
	for _, want := range []string{"▲", "✗", "=", "[", "no verdict (no mark, no colour) where a config has fewer than 4 trials"} {
		if !strings.Contains(plain.String(), want) {
			t.Errorf("plain text has no %q", want)
		}
	}
	tableLines := func(s string) string { // without the legends and notes (which name the markers)
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "  ") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if col := tableLines(colour.String()); !strings.Contains(col, ansiGreen) || !strings.Contains(col, ansiRed) || strings.Contains(col, "▲") {
		t.Error("colour text: want green and red cells and no ▲ markers")
	}
	// Columns stay aligned with colour codes: with the codes stripped, every row of a table
	// (value columns are right-aligned) is as wide as its header.
	strip := strings.NewReplacer(ansiGreen, "", ansiRed, "", ansiGrey, "", ansiReset, "")
	blocks := strings.Split(strip.Replace(colour.String()), "\n\n")[1:]
	for _, block := range blocks {
		lines := strings.Split(block, "\n")[1:] // after the title
		var width int
		for _, l := range lines {
			if l == "" || strings.HasPrefix(l, "  ") { // legend
				continue
			}
			if n := utf8.RuneCountInString(l); width == 0 {
				width = n
			} else if n != width {
				t.Errorf("misaligned row (%d columns wide, header %d): %q", n, width, l)
			}
		}
	}
}

func TestCompareJSONAndCSV(t *testing.T) {
	rep, _ := compared(t)
	var buf bytes.Buffer
	if err := RenderJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Comparison struct {
			Base   string `json:"base"`
			Tables []struct {
				ID   string `json:"id"`
				Rows []struct {
					Head  []string `json:"head"`
					Cells []*struct {
						Value       float64  `json:"value"`
						Verdict     *string  `json:"verdict"`
						CILo        *float64 `json:"ci_lo"`
						MDEPct      *float64 `json:"mde_pct"`
						Significant *bool    `json:"significant"`
					} `json:"cells"`
				} `json:"rows"`
			} `json:"tables"`
		} `json:"comparison"`
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Comparison.Base != "a" || len(out.Comparison.Tables) != 9 {
		t.Fatalf("comparison: base %q, %d tables", out.Comparison.Base, len(out.Comparison.Tables))
	}
	rel := out.Comparison.Tables[1]
	if rel.ID != "relative" || rel.Rows[1].Cells[1] == nil || rel.Rows[1].Cells[1].Verdict == nil || *rel.Rows[1].Cells[1].Verdict != "higher" ||
		rel.Rows[1].Cells[1].CILo == nil || rel.Rows[1].Cells[1].MDEPct == nil ||
		!*rel.Rows[1].Cells[1].Significant || rel.Rows[0].Cells[2] != nil {
		t.Errorf("relative table JSON: %+v", rel.Rows)
	}

	_, c := compared(t)
	buf.Reset()
	if err := RenderCSV(&buf, c, ','); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err) // also when a line has another number of fields than the header
	}
	if strings.Join(recs[0], ",") != strings.Join(CSVHeader(), ",") {
		t.Errorf("header %q", recs[0])
	}
	if last := recs[len(recs)-1]; last[0] != "notes" || last[len(last)-1] == "" {
		t.Errorf("last CSV row %q: want a note", last)
	}
}

// TestHTMLInChromium opens the HTML report in headless Chromium: no console errors, no
// request beyond the file itself, charts rendered as SVG; the screenshot is kept in the
// test's temp dir (and in $DBPERF_SCREENSHOT_DIR when set).
func TestHTMLInChromium(t *testing.T) {
	rep, _ := compared(t)
	var buf bytes.Buffer
	if err := RenderHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	for _, scheme := range []string{"http://", "https://"} {
		if strings.Contains(buf.String(), scheme) {
			t.Errorf("the page references %s", scheme)
		}
	}
	if browsertest.Chromium() == "" {
		t.Skip("chromium not installed: make test installs it (as root)")
	}
	dir, err := os.MkdirTemp("/tmp", "dbperf-html-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := browsertest.Open(ctx, page, shot)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ConsoleErrors) > 0 || len(res.Requests) > 0 {
		t.Errorf("console errors %q, requests %q", res.ConsoleErrors, res.Requests)
	}
	if res.SVGCount < 5 || res.Title != "dbperf report" {
		t.Errorf("%d SVG charts rendered, title %q", res.SVGCount, res.Title)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 10000 {
		t.Errorf("screenshot %s: %v", shot, err)
	}
	if keep := os.Getenv("DBPERF_SCREENSHOT_DIR"); keep != "" {
		png, _ := os.ReadFile(shot)
		_ = os.WriteFile(filepath.Join(keep, "report.png"), png, 0o644)
	}
}

// The by-group table lists each group's steps under the group's title in the order the
// runs stored the groups, then the group's geomean; steps of no group are left out.
func TestByGroupTable(t *testing.T) {
	_, c := compared(t)
	var bg *Table
	for i := range c.Tables {
		if c.Tables[i].ID == "by_group" {
			bg = &c.Tables[i]
		}
	}
	if bg == nil {
		t.Fatal("no by_group table")
	}
	var heads []string
	for _, r := range bg.Rows {
		heads = append(heads, strings.Join(r.Head, "/"))
	}
	want := []string{"write (l.*)/l.i0", "write (l.*)/geomean", "point (qp*)/qp100", "point (qp*)/point-select", "point (qp*)/geomean"}
	if !slices.Equal(heads, want) {
		t.Fatalf("rows %q, want %q", heads, want)
	}
	// b is 1.2× a; the base column is exactly 1.
	if cell := bg.Rows[0].Cells[1]; !cell.Present || math.Abs(cell.Median-1.2) > 0.02 || cell.Class != ClassBetter {
		t.Errorf("b l.i0: %+v", cell)
	}
	if cell := bg.Rows[1].Cells[0]; !cell.Present || cell.Median != 1 {
		t.Errorf("a geomean: %+v", cell)
	}
}

// One config (the repeats of one label) gets no relative tables: they would be all 1.00.
func TestCompareOneConfigHasNoRelativeTables(t *testing.T) {
	rep, groups := compareFixture()
	c := Compare(rep, groups[:1], 0)
	for _, tb := range c.Tables {
		switch tb.ID {
		case "relative", "geomean", "by_group", "hw_relative":
			t.Errorf("one config has a %s table", tb.ID)
		}
	}
	if len(c.Tables) == 0 || c.Tables[0].ID != "throughput" {
		t.Errorf("tables: %+v", c.Tables)
	}
}
