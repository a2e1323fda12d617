package cli

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The change-point acceptance, on a stored series: the runs of a tiny l.i0 whose profile
// "nightly" turned durability on half way through (the same profile name, its content
// changed, as when a deployment's config changes) run ten times slower from then on, with
// ±3% noise; the same number of runs of profile "steady" never change. `dbperf history`
// reports a change point at the first slow run, a regression, and --fail-on-regression
// exits 3; on the steady series it finds none and the gate exits 0. The runs are written
// through the store's writer (writeStore) rather than measured: what is tested is the
// history, and 25 managed servers cost a minute of every test run. TestHistoryManaged
// checks the same flow end to end on two real runs.
func TestHistoryFindsAConfigChange(t *testing.T) {
	const perHalf = 6
	rng := rand.New(rand.NewPCG(22, 24))
	noisy := func(v float64) float64 { return v * (1 + 0.03*(2*rng.Float64()-1)) }
	var runs []storedRun
	for i := range 2 * perHalf {
		nightly := 5000.0
		if i >= perHalf {
			nightly = 500 // commit_delay = 2 ms caps one row per commit at 500 rows/s
		}
		for _, p := range []struct {
			profile string
			load    float64
		}{{"nightly", nightly}, {"steady", 5000}} {
			runs = append(runs, storedRun{label: p.profile, workload: "insertbench", load: noisy(p.load), query: noisy(4000), p99: 300,
				params: map[string]any{"profile": p.profile, "rows": 2000},
				env:    map[string]string{"build_id": fmt.Sprintf("%s-%d", p.profile, i), "hostname": "ci"}})
		}
	}
	results := writeStore(t, runs)

	// Six runs on each side: a permutation test over so few points cannot reach Otava's
	// default p ≤ 0.001 (that takes eight a side), so the test asks for p ≤ 0.01 as a user
	// with few runs would (README), and ignores changes under 40% (this machine's noise; the change here is tenfold).
	code, out, stderr := runCLI(t, nil, "history", "--results", results, "--format", "json", "--steps", "l.i0", "--p-value", "0.01", "--min-change", "40")
	if code != 0 {
		t.Fatalf("history: exit %d: %s", code, stderr)
	}
	var h struct {
		Series []struct {
			Title string `json:"title"`
			Runs  []struct {
				ID      int64  `json:"id"`
				BuildID string `json:"build_id"`
			} `json:"runs"`
			Lines []struct {
				Step    string     `json:"step"`
				Metric  string     `json:"metric"`
				Values  []*float64 `json:"values"`
				Changes []struct {
					Position  int     `json:"position"`
					ChangePct float64 `json:"change_pct"`
					Verdict   string  `json:"verdict"`
				} `json:"change_points"`
			} `json:"lines"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(h.Series) != 2 {
		t.Fatalf("%d series, want 2 (profiles nightly and steady):\n%s", len(h.Series), out)
	}
	for _, s := range h.Series {
		if len(s.Runs) != 2*perHalf || len(s.Lines) != 1 || s.Lines[0].Step != "l.i0" || s.Lines[0].Metric != "throughput" {
			t.Fatalf("%s: %d runs, lines %+v", s.Title, len(s.Runs), s.Lines)
		}
		l := s.Lines[0]
		vals := make([]string, len(l.Values))
		for i, v := range l.Values {
			vals[i] = fmt.Sprintf("%.0f", *v)
		}
		t.Logf("%s: rows/s %s", s.Title, strings.Join(vals, " "))
		if strings.Contains(s.Title, "steady") {
			if len(l.Changes) != 0 {
				t.Errorf("steady series: change points %+v", l.Changes)
			}
			continue
		}
		if len(l.Changes) == 0 {
			t.Fatalf("nightly series: no change point")
		}
		c := l.Changes[len(l.Changes)-1]
		if c.Position != perHalf || c.Verdict != "worse" || c.ChangePct > -30 {
			t.Errorf("nightly series: change %+v, want at position %d (build %s), worse by at least 30%%", c, perHalf, s.Runs[perHalf].BuildID)
		}
	}

	code, _, stderr = runCLI(t, nil, "history", "--results", results, "--steps", "l.i0", "--p-value", "0.01", "--min-change", "40", "--fail-on-regression", "30", "--recent", "6")
	if code != ExitRegression || !strings.Contains(stderr, "regression: ") || !strings.Contains(stderr, "nightly") || strings.Contains(stderr, "steady") {
		t.Errorf("--fail-on-regression: exit %d, want %d naming the nightly series only:\n%s", code, ExitRegression, stderr)
	}
	code, _, stderr = runCLI(t, nil, "history", "--results", results, "--steps", "l.i0", "--p-value", "0.01", "--min-change", "40", "--profile", "steady", "--fail-on-regression", "30", "--recent", "6")
	if code != 0 {
		t.Errorf("--fail-on-regression on the steady series: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, nil, "history", "--results", results, "--steps", "l.i0", "--p-value", "0.01", "--min-change", "40", "--fail-on-regression", "30", "--recent", "3")
	if code != 0 {
		t.Errorf("--fail-on-regression with the change older than --recent: exit %d: %s", code, stderr)
	}
}

// TestHistoryManaged is the history's end to end smoke on real runs: two tiny l.i0 runs on
// managed PostgreSQL with a profile from --profiles-dir and --build-id, then `dbperf
// history` shows them as one series, oldest first, named by their build ids, and the gate
// passes (two runs cannot make a change point).
func TestHistoryManaged(t *testing.T) {
	t.Parallel() // asserts the stored build ids and the history's text
	needServer(t, "postgres")
	tmp := serverWorkdir(t)
	results := filepath.Join(tmp, "r.db")
	profiles := filepath.Join(tmp, "profiles", "postgres")
	if err := os.MkdirAll(profiles, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profiles, "nightly.conf"), []byte("fsync = off\nsynchronous_commit = off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		code, _, stderr := runCLI(t, nil, "run", "insertbench", "--engine", "postgres", "--managed",
			"--profile", "nightly", "--profiles-dir", filepath.Join(tmp, "profiles"), "--workdir", filepath.Join(tmp, "w"),
			"--scale", "tiny", "--steps", "l.i0", "--rows", "2000",
			"--build-id", fmt.Sprintf("build-%d", i), "--results", results, "--quiet")
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, stderr)
		}
	}
	code, out, stderr := runCLI(t, nil, "history", "--results", results, "--format", "json", "--steps", "l.i0")
	if code != 0 {
		t.Fatalf("history: exit %d: %s", code, stderr)
	}
	var h struct {
		Series []struct {
			Runs []struct {
				BuildID string `json:"build_id"`
			} `json:"runs"`
			Lines []struct {
				Values []*float64 `json:"values"`
			} `json:"lines"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(h.Series) != 1 || len(h.Series[0].Runs) != 2 || h.Series[0].Runs[0].BuildID != "build-0" || h.Series[0].Runs[1].BuildID != "build-1" ||
		len(h.Series[0].Lines) != 1 || len(h.Series[0].Lines[0].Values) != 2 || h.Series[0].Lines[0].Values[1] == nil || *h.Series[0].Lines[0].Values[1] <= 0 {
		t.Fatalf("history of two managed runs:\n%s", out)
	}
	if code, _, stderr := runCLI(t, nil, "history", "--results", results, "--steps", "l.i0", "--fail-on-regression", "30"); code != 0 {
		t.Errorf("--fail-on-regression over two runs: exit %d: %s", code, stderr)
	}
}
