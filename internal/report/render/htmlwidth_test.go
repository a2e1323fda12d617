package render

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/browsertest"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
)

// TestHTMLManyStepsInBrowser (issue 42): the HTML report of a 41-step sysbench
// comparison (synthetic runs through the real report code: a real suite of 41 steps,
// repeated, takes too long for a test), in Chromium at 1,400 and 800 px: the page does
// not scroll sideways, every table and chart fits the window or scrolls inside a box of
// its own, and no two texts of a chart overlap (their boxes as drawn, from the DOM).
func TestHTMLManyStepsInBrowser(t *testing.T) {
	if browsertest.Chromium() == "" {
		t.Skip("chromium not installed: make test installs it (as root)")
	}
	t.Parallel()
	rep, groups := reporttest.ManyStepsFixture(reporttest.SysbenchSteps())
	c := report.Compare(rep, groups, 0)
	rep.Comparison = &c
	var buf bytes.Buffer
	if err := HTML(&buf, rep); err != nil {
		t.Fatal(err)
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
	for _, width := range []int{1400, 800} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		res, err := browsertest.OpenAt(ctx, page, "", width)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if len(res.ConsoleErrors) > 0 || len(res.Requests) > 0 || res.SVGCount < 10 {
			t.Errorf("%d px: console errors %q, requests %q, %d charts", width, res.ConsoleErrors, res.Requests, res.SVGCount)
		}
		for i, what := range res.CutOff {
			if i == 5 {
				t.Errorf("%d px: and %d more cut off", width, len(res.CutOff)-i)
				break
			}
			t.Errorf("%d px: cut off: %s", width, what)
		}
		for i, what := range res.Overlaps {
			if i == 5 {
				t.Errorf("%d px: and %d more overlapping texts", width, len(res.Overlaps)-i)
				break
			}
			t.Errorf("%d px: texts overlap: %s", width, what)
		}
	}
}
