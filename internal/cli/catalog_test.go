package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/catalog"
)

// TestEveryWorkload is the test a new workload gets by its catalog line: at every scale it
// resolves and plans as `dbperf run` does, with unique step names that Meta.Steps lists,
// unique groups, and every step in a declared group (or none, a cleanup); then its first
// two steps run at tiny scale on the first engine of its kind (embedded: SQLite or
// RocksDB) and are stored ok with their audits.
func TestEveryWorkload(t *testing.T) {
	t.Parallel() // asserts each workload runs and stores its steps, not rates
	env := Env{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{},
		Getenv: func(string) string { return "" }}
	for _, wl := range catalog.Workloads() {
		m := wl.Meta()
		t.Run(m.Name, func(t *testing.T) {
			groups := map[string]bool{}
			for _, g := range m.Groups {
				if g.Name == "" || g.Title == "" || groups[g.Name] {
					t.Errorf("group %+v: empty or declared twice", g)
				}
				groups[g.Name] = true
			}
			if m.Version < 1 || m.Summary == "" || len(m.Steps) == 0 {
				t.Errorf("meta %+v: no version, summary or steps", m)
			}
			cmd, f, params := newWorkloadCmd(env, wl)
			scales, _ := params.Scales()
			for _, scale := range scales {
				cmd, f, params = newWorkloadCmd(env, wl)
				if err := cmd.ParseFlags([]string{"--scale", scale}); err != nil {
					t.Fatal(err)
				}
				cfg, _, err := checkRun(cmd, env, wl, params, f)
				if err != nil {
					t.Errorf("--scale %s: %v", scale, err)
					continue
				}
				steps, err := wl.Plan(cfg, params)
				if err != nil || len(steps) == 0 {
					t.Errorf("--scale %s: plan: %d steps, %v", scale, len(steps), err)
					continue
				}
				seen := map[string]bool{}
				for _, s := range steps {
					if seen[s.Name()] || !strings.Contains(" "+strings.Join(m.Steps, " ")+" ", " "+s.Name()+" ") && scale == "tiny" {
						t.Errorf("--scale %s: step %s twice, or not in Meta.Steps", scale, s.Name())
					}
					seen[s.Name()] = true
					if g := s.Group(); g != "" && !groups[g] {
						t.Errorf("--scale %s: step %s in undeclared group %q", scale, s.Name(), g)
					}
				}
			}

			engines, _ := kindEngines(m.Kind)
			results := filepath.Join(t.TempDir(), "r.db")
			first := strings.Join(m.Steps[:min(2, len(m.Steps))], ",")
			code, _, stderr := runCLI(t, nil, "run", m.Name, "--engine", engines[0], "--scale", "tiny", "--time", "0.2",
				"--steps", first, "--results", results, "--quiet")
			if code != 0 {
				t.Fatalf("run %s --engine %s --steps %s: exit %d: %s", m.Name, engines[0], first, code, stderr)
			}
			run := reportJSON(t, results).Runs[0]
			if run.Status != "ok" || len(run.Steps) != strings.Count(first, ",")+1 {
				t.Fatalf("run %s: %s, %d steps", m.Name, run.Status, len(run.Steps))
			}
			for _, s := range run.Steps {
				if s.Status != "ok" || s.Audit.Status != "ok" {
					t.Errorf("%s: %s, audit %s: %s %s", s.Name, s.Status, s.Audit.Status, s.Audit.Detail, s.Error)
				}
			}
		})
	}
}
