package render

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
	"github.com/dbperf/dbperf/internal/store"
)

// hostile are labels a shared store may hold (issue 23): a newline forging a row of
// `dbperf runs`, terminal escape sequences, a 100 KB label.
var hostile = []string{"x\n99      2026-01-01 00:00:00  insertbench  sqlite  3.45  FAKE  ok  1",
	"\x1b]0;pwned\x07\x1b[2J\x1b[31mred", strings.Repeat("L", 100_000)}

func noRawControls(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range out {
		if r != '\n' && (r < 0x20 || r == 0x7f) && !(r == 0x1b && strings.Contains(what, "colour")) {
			t.Errorf("%s: a raw control character %q reached the output", what, r)
			return
		}
	}
	if strings.Contains(out, "FAKE  ok") && strings.Contains(out, "\n99 ") {
		t.Errorf("%s: a label forged a line:\n%s", what, out)
	}
}

// TestRunsListHostileLabels: `dbperf runs` shows one line per run whatever the labels hold,
// no line wider than the clipped label allows.
func TestRunsListHostileLabels(t *testing.T) {
	var sums []store.RunSummary
	for i, l := range append([]string{"plain"}, hostile...) {
		sums = append(sums, store.RunSummary{ID: int64(i + 1), StartedAt: reporttest.Start, Workload: "insertbench", Engine: "sqlite",
			EngineVersion: "3.45", Label: l, Status: store.RunOK, Steps: 1})
	}
	var buf bytes.Buffer
	if err := renderRuns(&buf, sums, time.UTC); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	noRawControls(t, "runs", out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(sums)+1 {
		t.Fatalf("%d lines for %d runs and a header:\n%s", len(lines), len(sums), out)
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("line %d is %d runes wide: %.200q", i, n, l)
		}
		if i > 0 && !strings.HasPrefix(l, string(rune('0'+i))+" ") {
			t.Errorf("line %d does not start with its run id: %.100q", i, l)
		}
	}
	if !strings.Contains(out, `x\n99`) || !strings.Contains(out, strings.Repeat("L", LabelWidth-1)+"…") {
		t.Errorf("labels not shown escaped and clipped:\n%.2000s", out)
	}
}

// TestTextReportsHostileLabels: the single-run report's header, the comparison (text,
// colour, Markdown), compare's tables and the history text show labels escaped.
func TestTextReportsHostileLabels(t *testing.T) {
	rep, groups := reporttest.CompareFixture()
	for i := range rep.Runs {
		rep.Runs[i].Label = hostile[0] + hostile[1]
	}
	groups[0].Name, groups[1].Name = hostile[0], hostile[1]
	one := rep
	one.Runs = rep.Runs[:1]
	var buf bytes.Buffer
	if err := Text(&buf, one); err != nil {
		t.Fatal(err)
	}
	noRawControls(t, "report RUN", buf.String())
	if !strings.Contains(buf.String(), `label x\n99`) {
		t.Errorf("the header does not show the label escaped:\n%s", buf.String())
	}
	c := report.Compare(rep, groups, 0)
	for name, render := range map[string]func(*bytes.Buffer) error{
		"compare text":   func(b *bytes.Buffer) error { return CompareText(b, c, false) },
		"compare colour": func(b *bytes.Buffer) error { return CompareText(b, c, true) },
		"markdown":       func(b *bytes.Buffer) error { return Markdown(b, c) },
		"bench": func(b *bytes.Buffer) error {
			bt, err := report.CompareBench(rep, groups, 0, report.MetricThroughput)
			if err != nil {
				return err
			}
			return Bench(b, []report.BenchTable{bt})
		},
		"history": func(b *bytes.Buffer) error {
			return HistoryText(b, report.History{Order: report.OrderTime, Series: []report.HistorySeries{{Title: "insertbench\x1b[2J",
				Runs:  []report.HistoryRun{{ID: 1, X: "16\nFAKE"}},
				Lines: []report.HistoryLine{{Step: "l.i0\x1b", Metric: "throughput", Values: []float64{1}}}}}})
		},
	} {
		buf.Reset()
		if err := render(&buf); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		noRawControls(t, name, buf.String())
		if strings.Contains(buf.String(), "\nFAKE") || strings.Contains(buf.String(), "\x1b]0;") || strings.Contains(buf.String(), "\x1b[2J") {
			t.Errorf("%s: a label reached the output raw:\n%.3000s", name, buf.String())
		}
	}
}

// TestCSVNeutralisesFormulas: a text cell a spreadsheet would run as a formula gets a
// leading quote (OWASP); numbers, negative ones included, stay numbers.
func TestCSVNeutralisesFormulas(t *testing.T) {
	for in, want := range map[string]string{
		`=HYPERLINK("http://x","y")`: `'=HYPERLINK("http://x","y")`,
		"+cmd|' /C calc'!A0":         "'+cmd|' /C calc'!A0",
		"-2+3+cmd|x":                 "'-2+3+cmd|x",
		"@SUM(A1)":                   "'@SUM(A1)",
		"\t=1":                       "'\t=1",
		"\r=1":                       "'\r=1",
		"-3.5":                       "-3.5",
		"+1e-9":                      "+1e-9",
		"-Inf":                       "-Inf",
		"a=b":                        "a=b",
		"":                           "",
	} {
		if got := csvCell(in); got != want {
			t.Errorf("csvCell(%q) = %q, want %q", in, got, want)
		}
	}
	rep, groups := reporttest.CompareFixture()
	groups[0].Name = `=HYPERLINK("http://evil/","click")`
	groups[1].Name = "-b"
	c := report.Compare(rep, groups, 0)
	var buf bytes.Buffer
	if err := CSV(&buf, c, ','); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var negatives, labelled int
	for _, rec := range recs[1:] {
		for _, cell := range rec {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				if _, err := strconv.ParseFloat(cell, 64); err != nil {
					t.Errorf("a formula cell reached the CSV: %q in %q", cell, rec)
				}
				negatives++
			}
			if strings.HasPrefix(cell, `'=HYPERLINK`) || cell == "'-b" {
				labelled++
			}
		}
	}
	if labelled == 0 {
		t.Error("no neutralised label in the CSV")
	}
	if negatives == 0 {
		t.Log("no negative number in the fixture's CSV (nothing to check that numbers stay numbers)")
	}
}
