package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dbperf/dbperf/internal/browsertest"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/web"
)

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestServeComparesWhatReportPrints is the serve half of issue 14's acceptance on a
// SQLite store: the runs page lists both runs; ticking them in Chromium opens their
// comparison, with its charts, no console error and no request leaving 127.0.0.1; the
// comparison page is the page `dbperf report --format html` writes for the same runs.
func TestServeComparesWhatReportPrints(t *testing.T) {
	t.Parallel() // asserts pages, not rates
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	for _, label := range []string{"a", "b"} {
		code, _, stderr := runCLI(t, nil, "run", "insertbench", "--scale", "tiny", "--steps", "l.i0,l.x,qp100", "--time", "1",
			"--label", label, "--results", results, "--quiet")
		if code != 0 {
			t.Fatalf("run %s: exit %d: %s", label, code, stderr)
		}
	}
	checkServe(t, results, dir)
}

// checkServe serves the store of results (runs 1 and 2, any kind of store) and checks the
// runs page lists both, that the comparison served is the page dbperf report --format
// html writes, and, in Chromium, that ticking both opens it.
func checkServe(t *testing.T, results, dir string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenExisting(ctx, results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := web.New(st)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	code, page := get(t, ts.URL+"/")
	if code != http.StatusOK || !strings.Contains(page, `<a href="/run/1">1</a>`) || !strings.Contains(page, `<a href="/run/2">2</a>`) {
		t.Fatalf("runs page: status %d, both runs listed? %.2000s", code, page)
	}
	code, served := get(t, ts.URL+"/compare?run=1&run=2")
	if code != http.StatusOK {
		t.Fatalf("compare: status %d: %.500s", code, served)
	}
	_, html, stderr := runCLI(t, nil, "report", "--results", results, "--format", "html", "1", "2")
	if stderr != "" {
		t.Fatal(stderr)
	}
	nav := served[strings.Index(served, "<nav") : strings.Index(served, "</nav>")+len("</nav>")]
	if strings.Replace(served, nav, "", 1) != html {
		t.Error("the served comparison is not the page dbperf report --format html writes for the same runs")
	}
	if code, _ := get(t, ts.URL+"/compare?run=2&run=1&base=2"); code != http.StatusOK {
		t.Errorf("compare with a base: status %d", code)
	}

	if browsertest.Chromium() == "" {
		t.Skip("no Chromium: the browser half is not checked")
	}
	bctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	res, err := browsertest.Visit(bctx, ts.URL+"/", filepath.Join(dir, "serve.png"),
		chromedp.Click(chromedp.CSS(`input[name=run][value="1"]`)),
		chromedp.Click(chromedp.CSS(`input[name=run][value="2"]`)),
		chromedp.Click(chromedp.CSS(`#compare button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`svg`)))
	if err != nil {
		t.Fatal(err)
	}
	// 4 charts at least (1-s steps get a note instead of a chart over time).
	if len(res.ConsoleErrors) > 0 || res.SVGCount < 4 || !strings.Contains(res.Title, "dbperf") {
		t.Errorf("Chromium: console errors %q, %d charts, title %q", res.ConsoleErrors, res.SVGCount, res.Title)
	}
	opened := false
	for _, r := range res.Requests {
		if !strings.HasPrefix(r, ts.URL+"/") {
			t.Errorf("a request left %s: %s", ts.URL, r)
		}
		opened = opened || strings.Contains(r, "/compare?") && strings.Contains(r, "run=1") && strings.Contains(r, "run=2")
	}
	if !opened {
		t.Errorf("ticking runs 1 and 2 did not open their comparison: requests %q", res.Requests)
	}

	// The history page's form: tick a step and a second metric, show, and the page asked
	// for is the one with both in its URL, charted.
	res, err = browsertest.Visit(bctx, ts.URL+"/history", filepath.Join(dir, "history.png"),
		chromedp.Click(chromedp.CSS(`form.history input[name=steps][value="l.i0"]`)),
		chromedp.Click(chromedp.CSS(`form.history input[name=metrics][value="p99"]`)),
		chromedp.Click(chromedp.CSS(`form.history button[type=submit]`)),
		// [checked] is the attribute, which a click does not set: only the new page has it.
		chromedp.WaitVisible(chromedp.CSS(`form.history input[name=metrics][value="p99"][checked]`)))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ConsoleErrors) > 0 || res.SVGCount < 2 {
		t.Errorf("history in Chromium: console errors %q, %d charts (want throughput and p99 of l.i0)", res.ConsoleErrors, res.SVGCount)
	}
	shown := false
	for _, r := range res.Requests {
		shown = shown || strings.Contains(r, "/history?") && strings.Contains(r, "steps=l.i0") &&
			strings.Contains(r, "metrics=throughput") && strings.Contains(r, "metrics=p99")
	}
	if !shown {
		t.Errorf("the history form did not ask for l.i0's throughput and p99: requests %q", res.Requests)
	}
}
