package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/browsertest"
)

// TestRepeatReportCompare is issue 5's acceptance on real SQLite: two configs labelled a
// and b, five repeats each at tiny scale on three steps; the report against a prints
// every table, the HTML page is one offline file, compare prints one row per step with
// delta and p-value, and bad references fail cleanly.
func TestRepeatReportCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the Insert Benchmark 10 times")
	}
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	for _, label := range []string{"a", "b"} {
		code, out, stderr := runCLI(t, nil, "run", "insertbench", "--scale", "tiny", "--steps", "l.i0,l.x,qp100",
			"--repeat", "5", "--label", label, "--results", results)
		if code != 0 {
			t.Fatalf("run %s: exit %d: %s", label, code, stderr)
		}
		if !strings.Contains(out, "repeat 5 of 5, label "+label) || !strings.Contains(out, "5 runs labelled "+label) {
			t.Errorf("run --repeat 5 output:\n%s", out)
		}
	}
	if n := len(reportJSON(t, results, "a").Runs); n != 5 {
		t.Fatalf("label a has %d runs, want 5", n)
	}

	code, text, stderr := runCLI(t, nil, "report", "--results", results, "--base", "a", "a", "b")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"a (base): insertbench on sqlite", "5 runs", "Throughput (absolute)",
		"Throughput relative to a", "Geometric mean", "Background writers", "qp100 insert", "target",
		"HW efficiency (absolute)", "HW efficiency relative to a", "cpupq", "Server CPU per connection role",
		"client_process", "Latency (service time)", "point-query", "["} {
		if !strings.Contains(text, want) {
			t.Errorf("report has no %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "\x1b[") {
		t.Error("colour codes when not on a terminal")
	}

	html := filepath.Join(dir, "r.html")
	if code, _, stderr := runCLI(t, nil, "report", "--results", results, "a", "b", "--format", "html", "-o", html); code != 0 {
		t.Fatalf("html: exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "http://") || strings.Contains(string(page), "https://") || strings.Count(string(page), "<svg") < 5 {
		t.Errorf("html page: %d charts, or a network reference", strings.Count(string(page), "<svg"))
	}
	if browsertest.Chromium() != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		res, err := browsertest.Open(ctx, html, filepath.Join(dir, "r.png"))
		if err != nil || len(res.ConsoleErrors) > 0 || len(res.Requests) > 0 || res.SVGCount < 5 {
			t.Errorf("Chromium: %v, console errors %q, requests %q, %d charts", err, res.ConsoleErrors, res.Requests, res.SVGCount)
		}
	}
	for _, f := range []string{"md", "csv", "tsv", "json"} {
		code, out, stderr := runCLI(t, nil, "report", "--results", results, "a", "b", "--format", f)
		if code != 0 || !strings.Contains(out, "relative") || !strings.Contains(out, "qp100") {
			t.Errorf("--format %s: exit %d %s\n%.300s", f, code, stderr, out)
		}
	}

	code, cmp, stderr := runCLI(t, nil, "compare", "a", "b", "--results", results)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(cmp), "\n")
	for _, step := range []string{"l.i0", "l.x", "qp100"} {
		found := false
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) < 4 || f[0] != step {
				continue
			}
			_, pErr := strconv.ParseFloat(f[len(f)-1], 64)
			hasDelta := slices.ContainsFunc(f, func(s string) bool { return strings.HasSuffix(s, "%") && strings.ContainsAny(s[:1], "+-") })
			found = pErr == nil && hasDelta
		}
		if !found {
			t.Errorf("compare has no row for %s with a delta and a p-value:\n%s", step, cmp)
		}
	}
	if !strings.Contains(cmp, "(n=5)") || !strings.Contains(cmp, "p-value") {
		t.Errorf("compare output:\n%s", cmp)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "a", "nosuchlabel"}, `no run with id or label "nosuchlabel"`},
		{[]string{"report", "a", "999"}, "run 999 not found"},
		{[]string{"report", "a", "b", "--base", "c"}, "--base c is not among the reported runs (a, b)"},
		{[]string{"report", "a", "a"}, `"a" is named twice`},
		{[]string{"compare", "a", "zzz"}, `no run with id or label "zzz"`},
		{[]string{"compare", "a", "b", "--metric", "speed"}, `--metric "speed": use one of throughput, cpupq`},
		{[]string{"report", "a", "--format", "html", "-o", filepath.Join(dir, "missing", "r.html")}, "cannot write"},
	} {
		code, out, stderr := runCLI(t, nil, append(tc.args, "--results", results)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != ExitBadInput || len(lines) != 1 || !strings.Contains(stderr, tc.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, out, stderr, tc.want)
		}
	}
}
