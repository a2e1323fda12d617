package render

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/browsertest"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/store"
)

// flameProfiles are a role's profile per folded text, at 100 Hz.
func flameProfiles(t *testing.T, texts ...string) []store.StepProfile {
	t.Helper()
	var out []store.StepProfile
	for _, text := range texts {
		gz, err := store.CompressFolded([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		var samples int64
		for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
			n, err := strconv.ParseInt(line[strings.LastIndexByte(line, ' ')+1:], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			samples += n
		}
		out = append(out, store.StepProfile{Role: "insert", Event: "cpu-clock", Hz: 100, Samples: samples, Folded: gz})
	}
	return out
}

// flameBase and flameNew are small hand-made profiles: exec;heap unchanged, exec;wal grew,
// exec;lock new, exec;gone only in the base, index shrank; frame names with characters
// to escape, a long name to cut, and a frame too narrow for a label.
const (
	flameBase = "main;exec;heap 300\n" +
		"main;exec;wal 100\n" +
		"main;exec;gone 50\n" +
		"main;index;operator<<(std::ostream&, \"x\") 200\n" +
		"main;index;btree_insert_with_a_rather_long_name_that_does_not_fit 40\n" +
		"main;tiny 2\n" +
		"main 8\n"
	flameNew = "main;exec;heap 300\n" +
		"main;exec;wal 250\n" +
		"main;exec;lock 40\n" +
		"main;index;operator<<(std::ostream&, \"x\") 120\n" +
		"main;index;btree_insert_with_a_rather_long_name_that_does_not_fit 40\n" +
		"main;tiny 2\n" +
		"main 8\n"
)

func flameFixture(t *testing.T) *report.FlameNode {
	t.Helper()
	root, err := report.BuildFlameDiff(flameProfiles(t, flameBase), flameProfiles(t, flameNew), 1000, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestFlameSVGGolden(t *testing.T) {
	root := flameFixture(t)
	var buf bytes.Buffer
	if err := FlameSVG(&buf, root, "l.i0, insert: a → b <&>"); err != nil {
		t.Fatal(err)
	}
	golden(t, "flame.svg.golden", buf.Bytes())

	// Deterministic.
	var again bytes.Buffer
	if err := FlameSVG(&again, flameFixture(t), "l.i0, insert: a → b <&>"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two drawings of the same graph differ")
	}
	svg := buf.String()
	checkFlameSVG(t, svg)
	// One frame per drawn node: gone (base only) is not drawn, every other one is.
	if n, want := strings.Count(svg, `<g class="f">`), root.Frames(); n != want || want != 10 {
		t.Errorf("%d frames drawn, the graph has %d (want 10)", n, want)
	}
	if strings.Contains(svg, ">gone") {
		t.Error("a frame only in the base is drawn")
	}
	for _, want := range []string{
		// Escaped, in the tooltip and the label (cut to its 186 px).
		"<title>operator&lt;&lt;(std::ostream&amp;, &#34;x&#34;)\nbase 2000 µs/op, new 1200 µs/op: -800 µs/op (-40%)\nself: base 2000, new 1200 µs/op</title>",
		">operator&lt;&lt;(std::ostream..</text>",
		// New, grown and unchanged frames' tooltips.
		"<title>lock\nbase 0 µs/op, new 400 µs/op: +400 µs/op (new)\n",
		"<title>wal\nbase 1000 µs/op, new 2500 µs/op: +1500 µs/op (+150%)\n",
		"<title>heap\nbase 3000 µs/op, new 3000 µs/op: 0 µs/op (0.0%)\n",
		// The long name cut to its frame (62 px), the title escaped.
		">btree..</text>",
		`aria-label="l.i0, insert: a → b &lt;&amp;&gt;"`,
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("the SVG has no %q", want)
		}
	}
	if regexp.MustCompile(`>tiny<`).MatchString(svg) {
		t.Error("a frame too narrow for its name is labelled")
	}
	// Colours: wal (the largest change) full red, lock red, heap grey, index's operator<<
	// blue, exec (its callee gone) blue.
	for name, fill := range map[string]string{"wal": "rgb(255,0,0)", "heap": flameNeutral, "exec": "rgb(140,140,255)",
		"lock": "rgb(255,154,154)", "operator&lt;&lt;(std::ostream&amp;, &#34;x&#34;)": "rgb(98,98,255)"} {
		re := regexp.MustCompile(`<title>` + regexp.QuoteMeta(name) + `\n[^<]*</title><rect [^>]* fill="([^"]+)"/>`)
		m := re.FindStringSubmatch(svg)
		if m == nil || m[1] != fill {
			t.Errorf("%s: fill %v, want %s", name, m, fill)
		}
	}
}

// checkFlameSVG: the SVG parses as XML, is inline (nothing fetched, no script, no
// namespace) and has a title per frame.
func checkFlameSVG(t *testing.T, svg string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
	}
	for _, bad := range []string{"<?xml", "<!DOCTYPE", "http://", "https://", "xmlns", "url(", "<script", "<image", "href"} {
		if strings.Contains(svg, bad) {
			t.Errorf("the SVG holds %q", bad)
		}
	}
	if strings.Count(svg, "<title>") != strings.Count(svg, "<rect ")-1 {
		t.Errorf("%d titles for %d frames", strings.Count(svg, "<title>"), strings.Count(svg, "<rect ")-1)
	}
}

func TestFlameColour(t *testing.T) {
	for _, c := range []struct {
		name          string
		delta, max    float64
		want, wantTxt string
	}{
		{"grew, the largest", 5, 5, "rgb(255,0,0)", "#fff"},
		{"grew, half", 2.5, 5, "rgb(255,105,105)", "#000"},
		{"grew a little", 0.001, 5, "rgb(255,210,210)", "#000"},
		{"shrank, the largest", -5, 5, "rgb(0,0,255)", "#fff"},
		{"shrank, a fifth", -1, 5, "rgb(168,168,255)", "#000"},
		{"unchanged", 0, 5, flameNeutral, "#000"},
		{"nothing changed in the graph", 0, 0, flameNeutral, "#000"},
		{"beyond the largest (clamped)", 7, 5, "rgb(255,0,0)", "#fff"},
		{"NaN", nan(), 5, flameNeutral, "#000"},
	} {
		if got := flameColour(c.delta, c.max); got != c.want {
			t.Errorf("%s: flameColour(%v, %v) = %s, want %s", c.name, c.delta, c.max, got, c.want)
		}
		if got := flameTextColour(c.delta, c.max); got != c.wantTxt {
			t.Errorf("%s: text %s, want %s", c.name, got, c.wantTxt)
		}
	}
}

func nan() float64 { var z float64; return z / z }

func TestFlameLabelsEscaped(t *testing.T) {
	for _, c := range []struct {
		name, label, title string
	}{
		{"operator<<", ">operator&lt;&lt;</text>", "<title>operator&lt;&lt;\n"},
		{"a&b'c\"d", ">a&amp;b&#39;c&#34;d</text>", "<title>a&amp;b&#39;c&#34;d\n"},
		{"</title><script>x</script>", ">&lt;/title&gt;&lt;script&gt;x&lt;/script&gt;</text>", "<title>&lt;/title&gt;&lt;script&gt;x&lt;/script&gt;\n"},
		{"esc\x1b[31mred", `>esc\x1b[31mred</text>`, `<title>esc\x1b[31mred` + "\n"},
		{"bad\xffutf8", `>bad\xffutf8</text>`, `<title>bad\xffutf8` + "\n"},
	} {
		root, err := report.BuildFlameDiff(flameProfiles(t, c.name+";x 1\n"), flameProfiles(t, c.name+";x 2\n"), 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := FlameSVG(&buf, root, c.name); err != nil {
			t.Fatal(err)
		}
		svg := buf.String()
		checkFlameSVG(t, svg)
		for _, want := range []string{c.label, c.title} {
			if !strings.Contains(svg, want) {
				t.Errorf("%q: no %q in\n%s", c.name, want, svg)
			}
		}
	}
}

func TestFlameLabel(t *testing.T) {
	for _, c := range []struct {
		name  string
		width float64
		want  string
	}{
		{"heap_insert", 1000, "heap_insert"},
		{"heap_insert", 6.5 + 7.08*11, "heap_insert"},
		{"heap_insert", 6.5 + 7.08*10, "heap_ins.."},
		{"heap_insert", 6.5 + 7.08*3, "h.."},
		{"heap_insert", 6.5 + 7.08*2, ""},
		{"µµµµµµ", 6.5 + 7.08*5, "µµµ.."},
	} {
		if got := flameLabel(c.name, c.width); got != c.want {
			t.Errorf("flameLabel(%q, %v) = %q, want %q", c.name, c.width, got, c.want)
		}
	}
}

// writeProfiledRuns stores two runs of label a and b through the store's writer, each
// with a step l.i0 of 1000 rows and, when profiled, its insert and client profiles.
func writeProfiledRuns(t *testing.T, profiled bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.db")
	ctx := context.Background()
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for i, texts := range [][2]string{
		{flameBase, "go;runtime.main;send 40\n"},
		{flameNew, "go;runtime.main;send 30\n"},
	} {
		id, err := st.BeginRun(ctx, store.RunMeta{Workload: "insertbench", WorkloadVersion: 3, Engine: "sqlite",
			EngineVersion: "3", EngineSettings: map[string]string{}, Label: string(rune('a' + i)), Seed: 1,
			Params: map[string]any{"scale": "tiny"}, Env: map[string]string{}, StartedAt: start})
		if err != nil {
			t.Fatal(err)
		}
		sid, err := st.BeginStep(ctx, id, 1, "l.i0", "", start)
		if err != nil {
			t.Fatal(err)
		}
		lbl := metrics.LabelStats{Label: "insert", Role: "insert", Unit: metrics.UnitRows, Statements: 10, Events: 10, Rows: 1000}
		if err := st.FinishStep(ctx, sid, metrics.StepResult{Name: "l.i0", Status: metrics.StatusOK, StartedAt: start,
			Seconds: 1, Kind: "load", Primary: "insert", Labels: []metrics.LabelStats{lbl}}); err != nil {
			t.Fatal(err)
		}
		if profiled {
			ps := flameProfiles(t, texts[0], texts[1])
			ps[1].Role = "client"
			if err := st.PutStepProfiles(ctx, sid, ps); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.FinishRun(ctx, id, store.RunOK, start.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// reportHTML is `dbperf report a b --format html` over the store at path.
func reportHTML(t *testing.T, path string) string {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenExisting(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	groups, err := report.ResolveGroups(ctx, st, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Load(ctx, st, groups)
	if err != nil {
		t.Fatal(err)
	}
	c := report.Compare(rep, groups, 0)
	rep.Comparison = &c
	var buf bytes.Buffer
	if err := HTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestHTMLFlameGraphs: the HTML report of two configs whose runs stored profiles has a
// "CPU profile differences" section, a flame graph per step and role, the largest change
// first (insert before client); without profiles it has none.
func TestHTMLFlameGraphs(t *testing.T) {
	page := reportHTML(t, writeProfiledRuns(t, true))
	for _, want := range []string{
		`<h2 id="cpu-profile-differences">CPU profile differences</h2>`,
		`<p class="legend">Per step and role profiled in both configs`,
		`<figure><svg class="flame"`,
		`aria-label="l.i0, insert: 7000 → 7600 CPU µs/op (+8.6%), a → b"`,
		`aria-label="l.i0, client: 400 → 300 CPU µs/op (-25%), a → b"`,
		"<title>wal\nbase 1000 µs/op, new 2500 µs/op: +1500 µs/op (+150%)\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	if i, j := strings.Index(page, "l.i0, insert:"), strings.Index(page, "l.i0, client:"); i < 0 || j < i {
		t.Error("the largest change (insert) is not first")
	}
	for _, scheme := range []string{"http://", "https://"} {
		if strings.Contains(page, scheme) {
			t.Errorf("the page references %s", scheme)
		}
	}
	if plain := reportHTML(t, writeProfiledRuns(t, false)); strings.Contains(plain, "CPU profile differences") || strings.Contains(plain, `class="flame"`) {
		t.Error("a page without profiles has flame graphs")
	}

	if browsertest.Chromium() == "" {
		t.Skip("chromium not installed: make test installs it (as root)")
	}
	dir, err := os.MkdirTemp("/tmp", "dbperf-flame-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := browsertest.Open(ctx, file, shot)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ConsoleErrors) > 0 || len(res.Requests) > 0 {
		t.Errorf("console errors %q, requests %q", res.ConsoleErrors, res.Requests)
	}
	if keep := os.Getenv("DBPERF_SCREENSHOT_DIR"); keep != "" {
		png, _ := os.ReadFile(shot)
		_ = os.WriteFile(filepath.Join(keep, "flame-report.png"), png, 0o644)
	}
}

// TestFlameSVGBounded: a profile of 20,000 distinct stacks draws at most MaxFlameFrames
// frames, so a page of MaxFlameDiffs graphs stays a few MB at most.
func TestFlameSVGBounded(t *testing.T) {
	var base, neu strings.Builder
	for i := range 20000 {
		stack := "main"
		for d, x := 0, i; d < 12; d, x = d+1, x/3 {
			stack += fmt.Sprintf(";f%d_%d", d, x%3+d*i%5)
		}
		fmt.Fprintf(&base, "%s %d\n", stack, 1+i%7)
		fmt.Fprintf(&neu, "%s %d\n", stack, 1+i%5)
	}
	start := time.Now()
	root, err := report.BuildFlameDiff(flameProfiles(t, base.String()), flameProfiles(t, neu.String()), 1000, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := FlameSVG(&buf, root, "big"); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d frames, %d bytes of SVG in %v", root.Frames(), buf.Len(), time.Since(start))
	if n := strings.Count(buf.String(), `<g class="f">`); n != root.Frames() || n > report.MaxFlameFrames {
		t.Errorf("%d frames drawn (graph %d), over %d", n, root.Frames(), report.MaxFlameFrames)
	}
	if buf.Len() > 400<<10 {
		t.Errorf("%d bytes of SVG", buf.Len())
	}
	checkFlameSVG(t, buf.String())
}
