package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Issue 11's acceptance: `dbperf sweep insertbench --engine postgres --versions 13,15
// --scale tiny` and the same with `--engine mariadb --versions 10.11,11.4` run both
// versions on managed servers and print their relative report; --resume then skips
// both points. The default (interleaved) design keeps both servers up and runs each step
// on both, in one block; the steps are a subset (the full suite on these engines runs in
// servers_test.go and mariadb114_test.go).
func TestSweepVersions(t *testing.T) {
	t.Parallel() // asserts the sweeps' points, output and stored runs, not rates
	for _, tc := range []struct {
		engine string
		v1, v2 string
	}{
		{"postgres", "13", "15"},
		{"mariadb", "10.11", "11.4"},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			needServer(t, tc.engine)
			// The two engines' sweeps side by side: they assert the sweep's points,
			// output and stored runs, not rates.
			t.Parallel()
			tmp := serverWorkdir(t)
			results := filepath.Join(tmp, "r.db")
			p1, p2 := tc.v1+"/default", tc.v2+"/default"
			args := []string{"sweep", "insertbench", "--engine", tc.engine, "--versions", tc.v1 + "," + tc.v2, "--scale", "tiny",
				"--steps", "l.i0,l.x,qp100", "--time", "1", "--label", "sw", "--results", results, "--workdir", tmp, "--profiles-dir", "../../profiles"}
			code, out, stderr := runCLI(t, nil, args...)
			if code != 0 {
				t.Fatalf("sweep: exit %d: %s\n%s", code, stderr, out)
			}
			waitNoServers(t, tmp)
			for _, want := range []string{p1 + ", " + p2 + " interleaved, 1 block", "block 1 of 1", "qp100 on " + p2,
				"Throughput relative to " + p1, "Geometric mean"} {
				if !strings.Contains(out, want) {
					t.Errorf("sweep output lacks %q:\n%s", want, out)
				}
			}
			rep := reportJSON(t, results, "sw/"+p1, "sw/"+p2)
			if len(rep.Runs) != 2 || !strings.HasPrefix(rep.Runs[0].EngineVersion, tc.v1) || !strings.HasPrefix(rep.Runs[1].EngineVersion, tc.v2) {
				t.Fatalf("sweep runs: %d, versions %q %q", len(rep.Runs), rep.Runs[0].EngineVersion, rep.Runs[len(rep.Runs)-1].EngineVersion)
			}
			for _, r := range rep.Runs {
				if r.Status != "ok" || r.Params["trial"] != "b1/s1" || len(r.Steps) != 3 {
					t.Errorf("run %d: %s, trial %v, %d steps", r.ID, r.Status, r.Params["trial"], len(r.Steps))
				}
			}

			code, out, stderr = runCLI(t, nil, append(args, "--resume")...)
			if code != 0 || !strings.Contains(out, "1 of 1 blocks stored finished, 0 to run") || !strings.Contains(out, p2) {
				t.Errorf("resume: exit %d: %s\n%s", code, stderr, out)
			}
			if n := len(reportJSON(t, results, "sw/"+p1, "sw/"+p2).Runs); n != 2 {
				t.Errorf("resume ran again: %d runs", n)
			}
		})
	}
}

func TestSweepBadInput(t *testing.T) {
	results := filepath.Join(t.TempDir(), "r.db")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"embedded", []string{"sweep", "insertbench", "--engine", "sqlite", "--versions", "1,2"}, "--engine sqlite is embedded"},
		{"embedded unnamed", []string{"sweep", "insertbench", "--engine", "sqlite", "--profiles", "default"}, "named points of one configuration"},
		{"design", []string{"sweep", "insertbench", "--engine", "postgres", "--design", "duo"}, `--design "duo": use interleaved, sequential, duet`},
		{"think unnamed", []string{"sweep", "insertbench", "--engine", "sqlite", "--profiles", "a=default", "--think", "b=1ms"}, "no point is named b"},
		{"server cpus in a duet", []string{"sweep", "insertbench", "--engine", "postgres", "--versions", "15", "--profiles", "a=default,b=default", "--design", "duet", "--server-cpus", "1"}, "--server-cpus: the duet design"},
		{"vary unknown flag", []string{"sweep", "insertbench", "--engine", "sqlite", "--vary", "nope=1,2"}, "the workload has no flag --nope"},
		{"vary the sweep's own", []string{"sweep", "insertbench", "--engine", "sqlite", "--vary", "clients=1,2"}, "--clients is the sweep's or the run's own"},
		{"vary no values", []string{"sweep", "insertbench", "--engine", "sqlite", "--vary", "rows"}, "give FLAG=V1,V2"},
		{"vary a bad value", []string{"sweep", "insertbench", "--engine", "sqlite", "--vary", "rows=abc"}, `invalid argument "abc" for "--rows"`},
		{"think duration", []string{"sweep", "insertbench", "--engine", "sqlite", "--profiles", "a=default", "--think", "a=soon"}, `--think "a=soon": give NAME=DURATION`},
		{"profile name", []string{"sweep", "insertbench", "--engine", "postgres", "--profiles", "a/b=default"}, "name a point NAME=PROFILE"},
		{"profile name escape", []string{"sweep", "insertbench", "--engine", "sqlite", "--profiles", "a\x1b[2J=default"}, "name a point NAME=PROFILE, NAME printable"},
		// Every point's profile is checked before the first point runs (issue 23).
		{"unknown profile", []string{"sweep", "insertbench", "--engine", "postgres", "--profiles", "default,nosuch", "--profiles-dir", "../../profiles"}, "default/nosuch: --profiles"},
		{"dsn", []string{"sweep", "insertbench", "--engine", "postgres", "--dsn", "postgres://u@127.0.0.1:1/x"}, "a sweep starts its own servers"},
		{"resume without label", []string{"sweep", "insertbench", "--engine", "postgres", "--resume"}, "--resume needs the --label"},
		{"no workload", []string{"sweep"}, "sweep needs one workload"},
		{"unknown workload", []string{"sweep", "tpcc"}, `unknown workload "tpcc"`},
	} {
		args := tc.args
		if len(args) > 2 {
			args = append(args, "--results", results)
		}
		code, _, stderr := runCLI(t, nil, args...)
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want 2 and %q", tc.name, code, stderr, tc.want)
		}
	}
	// Refused before anything ran: no results store was made.
	if _, err := os.Stat(results); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused sweep left a results store: %v", err)
	}
}

// relCell is a cell of the JSON comparison's table id (row: the config, column: the step).
type relCell struct {
	Value   float64  `json:"value"`
	N       int      `json:"n"`
	Class   string   `json:"class"`
	Verdict *string  `json:"verdict"`
	CILo    *float64 `json:"ci_lo"`
	CIHi    *float64 `json:"ci_hi"`
	Paired  *bool    `json:"paired"`
}

// comparisonCell reads one cell of `dbperf report --format json`'s comparison.
func comparisonCell(t *testing.T, results, table, config, step string, refs ...string) relCell {
	t.Helper()
	code, out, stderr := runCLI(t, nil, append([]string{"report", "--results", results, "--format", "json"}, refs...)...)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	var rep struct {
		Comparison struct {
			Tables []struct {
				ID      string   `json:"id"`
				Columns []string `json:"columns"`
				Rows    []struct {
					Head  []string   `json:"head"`
					Cells []*relCell `json:"cells"`
				} `json:"rows"`
			} `json:"tables"`
		} `json:"comparison"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report JSON: %v", err)
	}
	for _, tb := range rep.Comparison.Tables {
		if tb.ID != table {
			continue
		}
		col := slices.Index(tb.Columns, step)
		for _, r := range tb.Rows {
			if col >= 0 && len(r.Head) > 0 && r.Head[len(r.Head)-1] == config && r.Cells[col] != nil {
				return *r.Cells[col]
			}
		}
	}
	t.Fatalf("no %s cell for %s %s in the comparison:\n%s", table, config, step, out)
	return relCell{}
}

// The interleaved design on embedded SQLite (issue 22's short A/A and known effect, as
// make test runs them; scripts/comparisons.py measures them in full): three points of one
// configuration, c with a client think time. a and b (A/A) must not be called different
// in qp100's throughput; c's ratio to a must hold the one its think time predicts from the
// latencies measured: (L_a + o)/(L_c + pause + o), L a point's mean service time per query
// and o the loop's own time per query (a's 1/rate − L_a). A 95% interval misses now and
// then by design (an A/A is called different in a few percent of comparisons): a miss is
// measured once more, and fails the test only when it happens again.
func TestSweepInterleavedSQLite(t *testing.T) {
	tmp := t.TempDir()
	results := filepath.Join(tmp, "r.db")
	const blocks = 6
	sweep := func(label string) {
		code, out, stderr := runCLI(t, nil, "sweep", "insertbench", "--engine", "sqlite", "--profiles", "a=default,b=default,c=default",
			"--think", "c=1ms", "--scale", "tiny", "--rows", "20000", "--steps", "l.i0,qp100", "--time", "1", "--slice", "0.5",
			"--repeat", fmt.Sprint(blocks), "--label", label, "--results", results)
		if code != 0 {
			t.Fatalf("sweep: exit %d: %s\n%s", code, stderr, out)
		}
		// A 0.5-s slice would hold no whole interval of the scale's 1 s: it is measured in
		// intervals of 0.1 s (sweep.SliceInterval).
		for _, want := range []string{"a, b, c interleaved, 6 blocks", "measurement intervals of 100ms, five to a 500ms slice", "block 6 of 6", "qp100 slice 2 of 2 on c", "Throughput relative to a"} {
			if !strings.Contains(out, want) {
				t.Errorf("sweep output lacks %q:\n%s", want, out)
			}
		}
	}
	// check reads sweep label's runs and returns what its statistics got wrong.
	check := func(label string) (problems []string) {
		refs := []string{label + "/a", label + "/b", label + "/c"}
		// Per point: a block's first run (l.i0 and qp100's first slice) and its second slice's.
		rep := reportJSON(t, results, refs...)
		if len(rep.Runs) != 3*2*blocks {
			t.Fatalf("%d runs, want %d", len(rep.Runs), 3*2*blocks)
		}
		var rateA, thinkC, svcA, svcC []float64
		trials := map[string]int{}
		for _, r := range rep.Runs {
			trials[fmt.Sprint(r.Params["trial"])]++
			if r.Status != "ok" || r.Params["design"] != "interleaved" || r.Params["sweep"] != label || r.Params["report_interval_sec"] != 0.1 {
				t.Errorf("run %d: status %s, params %v", r.ID, r.Status, r.Params)
			}
			for _, s := range r.Steps {
				if s.Name != "qp100" {
					continue
				}
				switch r.Params["think_us"] {
				case nil: // a's and b's: identical configs
					rateA = append(rateA, s.Ops["point-query"].PerSec)
					if v, ok := s.HW["service_us_per_op"].(float64); ok {
						svcA = append(svcA, v)
					}
				default:
					if v, ok := s.HW["think_us_per_op"].(float64); ok {
						thinkC = append(thinkC, v)
					}
					if v, ok := s.HW["service_us_per_op"].(float64); ok {
						svcC = append(svcC, v)
					}
				}
			}
		}
		if len(trials) != 2*blocks {
			t.Errorf("trials %v: want b1/s1 … b%d/s2, three runs each", trials, blocks)
		}
		for k, n := range trials {
			if n != 3 {
				t.Errorf("trial %s: %d runs, want 3", k, n)
			}
		}
		if len(thinkC) == 0 || len(svcA) == 0 || len(svcC) == 0 {
			t.Fatalf("qp100: think_us_per_op in %d of c's steps, service_us_per_op in %d of a's and %d of c's", len(thinkC), len(svcA), len(svcC))
		}
		median := func(x []float64) float64 { slices.Sort(x); return x[len(x)/2] }
		// From the latencies measured: a's cycle 1/rate = its service time + the loop's own
		// time o; c's is its service time + the pause + o (the rates count one worker).
		ra, th, la, lc := median(rateA), median(thinkC), median(svcA), median(svcC)
		o := 1e6/ra - la
		want := (la + o) / (lc + th + o)

		aa := comparisonCell(t, results, "relative", label+"/b", "qp100", refs...)
		if aa.Verdict == nil || aa.Paired == nil || !*aa.Paired || aa.CILo == nil {
			t.Fatalf("A/A qp100 cell has no paired verdict: %+v", aa)
		}
		if v := *aa.Verdict; v == "higher" || v == "lower" || aa.Class == "better" || aa.Class == "worse" {
			problems = append(problems, fmt.Sprintf("A/A: b vs a qp100 called %s (%s), ratio %.3f [%.3f–%.3f]", v, aa.Class, aa.Value, *aa.CILo, *aa.CIHi))
		}
		ke := comparisonCell(t, results, "relative", label+"/c", "qp100", refs...)
		if ke.Verdict == nil || ke.CILo == nil {
			t.Fatalf("known effect: c vs a qp100 has no verdict: %+v", ke)
		}
		if *ke.Verdict != "lower" || ke.Class != "worse" {
			problems = append(problems, fmt.Sprintf("known effect: c vs a qp100 called %s (%s), not slower", *ke.Verdict, ke.Class))
		}
		// The interval must hold the predicted ratio (1% of slack: the prediction is from
		// the slices' medians, the interval from the blocks' means).
		if lo, hi := *ke.CILo*0.99, *ke.CIHi*1.01; want < lo || want > hi {
			problems = append(problems, fmt.Sprintf("known effect: predicted ratio %.4f (rate %.0f/s, service %.1f → %.1f µs, pause %.0f µs) outside c's interval %.4f [%.4f–%.4f]",
				want, ra, la, lc, th, ke.Value, *ke.CILo, *ke.CIHi))
		}
		t.Logf("%s: A/A %s %.3f [%.3f–%.3f]; known effect %.4f [%.4f–%.4f], predicted %.4f", label, *aa.Verdict, aa.Value, *aa.CILo, *aa.CIHi,
			ke.Value, *ke.CILo, *ke.CIHi, want)
		return problems
	}
	sweep("il")
	if problems := check("il"); len(problems) > 0 {
		t.Logf("measured again after: %s", strings.Join(problems, "; "))
		sweep("il2")
		for _, p := range check("il2") {
			t.Error(p)
		}
	}
}

// The duet design on embedded SQLite: both points' trials at once, each on a CPU of its
// own; per-op figures of the shared machine (cpupq) are left out, each point's client CPU
// is its own worker threads'.
func TestSweepDuetSQLite(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("a duet needs a CPU per point")
	}
	tmp := t.TempDir()
	results := filepath.Join(tmp, "r.db")
	code, out, stderr := runCLI(t, nil, "sweep", "insertbench", "--engine", "sqlite", "--profiles", "a=default,b=default",
		"--design", "duet", "--scale", "tiny", "--rows", "20000", "--steps", "l.i0,qp100", "--time", "2", "--slice", "1",
		"--repeat", "2", "--label", "du", "--results", results)
	if code != 0 {
		t.Fatalf("sweep: exit %d: %s\n%s", code, stderr, out)
	}
	for _, want := range []string{"a, b in a duet, 2 blocks", "qp100 slice 2 of 2 on a (run", ") at once", "duet design", "duet: the configs ran at the same time"} {
		if !strings.Contains(flat(out), want) {
			t.Errorf("sweep output lacks %q:\n%s", want, out)
		}
	}
	rep := reportJSON(t, results, "du/a", "du/b")
	if len(rep.Runs) != 2*2*2 {
		t.Fatalf("%d runs, want 8", len(rep.Runs))
	}
	for _, r := range rep.Runs {
		if r.Status != "ok" || r.Params["design"] != "duet" {
			t.Errorf("run %d: %s, design %v", r.ID, r.Status, r.Params["design"])
		}
		for _, s := range r.Steps {
			if s.Name != "qp100" {
				continue
			}
			if _, ok := s.HW["cpupq"]; ok {
				t.Errorf("run %d qp100: cpupq %v of a machine both points shared", r.ID, s.HW["cpupq"])
			}
			// The point's worker threads' CPU: less than the step's wall time on one CPU.
			if s.ClientCPUSec <= 0 || s.ClientCPUSec > 1.2*s.Seconds {
				t.Errorf("run %d qp100: client CPU %.3f s in %.3f s on one CPU", r.ID, s.ClientCPUSec, s.Seconds)
			}
		}
	}
}
