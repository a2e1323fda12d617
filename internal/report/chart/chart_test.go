package chart

import (
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current output")

// svgChart is what Line and Bars have in common.
type svgChart interface{ SVG() (string, error) }

// fixtures are the charts of the golden tests, by golden file name.
func fixtures() map[string]svgChart {
	xs := []float64{0, 10, 20, 30, 40, 50, 60}
	return map[string]svgChart{
		"line_basic": Line{
			Title: "Insert throughput", XLabel: "time since start (s)", YLabel: "throughput (ops/s)",
			Series: []Series{
				{Name: "sqlite", X: xs, Y: []float64{12000, 15000, 14000, 16000, 15500, 15800, 15900}},
				{Name: "postgres", X: xs, Y: []float64{22000, 25000, 24000, 26000, 25500, 25200, 25700}},
				{Name: "mariadb-rocksdb", X: xs, Y: []float64{8000, 9000, 8500, 9100, 8800, 9050, 9000}},
			},
			Refs: []Ref{{Label: "target 20k ops/s", Y: 20000}},
		},
		"line_single_point": Line{
			Title: "One measurement", XLabel: "clients", YLabel: "throughput (ops/s)",
			Series: []Series{{Name: "only run", X: []float64{8}, Y: []float64{4200}}},
			Width:  400, Height: 220,
		},
		"line_log": Line{
			Title: "Latency percentiles", XLabel: "time since start (s)", YLabel: "latency (ms)", LogY: true,
			Series: []Series{
				{Name: "p50", X: xs, Y: []float64{0.4, 0.5, 0.45, 0.6, 0.5, 0.55, 0.5}},
				{Name: "p99", X: xs, Y: []float64{3, 4, 12, 5, 4.5, 6, 5}},
				{Name: "p99.9", X: xs, Y: []float64{20, 35, 250, 40, 30, 60, 45}},
			},
			Refs: []Ref{{Label: "SLO 100 ms", Y: 100}},
		},
		"line_long": Line{
			Title: "Many points, no markers", XLabel: "time (s)", YLabel: "rows",
			Series: []Series{longSeries("rows", 200)},
		},
		"bars_grouped": Bars{
			Title: "Throughput relative to sqlite", YLabel: "relative throughput (×)",
			Categories: []string{"insert", "update", "point query", "range scan"},
			Groups: []BarGroup{
				{Name: "sqlite", Values: []float64{1, 1, 1, 1}},
				{Name: "postgres", Values: []float64{1.4, math.NaN(), 0.8, 2.1}},
				{Name: "mariadb-rocksdb", Values: []float64{0.9, 1.1, -0.2, 1.5}},
			},
			Refs: []Ref{{Label: "sqlite = 1", Y: 1}},
		},
		"bars_slanted": Bars{
			Title: "Throughput by workload", YLabel: "throughput (ops/s)",
			Categories: []string{"insert-heavy", "update-heavy", "point-query", "range-scan-long", "mixed-oltp", "delete-heavy", "bulk-load", "secondary-index"},
			Groups: []BarGroup{
				{Name: "sqlite", Values: []float64{1e5, 2e5, 3e5, 1.5e5, 5e4, 1.2e5, 9e5, 4e4}},
				{Name: "postgres", Values: []float64{2e5, 1e5, 2e5, 2.5e5, 8e4, 6e4, 1e6, 7e4}},
			},
		},
	}
}

func longSeries(name string, n int) Series {
	s := Series{Name: name, X: make([]float64, n), Y: make([]float64, n)}
	for i := range n {
		s.X[i] = float64(i) / 2
		s.Y[i] = 1000 + 400*math.Sin(float64(i)/15) + float64(i)
	}
	return s
}

func TestGolden(t *testing.T) {
	for name, c := range fixtures() {
		t.Run(name, func(t *testing.T) {
			got, err := c.SVG()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name+".svg")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/report/chart/ -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("SVG differs from %s; if the change is intended, run go test ./internal/report/chart/ -update and look at the new file in a browser\n%s", path, firstDiff(got, string(want)))
			}
		})
	}
}

// firstDiff describes where two strings first differ.
func firstDiff(got, want string) string {
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			return "line " + itoa(i+1) + ":\n got: " + gl[i] + "\nwant: " + wl[i]
		}
	}
	return "lengths differ: got " + itoa(len(gl)) + " lines, want " + itoa(len(wl))
}

func itoa(i int) string { return formatNum(float64(i)) }

func TestDeterministic(t *testing.T) {
	for name, c := range fixtures() {
		a, err := c.SVG()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := c.SVG()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if a != b {
			t.Errorf("%s: two renderings differ\n%s", name, firstDiff(a, b))
		}
	}
}

// svgDoc is what a test reads back from an SVG string.
type svgDoc struct {
	root  xml.StartElement
	texts []string // the character data of each <text>
	attrs []xml.Attr
}

// parseSVG decodes s as XML, failing the test when it is not well-formed.
func parseSVG(t *testing.T, s string) svgDoc {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	d.Strict = true
	var doc svgDoc
	depth, inText := 0, false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%.400s", err, s)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				if doc.root.Name.Local != "" {
					t.Fatalf("SVG has a second root element <%s>", tok.Name.Local)
				}
				doc.root = tok.Copy()
			}
			doc.attrs = append(doc.attrs, tok.Attr...)
			depth++
			inText = tok.Name.Local == "text"
			if inText {
				doc.texts = append(doc.texts, "")
			}
		case xml.EndElement:
			depth--
			inText = false
		case xml.CharData:
			if inText {
				doc.texts[len(doc.texts)-1] += string(tok)
			}
		case xml.ProcInst, xml.Directive, xml.Comment:
			t.Errorf("SVG has a %T: %v", tok, tok)
		}
	}
	if doc.root.Name.Local != "svg" {
		t.Fatalf("root element is <%s>, want <svg>", doc.root.Name.Local)
	}
	return doc
}

func (d svgDoc) hasText(s string) bool {
	for _, t := range d.texts {
		if t == s {
			return true
		}
	}
	return false
}

func (d svgDoc) rootAttr(name string) string {
	for _, a := range d.root.Attr {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value
		}
	}
	return ""
}

// checkInline checks what every chart must be: an <svg> element for inline
// use, with nothing that points outside it.
func checkInline(t *testing.T, s string) svgDoc {
	t.Helper()
	if !strings.HasPrefix(s, "<svg ") || !strings.HasSuffix(s, "</svg>") {
		t.Errorf("not a bare <svg> element: starts %.30q, ends %q", s, s[max(0, len(s)-10):])
	}
	for _, bad := range []string{"<?xml", "<!DOCTYPE", "<!--", "http://", "https://", "xmlns", "url(", "@font-face", "base64", "<image", "<script"} {
		if strings.Contains(s, bad) {
			t.Errorf("SVG contains %q", bad)
		}
	}
	doc := parseSVG(t, s)
	for _, a := range doc.attrs {
		if a.Name.Local == "id" {
			t.Errorf("SVG has an id attribute (%q), which would clash between charts on one page", a.Value)
		}
	}
	return doc
}

func TestInlineSVG(t *testing.T) {
	for name, c := range fixtures() {
		t.Run(name, func(t *testing.T) {
			s, err := c.SVG()
			if err != nil {
				t.Fatal(err)
			}
			checkInline(t, s)
		})
	}
}

func TestLineContents(t *testing.T) {
	c := fixtures()["line_basic"].(Line)
	s, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	doc := checkInline(t, s)
	for _, want := range []string{c.Title, c.XLabel, c.YLabel, "sqlite", "postgres", "mariadb-rocksdb", "target 20k ops/s", "0", "20k"} {
		if !doc.hasText(want) {
			t.Errorf("no text %q in %q", want, doc.texts)
		}
	}
	if got := doc.rootAttr("aria-label"); got != c.Title {
		t.Errorf("aria-label = %q, want %q", got, c.Title)
	}
	if got := doc.rootAttr("role"); got != "img" {
		t.Errorf("role = %q, want img", got)
	}
	// The default size.
	if w, h, vb := doc.rootAttr("width"), doc.rootAttr("height"), doc.rootAttr("viewBox"); w != "640pt" || h != "300pt" || vb != "0 0 640 300" {
		t.Errorf("size = %s x %s, viewBox %q; want 640pt x 300pt, 0 0 640 300", w, h, vb)
	}
	// Every series has its own colour; the reference line is dashed.
	for _, col := range []string{"#4E79A7", "#F28E2B", "#E15759"} {
		if !strings.Contains(s, "stroke:"+col) {
			t.Errorf("no line in %s", col)
		}
	}
	if !strings.Contains(s, "stroke-dasharray:6,3") {
		t.Error("the reference line is not dashed")
	}
	// A generic font family, so that a browser without Liberation Sans shows
	// the text in a sans-serif font.
	if !strings.Contains(s, "font-family:Liberation Sans,Arimo,Arial,Helvetica,sans-serif;") {
		t.Error("text has no generic font-family fallback")
	}
}

func TestBarsContents(t *testing.T) {
	c := fixtures()["bars_grouped"].(Bars)
	s, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	doc := checkInline(t, s)
	for _, want := range append([]string{c.Title, c.YLabel, "sqlite", "postgres", "mariadb-rocksdb", "sqlite = 1", "0"}, c.Categories...) {
		if !doc.hasText(want) {
			t.Errorf("no text %q in %q", want, doc.texts)
		}
	}
	// 4 + 3 + 4 bars (one NaN), and 3 legend swatches, in the group colours.
	fills := strings.Count(s, "fill:#4E79A7") + strings.Count(s, "fill:#F28E2B") + strings.Count(s, "fill:#E15759")
	if fills != 11+3 {
		t.Errorf("%d filled bars and swatches, want 14", fills)
	}
}

// Intervals draw whiskers (a stem and two caps each), marks are text above the bars, and
// a faint bar is pale with a dashed edge, not in its group's colour.
func TestBarsIntervalsAndMarks(t *testing.T) {
	nan := math.NaN()
	c := Bars{Title: "rel", Categories: []string{"a", "b", "c"}, Groups: []BarGroup{{Name: "g",
		Values: []float64{1.2, 0.9, 1.0}, Lo: []float64{1.1, 0.5, nan}, Hi: []float64{1.3, 1.4, nan},
		Faint: []bool{false, true, false}, Marks: []string{"▲", "?", ""}}}}
	s, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	doc := checkInline(t, s)
	for _, want := range []string{"▲", "?"} {
		if !doc.hasText(want) {
			t.Errorf("no mark %q in %q", want, doc.texts)
		}
	}
	// Bar a and the legend swatch in the group's colour; bar b pale; bar c in colour.
	if n := strings.Count(s, "fill:#4E79A7"); n != 3 {
		t.Errorf("%d shapes in the group's colour, want 3 (two bars and the swatch)", n)
	}
	if !strings.Contains(s, "stroke-dasharray") {
		t.Error("the faint bar has no dashed edge")
	}
	// The whisker of b reaches 1.4, and the axis's data range holds it.
	gb := &groupedBars{categories: 3, values: [][]float64{c.Groups[0].Values}, lo: [][]float64{c.Groups[0].Lo}, hi: [][]float64{c.Groups[0].Hi}}
	if _, _, _, ymax := gb.DataRange(); ymax != 1.4 {
		t.Errorf("data range up to %g, want the interval's top 1.4", ymax)
	}
	for _, bad := range []Bars{
		{Title: "T", Categories: []string{"a"}, Groups: []BarGroup{{Name: "g", Values: []float64{1}, Lo: []float64{1}}}},
		{Title: "T", Categories: []string{"a"}, Groups: []BarGroup{{Name: "g", Values: []float64{1}, Lo: []float64{1, 2}, Hi: []float64{1, 2}}}},
		{Title: "T", Categories: []string{"a"}, Groups: []BarGroup{{Name: "g", Values: []float64{1}, Lo: []float64{1}, Hi: []float64{math.Inf(1)}}}},
	} {
		if _, err := bad.SVG(); err == nil {
			t.Errorf("%+v: no error", bad.Groups[0])
		}
	}
}

// Series with a Group and a Kind: the legend names each group once and each kind once,
// not every line (issue 42: 8 runs drew 16 legend entries in repeating colours).
func TestLineGroupsAndKinds(t *testing.T) {
	var series []Series
	for _, g := range []string{"base", "new"} {
		for run := range 4 {
			for _, k := range []string{"p50", "p99"} {
				series = append(series, Series{Name: fmt.Sprintf("%s run %d %s", g, run, k), Group: g, Kind: k,
					X: []float64{1, 2, 3}, Y: []float64{1, 2, float64(run + 1)}})
			}
		}
	}
	s, err := Line{Title: "latency", Series: series}.SVG()
	if err != nil {
		t.Fatal(err)
	}
	doc := checkInline(t, s)
	count := map[string]int{}
	for _, txt := range doc.texts {
		count[txt]++
	}
	for _, want := range []string{"base", "new", "p50", "p99"} {
		if count[want] != 1 {
			t.Errorf("legend %q %d times, want once (texts %q)", want, count[want], doc.texts)
		}
	}
	if doc.hasText("base run 0 p50") {
		t.Errorf("a line's own name in the legend: %q", doc.texts)
	}
}

func TestSinglePointIsDrawn(t *testing.T) {
	s, err := Line{Title: "t", Series: []Series{{Name: "one", X: []float64{1}, Y: []float64{2}}}}.SVG()
	if err != nil {
		t.Fatal(err)
	}
	checkInline(t, s)
	// A marker is a filled circle (two arcs) in the series colour: one on the
	// plot, one in the legend. No line is drawn for it but the legend sample.
	marker := regexp.MustCompile(`<path d="M[0-9.,]+A2\.5,2\.5 [^"]*Z" style="fill:#4E79A7" />`)
	if n := len(marker.FindAllString(s, -1)); n != 2 {
		t.Errorf("%d circle markers, want 2 (point and legend)", n)
	}
}

func TestEscapesText(t *testing.T) {
	title := `a <b> & "c" 'd'` + "\x01\xff"
	s, err := Line{Title: title, XLabel: "x < 1", YLabel: "y & z",
		Series: []Series{{Name: "</text><script>", X: []float64{0, 1}, Y: []float64{1, 2}}}}.SVG()
	if err != nil {
		t.Fatal(err)
	}
	doc := checkInline(t, s)
	for _, want := range []string{`a <b> & "c" 'd'` + " \uFFFD", "x < 1", "y & z", "</text><script>"} {
		if !doc.hasText(want) {
			t.Errorf("no text %q in %q", want, doc.texts)
		}
	}
}

func TestLongLegendGoesInside(t *testing.T) {
	name := strings.Repeat("a very long series name ", 6)
	s, err := Line{Title: "t", Series: []Series{{Name: name, X: []float64{0, 1}, Y: []float64{1, 2}}}}.SVG()
	if err != nil {
		t.Fatal(err)
	}
	if doc := checkInline(t, s); !doc.hasText(name) {
		t.Errorf("legend lost the long name: %q", doc.texts)
	}
}

func TestManySeries(t *testing.T) {
	var c Line
	for i := range 12 {
		c.Series = append(c.Series, Series{Name: "s" + itoa(i), X: []float64{0, 1}, Y: []float64{float64(i), float64(i + 1)}})
	}
	s, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	checkInline(t, s)
	// Series 10 and 11 reuse the colours of 0 and 1, so they are dashed.
	if !strings.Contains(s, "stroke:#4E79A7;stroke-width:1.5;stroke-dasharray:6,3") {
		t.Error("series 10 is not told apart from series 0 by a dash pattern")
	}
}

func TestErrors(t *testing.T) {
	ok := []Series{{Name: "s", X: []float64{0, 1}, Y: []float64{1, 2}}}
	okBars := []BarGroup{{Name: "g", Values: []float64{1, 2}}}
	cats := []string{"a", "b"}
	for _, tc := range []struct {
		name  string
		chart svgChart
		want  string
	}{
		{"no series", Line{Title: "T"}, `chart "T": no series`},
		{"length mismatch", Line{Title: "T", Series: []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{1}}}}, `series "s" has 2 x values but 1 y values`},
		{"empty series", Line{Title: "T", Series: []Series{{Name: "s"}}}, `series "s" has no points`},
		{"NaN", Line{Title: "T", Series: []Series{{Name: "s", X: []float64{1}, Y: []float64{math.NaN()}}}}, "not finite"},
		{"Inf", Line{Title: "T", Series: []Series{{Name: "s", X: []float64{math.Inf(1)}, Y: []float64{1}}}}, "not finite"},
		{"log of 0", Line{Title: "T", LogY: true, Series: []Series{{Name: "s", X: []float64{1}, Y: []float64{0}}}}, "log scale"},
		{"log ref", Line{Title: "T", LogY: true, Series: ok, Refs: []Ref{{Label: "r", Y: -1}}}, `reference line "r"`},
		{"NaN ref", Line{Title: "T", Series: ok, Refs: []Ref{{Label: "r", Y: math.NaN()}}}, "not finite"},
		{"negative width", Line{Title: "T", Series: ok, Width: -1}, "size"},
		{"too small", Line{Title: "T", Series: ok, Width: 50, Height: 50}, "at least"},
		{"no categories", Bars{Title: "T", Groups: okBars}, `chart "T": no categories`},
		{"no groups", Bars{Title: "T", Categories: cats}, `chart "T": no bar groups`},
		{"group length", Bars{Title: "T", Categories: cats, Groups: []BarGroup{{Name: "g", Values: []float64{1}}}}, `group "g" has 1 values for 2 categories`},
		{"Inf bar", Bars{Title: "T", Categories: cats, Groups: []BarGroup{{Name: "g", Values: []float64{1, math.Inf(-1)}}}}, `category "b" is infinite`},
		{"all NaN", Bars{Title: "T", Categories: cats, Groups: []BarGroup{{Name: "g", Values: []float64{math.NaN(), math.NaN()}}}}, "every value is NaN"},
		{"bars NaN ref", Bars{Title: "T", Categories: cats, Groups: okBars, Refs: []Ref{{Y: math.Inf(1)}}}, "not finite"},
		{"bars size", Bars{Title: "T", Categories: cats, Groups: okBars, Height: math.NaN()}, "size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.chart.SVG()
			if err == nil {
				t.Fatalf("no error; got %.60q", s)
			}
			if s != "" {
				t.Errorf("output %.60q with the error", s)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), `chart "T": `) {
				t.Errorf("error %q, want it to start with chart \"T\": and contain %q", err, tc.want)
			}
		})
	}
}

func TestLinearTicks(t *testing.T) {
	for _, tc := range []struct {
		min, max float64
		want     []string
	}{
		{0, 27300, []string{"0", "5k", "10k", "15k", "20k", "25k"}},
		{0, 1.05, []string{"0", "0.2", "0.4", "0.6", "0.8", "1"}},
		{0, 2.2, []string{"0", "0.5", "1", "1.5", "2"}},
		{-3.25, 2.25, []string{"-3", "-2", "-1", "0", "1", "2"}},
		{0, 7.35, []string{"0", "2", "4", "6"}},
		{0, 1.05e6, []string{"0", "0.2M", "0.4M", "0.6M", "0.8M", "1M"}},
		{1e9, 1e9 + 300, []string{"1000000000", "1000000050", "1000000100", "1000000150", "1000000200", "1000000250", "1000000300"}},
		{0, 12.5, []string{"0", "2.5", "5", "7.5", "10", "12.5"}},
		{0, 0.0013, []string{"0", "0.00025", "0.0005", "0.00075", "0.001", "0.00125"}},
		{0, 130000, []string{"0", "25k", "50k", "75k", "100k", "125k"}},
	} {
		var got []string
		for _, tk := range (linearTicks{}).Ticks(tc.min, tc.max) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("ticks(%g, %g) = %q, want %q", tc.min, tc.max, got, tc.want)
		}
	}
}

func TestIntegerTicks(t *testing.T) {
	for _, tc := range []struct {
		min, max float64
		want     []string
	}{
		{1, 2, []string{"1", "2"}},
		{1, 7, []string{"1", "2", "3", "4", "5", "6", "7"}},
		{0.5, 3.5, []string{"1", "2", "3"}},
		{1, 12, []string{"2", "4", "6", "8", "10", "12"}},
		{1, 14, []string{"2", "4", "6", "8", "10", "12", "14"}},
		{1, 40, []string{"5", "10", "15", "20", "25", "30", "35", "40"}},
		{1, 300, []string{"50", "100", "150", "200", "250", "300"}},
	} {
		var got []string
		for _, tk := range (integerTicks{}).Ticks(tc.min, tc.max) {
			if tk.Value != math.Trunc(tk.Value) {
				t.Errorf("ticks(%g, %g): a tick at %g", tc.min, tc.max, tk.Value)
			}
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("ticks(%g, %g) = %q, want %q", tc.min, tc.max, got, tc.want)
		}
	}
}

func TestLogTicks(t *testing.T) {
	for _, tc := range []struct {
		min, max float64
		want     []string
	}{
		{0.35, 2900, []string{"1", "10", "100", "1000"}},
		{0.35, 290, []string{"0.5", "1", "2", "5", "10", "20", "50", "100", "200"}},
		{0.35, 69, []string{"0.5", "1", "2", "5", "10", "20", "50"}},
		{2, 9, []string{"2", "3", "4", "5", "6", "7", "8", "9"}},
		{800, 3e6, []string{"1000", "10k", "100k", "1M"}},
	} {
		var got []string
		for _, tk := range (logTicks{}).Ticks(tc.min, tc.max) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("ticks(%g, %g) = %q, want %q", tc.min, tc.max, got, tc.want)
		}
	}
}

// TestManyCategories (issue 42): 41 categories of one marked group do not fit 640 pt side
// by side nor slanted: their names stand upright, read downwards, and the chart grows
// wider (at least lineBox×1.25 per category) and taller, every name drawn once.
func TestManyCategories(t *testing.T) {
	var cats []string
	vals, marks := make([]float64, 41), make([]string, 41)
	for i := range 41 {
		cats = append(cats, fmt.Sprintf("random-points.range=%d", i))
		vals[i], marks[i] = 1+float64(i%3)/10, "▲"
	}
	s, err := Bars{Title: "many", YLabel: "ratio", Categories: cats, Groups: []BarGroup{{Name: "b", Values: vals, Marks: marks}}}.SVG()
	if err != nil {
		t.Fatal(err)
	}
	doc := parseSVG(t, s)
	var w, h float64
	for _, a := range doc.root.Attr {
		switch a.Name.Local {
		case "width":
			w, _ = strconv.ParseFloat(strings.TrimSuffix(a.Value, "pt"), 64)
		case "height":
			h, _ = strconv.ParseFloat(strings.TrimSuffix(a.Value, "pt"), 64)
		}
	}
	if w < 41*lineBox*1.25 || h <= DefaultHeight {
		t.Errorf("a chart of 41 categories is %gx%g pt", w, h)
	}
	if n := strings.Count(s, "rotate(-90"); n != 41 {
		t.Errorf("%d names stand upright, want 41", n)
	}
	for _, c := range cats {
		if n := slices.Index(doc.texts, c); n < 0 {
			t.Errorf("no name %s", c)
		}
	}
}
