package render

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dbperf/dbperf/internal/browsertest"
	"github.com/dbperf/dbperf/internal/report/reporttest"
)

func TestCompareRenderersGolden(t *testing.T) {
	rep, c := reporttest.Compared()
	for _, tc := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"compare.txt.golden", func(b *bytes.Buffer) error { return CompareText(b, c, false) }},
		{"compare-colour.txt.golden", func(b *bytes.Buffer) error { return CompareText(b, c, true) }},
		{"compare.md.golden", func(b *bytes.Buffer) error { return Markdown(b, c) }},
		{"compare.csv.golden", func(b *bytes.Buffer) error { return CSV(b, c, ',') }},
		{"compare.tsv.golden", func(b *bytes.Buffer) error { return CSV(b, c, '\t') }},
		{"compare.json.golden", func(b *bytes.Buffer) error { return JSON(b, rep) }},
		{"compare.html.golden", func(b *bytes.Buffer) error { return HTML(b, rep) }},
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
	_, c := reporttest.Compared()
	var plain, colour bytes.Buffer
	if err := CompareText(&plain, c, false); err != nil {
		t.Fatal(err)
	}
	if err := CompareText(&colour, c, true); err != nil {
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
	rep, _ := reporttest.Compared()
	var buf bytes.Buffer
	if err := JSON(&buf, rep); err != nil {
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
	if out.Comparison.Base != "a" || len(out.Comparison.Tables) != 10 {
		t.Fatalf("comparison: base %q, %d tables", out.Comparison.Base, len(out.Comparison.Tables))
	}
	rel := out.Comparison.Tables[1]
	if rel.ID != "relative" || rel.Rows[1].Cells[1] == nil || rel.Rows[1].Cells[1].Verdict == nil || *rel.Rows[1].Cells[1].Verdict != "higher" ||
		rel.Rows[1].Cells[1].CILo == nil || rel.Rows[1].Cells[1].MDEPct == nil ||
		!*rel.Rows[1].Cells[1].Significant || rel.Rows[0].Cells[2] != nil {
		t.Errorf("relative table JSON: %+v", rel.Rows)
	}

	_, c := reporttest.Compared()
	buf.Reset()
	if err := CSV(&buf, c, ','); err != nil {
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
	rep, _ := reporttest.Compared()
	var buf bytes.Buffer
	if err := HTML(&buf, rep); err != nil {
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
