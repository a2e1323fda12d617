package render

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
)

// section is the lines of out from the line title to the first legend line (indented)
// or the next table's title, in its blocks (split at blank lines).
func section(t *testing.T, out, title string) [][]string {
	t.Helper()
	lines := strings.Split(out, "\n")
	i := slices.Index(lines, title)
	if i < 0 {
		t.Fatalf("no table %q in:\n%s", title, out)
	}
	blocks := [][]string{nil}
	for _, l := range lines[i+1:] {
		switch {
		case strings.HasPrefix(l, "  "):
			return blocks
		case l == "":
			blocks = append(blocks, nil)
		case len(blocks[len(blocks)-1]) == 0 && len(blocks) > 1 && !strings.HasPrefix(l, "config"):
			return blocks[:len(blocks)-1] // the next table's title
		default:
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], l)
		}
	}
	return blocks
}

// TestTextFitsColumns (issue 42): the text comparison of a 41-step sysbench suite, on a
// writer 100 and 80 runes wide, has no longer line; its tables go in blocks of steps,
// each block under its own header with the config column, every step in exactly one
// block with each config's value; the benchstat view and a run's report fit too. Without
// a width the comparison's lines run to over a thousand runes.
func TestTextFitsColumns(t *testing.T) {
	t.Parallel()
	steps := reporttest.SysbenchSteps()
	rep, groups := reporttest.ManyStepsFixture(steps)
	c := report.Compare(rep, groups, 0)
	bt, err := report.CompareBench(rep, groups, 0, report.MetricThroughput)
	if err != nil {
		t.Fatal(err)
	}
	one := rep
	one.Runs = rep.Runs[:1]
	longest := func(s string) (n int, line string) {
		for _, l := range strings.Split(s, "\n") {
			if w := utf8.RuneCountInString(l); w > n {
				n, line = w, l
			}
		}
		return n, line
	}
	var wide bytes.Buffer
	if err := CompareText(&wide, c, false); err != nil {
		t.Fatal(err)
	}
	if n, _ := longest(wide.String()); n < 1000 {
		t.Errorf("without a width the longest line is %d runes: the fixture is not a wide comparison", n)
	}
	for _, width := range []int{100, 80} {
		outs := map[string]*bytes.Buffer{"compare": {}, "compare colour": {}, "bench": {}, "run": {}}
		for name, f := range map[string]func(*bytes.Buffer) error{
			"compare":        func(b *bytes.Buffer) error { return CompareText(Fit(b, width), c, false) },
			"compare colour": func(b *bytes.Buffer) error { return CompareText(Fit(b, width), c, true) },
			"bench":          func(b *bytes.Buffer) error { return Bench(Fit(b, width), []report.BenchTable{bt}) },
			"run":            func(b *bytes.Buffer) error { return Text(Fit(b, width), one) },
		} {
			if err := f(outs[name]); err != nil {
				t.Fatal(err)
			}
			plain := strings.NewReplacer(ansiRed, "", ansiGreen, "", ansiGrey, "", ansiReset, "").Replace(outs[name].String())
			if n, l := longest(plain); n > width {
				t.Errorf("%s at %d columns: a line of %d runes:\n%s", name, width, n, l)
			}
		}
		out := outs["compare"].String()
		blocks := section(t, out, "Throughput relative to a")
		if len(blocks) < 3 {
			t.Fatalf("%d columns: the relative table in %d blocks:\n%s", width, len(blocks), out)
		}
		seen := map[string]int{}
		bValues := 0
		for _, b := range blocks {
			if len(b) != 3 || !strings.HasPrefix(b[0], "config ") || !strings.HasPrefix(b[1], "a ") || !strings.HasPrefix(b[2], "b ") {
				t.Fatalf("%d columns: a block without its header and each config's row: %q", width, b)
			}
			head := strings.Fields(b[0])[1:]
			for _, s := range head {
				seen[s]++
			}
			if n := strings.Count(b[1], "1.00"); n != len(head) {
				t.Errorf("%d columns: the base's row has %d values under %d steps: %q", width, n, len(head), b[1])
			}
			bValues += strings.Count(b[2], "[")
		}
		for _, s := range steps {
			if seen[s] != 1 {
				t.Errorf("%d columns: step %s shows %d times in the relative table", width, s, seen[s])
			}
		}
		if len(seen) != len(steps) || bValues != len(steps) {
			t.Errorf("%d columns: %d steps and %d values of b, want %d", width, len(seen), bValues, len(steps))
		}
		// A table with several label columns repeats all of them: config, step and figure.
		for _, b := range section(t, out, "Where each ratio's noise comes from (share of its variance)") {
			if f := strings.Fields(b[0]); len(f) < 4 || f[0] != "config" || f[1] != "step" || f[2] != "figure" {
				t.Errorf("%d columns: a block of the noise table without its label columns: %q", width, b[0])
			}
		}
		// An explain pointer's command stays whole on its line.
		if !strings.Contains(out, "\n  dbperf explain a b --step load\n") {
			t.Errorf("%d columns: load's explain pointer is not whole:\n%s", width, out[strings.LastIndex(out, "\n\n"):])
		}
	}
}

// TestTableFitsOnlyWhenWider: a table that fits its width is written as without one; a
// wider one repeats its label columns in each block and leaves out continuation rows
// with nothing in a block.
func TestTableFitsOnlyWhenWider(t *testing.T) {
	t.Parallel()
	write := func(width int) string {
		var buf bytes.Buffer
		tb := newTable(&buf, allLeft).fit(width)
		tb.row("step", "status", "ops", "background")
		tb.row("qp100", "ok", "query 5000/s", "insert 100/100")
		tb.row("", "", "", "delete 90/100")
		if err := tb.flush(); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	if got, want := write(56), write(0); got != want {
		t.Errorf("a table that fits changed:\n%s\nwant\n%s", got, want)
	}
	want := "step   status  ops\n" +
		"qp100  ok      query 5000/s\n" +
		"\n" +
		"step   background\n" +
		"qp100  insert 100/100\n" +
		"       delete 90/100\n"
	if got := write(30); got != want {
		t.Errorf("at 30 columns got\n%s\nwant\n%s", got, want)
	}
}

// TestTableGlue: a glued column goes in the block of the column before it, even when
// the earlier block had room for that column alone (a change and its mde).
func TestTableGlue(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	tb := newTable(&buf, 1).fit(40).glue(3)
	tb.row("step", "a", "b vs a", "mde")
	tb.row("l.i0", "50100 (n=4)", "+1.0% [+0.5% +1.5%]", "2.2%")
	if err := tb.flush(); err != nil {
		t.Fatal(err)
	}
	want := "step            a\n" +
		"l.i0  50100 (n=4)\n" +
		"\n" +
		"step               b vs a   mde\n" +
		"l.i0  +1.0% [+0.5% +1.5%]  2.2%\n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
