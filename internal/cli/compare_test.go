package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/browsertest"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/store"
)

// TestRepeatReportCompare is issue 5's acceptance on real SQLite: two configs labelled a
// and b, five repeats each at tiny scale on three steps; the report against a prints
// every table, the HTML page is one offline file, compare prints one row per step with
// the change and its 95% interval, and bad references fail cleanly.
func TestRepeatReportCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the Insert Benchmark 10 times")
	}
	// Beside the other parallel tests: it asserts the reports' contents, not rates.
	t.Parallel()
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	for _, label := range []string{"a", "b"} {
		code, out, stderr := runCLI(t, nil, "run", "insertbench", "--scale", "tiny", "--steps", "l.i0,l.x,qp100",
			"--time", "1", "--repeat", "5", "--label", label, "--results", results)
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
	// 4 charts at least: the relative bars and the runs' steps; a step of one interval
	// (--time 1) gets a note instead of a chart over time (issue 42).
	if strings.Contains(string(page), "http://") || strings.Contains(string(page), "https://") || strings.Count(string(page), "<svg") < 4 {
		t.Errorf("html page: %d charts, or a network reference", strings.Count(string(page), "<svg"))
	}
	if browsertest.Chromium() != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		res, err := browsertest.Open(ctx, html, filepath.Join(dir, "r.png"))
		if err != nil || len(res.ConsoleErrors) > 0 || len(res.Requests) > 0 || res.SVGCount < 4 {
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
			// b's change against a with its interval: "+4.1% [+1.2% +7.0%]"
			found = slices.ContainsFunc(f, func(s string) bool { return strings.HasSuffix(s, "%") && strings.ContainsAny(s[:1], "+-") }) &&
				strings.Contains(l, "[")
		}
		if !found {
			t.Errorf("compare has no row for %s with a change and its interval:\n%s", step, cmp)
		}
	}
	// l.x's figure is its duration among rates: its row says which way is better (issue 42).
	if !strings.Contains(cmp, "l.x (time: lower is better)") {
		t.Errorf("compare's l.x row does not say lower is better:\n%s", cmp)
	}
	if !strings.Contains(cmp, "(n=5)") || !strings.Contains(cmp, "b vs a (base)") || !strings.Contains(cmp, "mde") {
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
		{[]string{"compare", "a", "b", "--metric", "speed"}, `--metric "speed": use one of throughput, p99, cpupq`},
		{[]string{"compare", "a"}, "compare needs two configs or more"},
		{[]string{"report", "a", "--format", "html", "-o", filepath.Join(dir, "missing", "r.html")}, "cannot write"},
	} {
		code, out, stderr := runCLI(t, nil, append(tc.args, "--results", results)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != ExitBadInput || len(lines) != 1 || !strings.Contains(stderr, tc.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, out, stderr, tc.want)
		}
	}
}

// storedRun is a run writeStore stores: its label, workload and params, and l.i0's rows/s
// and qp100's queries/s and p99 (µs).
type storedRun struct {
	label, workload string
	params          map[string]any
	env             map[string]string
	load, query     float64
	p99             int64
}

// writeStore stores runs (ids 1, 2, …) through the store's writer, each with an l.i0 load
// and a qp100 query step of 10 s: a results store without running a benchmark.
func writeStore(t *testing.T, runs []storedRun) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.db")
	ctx := context.Background()
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for i, r := range runs {
		start := t0.Add(time.Duration(i) * time.Hour)
		params := map[string]any{"scale": "tiny", "clients": 1, "rows": 100000}
		for k, v := range r.params {
			params[k] = v
		}
		env := map[string]string{}
		for k, v := range r.env {
			env[k] = v
		}
		id, err := st.BeginRun(ctx, store.RunMeta{Workload: r.workload, WorkloadVersion: 3, Engine: "sqlite", EngineVersion: "3.46.1",
			EngineSettings: map[string]string{}, Label: r.label, Seed: 1, Params: params, Env: env, StartedAt: start})
		if err != nil {
			t.Fatal(err)
		}
		for seq, step := range []struct {
			name, kind, label, role string
			unit                    metrics.Unit
			rate                    float64
		}{{"l.i0", "load", "insert", "insert", metrics.UnitRows, r.load}, {"qp100", "read-write", "point-query", "query", metrics.UnitOps, r.query}} {
			sid, err := st.BeginStep(ctx, id, seq+1, step.name, "", start)
			if err != nil {
				t.Fatal(err)
			}
			n := int64(step.rate * 10)
			l := metrics.LabelStats{Label: step.label, Role: step.role, Unit: step.unit, Statements: n, Events: n, Rows: n,
				Service: metrics.Latency{P50: r.p99 / 2, P90: r.p99 * 3 / 4, P99: r.p99, P999: r.p99 * 2, Max: r.p99 * 3}}
			if err := st.FinishStep(ctx, sid, metrics.StepResult{Name: step.name, Status: metrics.StatusOK, StartedAt: start,
				Seconds: 10, Kind: step.kind, Primary: step.label, Labels: []metrics.LabelStats{l},
				Audit: metrics.Audit{Status: "ok"}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.FinishRun(ctx, id, store.RunOK, start.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestCompareMismatch (issue 22): report and compare refuse runs that differ in workload,
// scale or parameters with exit status 2, one line naming each difference and --force,
// and nothing written; with --force they warn once per difference on stderr and go on.
func TestCompareMismatch(t *testing.T) {
	results := writeStore(t, []storedRun{
		{label: "a", workload: "insertbench", load: 50000, query: 5000, p99: 400},                                                            // 1
		{label: "a", workload: "insertbench", load: 50500, query: 5010, p99: 410},                                                            // 2
		{label: "b", workload: "insertbench", load: 60000, query: 5020, p99: 380, params: map[string]any{"profile": "cached", "repeat": 4}},  // 3
		{label: "c", workload: "insertbench", load: 40000, query: 4000, p99: 500, params: map[string]any{"scale": "small", "rows": 1000000}}, // 4
		{label: "s", workload: "sysbench", load: 1000, query: 1000, p99: 100},                                                                // 5
		{label: "mixed", workload: "insertbench", load: 50000, query: 5000, p99: 400},                                                        // 6
		{label: "mixed", workload: "insertbench", load: 50000, query: 5000, p99: 400, params: map[string]any{"rows": 200000}},                // 7
	})
	out := filepath.Join(t.TempDir(), "r.html")
	for _, c := range []struct {
		args []string
		want []string // in the one error line
	}{
		{[]string{"compare", "a", "c"}, []string{"scale: tiny (a) vs small (c)", "rows: 100000 (a) vs 1000000 (c)", "--force"}},
		{[]string{"compare", "b", "a", "c", "--metric", "p99"}, []string{"scale: tiny (b, a) vs small (c)", "--force"}},
		{[]string{"report", "a", "c", "--format", "html", "-o", out}, []string{"scale: tiny (a) vs small (c)", "--force"}},
		{[]string{"report", "1", "5"}, []string{"workload: insertbench (run 1) vs sysbench (run 5)"}},
		{[]string{"report", "mixed"}, []string{"rows differs within mixed: 100000 (run 6) vs 200000 (run 7)"}},
	} {
		code, stdout, stderr := runCLI(t, nil, append(c.args, "--results", results)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != ExitBadInput || len(lines) != 1 || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line", c.args, code, stdout, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: no %q in %q", c.args, w, stderr)
			}
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused report wrote %s: %v", out, err)
	}

	code, stdout, stderr := runCLI(t, nil, "report", "a", "c", "--format", "html", "-o", out, "--force", "--results", results)
	if code != 0 || stdout != "" {
		t.Fatalf("report --force: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if warn := strings.Split(strings.TrimSpace(stderr), "\n"); len(warn) != 2 || !strings.Contains(warn[0], "warning") ||
		!strings.Contains(warn[0], "scale: tiny (a) vs small (c)") || !strings.Contains(warn[1], "rows: 100000 (a) vs 1000000 (c)") {
		t.Errorf("report --force: stderr %q, want a warning line per difference", stderr)
	}
	if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("report --force wrote no page: %v", err)
	}
	code, stdout, stderr = runCLI(t, nil, "compare", "a", "c", "--force", "--results", results)
	if code != 0 || strings.Count(stderr, "warning") != 2 || !strings.Contains(stdout, "c vs a (base)") {
		t.Errorf("compare --force: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// What comparisons vary (profile) and bookkeeping (repeat) are no difference.
	code, stdout, stderr = runCLI(t, nil, "compare", "a", "b", "--results", results)
	if code != 0 || stderr != "" || !strings.Contains(stdout, "b vs a (base)") {
		t.Errorf("compare a b: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestCompareConfigs (issue 22): compare takes three configs and --base, and every metric
// history takes, repeated or comma-separated, one table each.
func TestCompareConfigs(t *testing.T) {
	results := writeStore(t, []storedRun{
		{label: "a", workload: "insertbench", load: 50000, query: 5000, p99: 400},
		{label: "a", workload: "insertbench", load: 50500, query: 5010, p99: 410},
		{label: "b", workload: "insertbench", load: 60000, query: 5020, p99: 380},
		{label: "c", workload: "insertbench", load: 40000, query: 4000, p99: 500},
	})
	code, stdout, stderr := runCLI(t, nil, "compare", "a", "b", "c", "--base", "b", "--metric", "throughput,p99", "--metric", "server_cpupq",
		"--results", results)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"throughput (rows/s, q/s): a, c vs b (base)", "p99, lower is better: a, c vs b (base)", "server_cpupq: a, c vs b (base)",
		"no step of these runs has server_cpupq", "a vs b", "c vs b", "mde", "(n=2)", "60000 (n=1)", "(-33.3%)", "405µs ± 1.2% (n=2)", "a verdict needs 4 runs per config"} {
		if !strings.Contains(flat(stdout), want) {
			t.Errorf("no %q in:\n%s", want, stdout)
		}
	}
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "l.i0") || strings.HasPrefix(l, "qp100") {
			if strings.Contains(l, "[") || strings.Contains(l, "~") || strings.Contains(l, "?") {
				t.Errorf("a verdict with 1 or 2 runs per config: %s", l)
			}
		}
	}
}
