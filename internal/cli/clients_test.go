package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/probe"
	"github.com/dbperf/dbperf/internal/profile"
	"github.com/dbperf/dbperf/internal/store"
)

func TestClientsValue(t *testing.T) {
	for _, tc := range []struct {
		in    string
		sweep bool
		n     int
		list  []int
		err   string
	}{
		{"4", false, 4, nil, ""},
		{"4", true, 4, []int{4}, ""},
		{"1,2,4", true, 1, []int{1, 2, 4}, ""},
		{" 8, 2 ,2", true, 8, []int{8, 2}, ""},
		{"1,2,4", false, 0, nil, "dbperf run insertbench takes one count of clients; to compare counts sweep them: dbperf sweep insertbench --clients 1,2,4"},
		{"0", true, 0, []int{0}, ""}, // refused by config.Run.Validate with the other problems
		{"2,x", true, 0, nil, `"x" is not a count of clients`},
		{"", false, 0, nil, `"" is not a count of clients`},
	} {
		var n int
		var list []int
		v := &clientsValue{n: &n, cmd: "dbperf run insertbench"}
		if tc.sweep {
			v.list, v.cmd = &list, "dbperf sweep insertbench"
		}
		err := v.Set(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q (sweep %v): error %v, want %q", tc.in, tc.sweep, err, tc.err)
			}
			continue
		}
		if err != nil || n != tc.n || len(list) != len(tc.list) || v.String() == "" {
			t.Errorf("%q (sweep %v): n %d, list %v, %v; want %d %v", tc.in, tc.sweep, n, list, err, tc.n, tc.list)
		}
		for i := range tc.list {
			if list[i] != tc.list[i] {
				t.Errorf("%q: list %v, want %v", tc.in, list, tc.list)
			}
		}
	}
}

// TestSweepClients: dbperf sweep --clients 1,2 runs each point at each count (points
// named …/c1, …/c2, each run stored with its count) and prints the throughput by
// clients and relative to the first count; dbperf run refuses a list with the sweep to
// use.
func TestSweepClients(t *testing.T) {
	t.Parallel() // asserts the points, their runs and profiles' files, not rates
	if testing.Short() {
		t.Skip("runs the workload")
	}
	dir := t.TempDir()
	results := dir + "/r.db"
	code, out, errOut := runCLI(t, nil, "sweep", "insertbench", "--engine", "sqlite", "--clients", "1,2", "--scale", "tiny",
		"--steps", "l.i0,qp100", "--time", "0.3", "--results", results, "--label", "cc", "--design", "sequential",
		"--cpu-profile", dir+"/prof")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"default/c1 (base)", "default/c2:", "Throughput by clients\nstep   config   1 client  2 clients\nl.i0   default",
		"Throughput by clients relative to 1 client\n", "need --force there"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, nil, "runs", "--results", results)
	if code != 0 || !strings.Contains(out, "cc/default/c1") || !strings.Contains(out, "cc/default/c2") {
		t.Errorf("runs: exit %d\n%s", code, out)
	}
	// --cpu-profile in a sequential sweep: every point's run has its steps' profiles
	// (SQLite is embedded: dbperf's own samples, role client), stored and on disk.
	// Without perf (needPerf's reasons) the runs say why in their env instead.
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Results(context.Background(), []int64{1, 2})
	st.Close()
	if err != nil || len(runs) != 2 {
		t.Fatalf("results: %d runs, %v", len(runs), err)
	}
	for _, r := range runs {
		env := r.Env[probe.EnvCPU]
		if strings.HasPrefix(env, "none: ") && profile.Available(context.Background()) != nil {
			continue
		}
		if !strings.Contains(env, "perf record") {
			t.Errorf("run %d: env cpu_profile %q", r.ID, env)
		}
		for _, s := range r.Steps {
			if !slices.ContainsFunc(s.Profiles, func(p store.StepProfile) bool { return p.Role == probe.RoleClient && p.Samples > 0 }) {
				t.Errorf("run %d step %s: stored profiles %v", r.ID, s.Result.Name, s.Profiles)
			}
		}
		if _, err := os.Stat(fmt.Sprintf("%s/prof/run-%d/qp100.client.folded", dir, r.ID)); err != nil {
			t.Errorf("run %d: %v", r.ID, err)
		}
	}
	code, _, errOut = runCLI(t, nil, "run", "insertbench", "--clients", "1,2", "--results", results)
	if code != ExitBadInput || !strings.Contains(errOut, "dbperf sweep insertbench --clients 1,2") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("run --clients 1,2: exit %d, %q", code, errOut)
	}
}

// TestSweepVary: --vary rows=…,… sweeps a workload parameter, interleaved: each point
// named by its value and stored with it, the axes after --clients.
func TestSweepVary(t *testing.T) {
	t.Parallel() // asserts the points and their parameters
	if testing.Short() {
		t.Skip("runs the workload")
	}
	results := t.TempDir() + "/r.db"
	code, out, errOut := runCLI(t, nil, "sweep", "insertbench", "--engine", "sqlite", "--clients", "1,2", "--vary", "rows=20000,30000",
		"--scale", "tiny", "--steps", "l.i0", "--results", results, "--label", "vv", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	// The points differ in rows and clients: report compares them only with --force.
	rep := reportJSON(t, results, "1", "2", "3", "4", "--force")
	got := map[string]string{}
	for _, r := range rep.Runs {
		got[r.Label] = fmt.Sprint(r.Params["rows"], " ", r.Params["clients"])
	}
	want := map[string]string{"vv/default/c1/rows=20000": "20000 1", "vv/default/c1/rows=30000": "30000 1",
		"vv/default/c2/rows=20000": "20000 2", "vv/default/c2/rows=30000": "30000 2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("runs by label: %v, want %v", got, want)
	}
}
