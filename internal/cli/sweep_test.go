package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// The issue's acceptance: `dbperf sweep insertbench --engine postgres --versions 13,15
// --scale tiny` and the same with `--engine mariadb --versions 10.11,11.4` run both
// versions on managed servers and print their relative report; --resume then skips both
// points.
func TestSweepVersions(t *testing.T) {
	for _, tc := range []struct {
		engine string
		v1, v2 string
	}{
		{"postgres", "13", "15"},
		{"mariadb", "10.11", "11.4"},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			needServer(t, tc.engine)
			tmp := serverWorkdir(t)
			results := filepath.Join(tmp, "r.db")
			p1, p2 := tc.v1+"/default", tc.v2+"/default"
			args := []string{"sweep", "insertbench", "--engine", tc.engine, "--versions", tc.v1 + "," + tc.v2, "--scale", "tiny",
				"--label", "sw", "--results", results, "--workdir", tmp, "--profiles-dir", "../../profiles"}
			code, out, stderr := runCLI(t, nil, args...)
			if code != 0 {
				t.Fatalf("sweep: exit %d: %s\n%s", code, stderr, out)
			}
			waitNoServers(t, tmp)
			for _, want := range []string{"sweep point 1 of 2, " + p1, "sweep point 2 of 2, " + p2,
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
				if r.Status != "ok" {
					t.Errorf("run %d: %s", r.ID, r.Status)
				}
			}

			code, out, stderr = runCLI(t, nil, append(args, "--resume")...)
			if code != 0 || strings.Count(out, "skipped") != 2 || !strings.Contains(out, p2) {
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
}
