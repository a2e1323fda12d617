package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// jsonStep is the part of a step of the JSON contract these tests read.
type jsonStep struct {
	Name    string  `json:"name"`
	Status  string  `json:"status"`
	Error   string  `json:"error"`
	Seconds float64 `json:"seconds"`
	Primary string  `json:"primary"`
	Ops     map[string]struct {
		Count  int64   `json:"count"`
		PerSec float64 `json:"per_sec"`
		P99    int64   `json:"p99_us"`
		Max    int64   `json:"max_us"`
	} `json:"ops"`
	Background map[string]struct {
		Target   float64 `json:"target_per_sec"`
		Achieved float64 `json:"achieved_per_sec"`
		Below    float64 `json:"intervals_below_target_pct"`
		SLA      string  `json:"sla"`
	} `json:"background"`
	Audit struct {
		Status string `json:"status"`
		Detail string `json:"detail"`
	} `json:"audit"`
	Note           string             `json:"note"`
	ClientCPUSec   float64            `json:"client_cpu_sec"`
	ClientCPUPerOp float64            `json:"client_cpu_us_per_op"`
	HW             map[string]any     `json:"hw"`
	ConnCPU        map[string]float64 `json:"conn_cpu"`
	ConnCPUPerOp   map[string]float64 `json:"conn_cpu_us_per_op"`
	Intervals      []json.RawMessage  `json:"intervals"`
}

// jsonReport is the part of the JSON contract these tests read.
type jsonReport struct {
	Runs []struct {
		ID            int64             `json:"id"`
		Workload      string            `json:"workload"`
		Engine        string            `json:"engine"`
		EngineVersion string            `json:"engine_version"`
		Label         string            `json:"label"`
		Status        string            `json:"status"`
		Settings      map[string]string `json:"engine_settings"`
		Env           map[string]string `json:"env"`
		Params        map[string]any    `json:"params"`
		Steps         []jsonStep        `json:"steps"`
	} `json:"runs"`
}

func reportJSON(t *testing.T, results string, runs ...string) jsonReport {
	t.Helper()
	args := append([]string{"report", "--results", results, "--format", "json"}, runs...)
	code, out, stderr := runCLI(t, nil, args...)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	var rep jsonReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, out)
	}
	return rep
}

var allSteps = []string{"l.i0", "l.x", "l.i1", "l.i2", "cleanup", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"}

// TestTinyRunEndToEnd is the acceptance run: every step at --scale tiny on real
// SQLite, then the stored results read back through `dbperf report --format json`.
func TestTinyRunEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole Insert Benchmark at tiny scale")
	}
	// Serial (no t.Parallel): it asserts the background writers' achieved rates (their
	// SLA), which failed with four tests beside it on 2 cores.
	results := filepath.Join(t.TempDir(), "r.db")
	start := time.Now()
	code, stdout, stderr := runCLI(t, nil, "run", "insertbench", "--engine", "sqlite", "--scale", "tiny", "--time", "2", "--results", results, "--quiet", "--label", "tiny")
	if code != 0 {
		t.Fatalf("run: exit %d\nstderr: %s", code, stderr)
	}
	if stdout != "" || stderr != "" {
		t.Fatalf("--quiet printed:\n%s\n%s", stdout, stderr)
	}
	t.Logf("tiny run took %v", time.Since(start))

	rep := reportJSON(t, results)
	if len(rep.Runs) != 1 {
		t.Fatalf("want 1 run, got %d", len(rep.Runs))
	}
	run := rep.Runs[0]
	if run.Status != "ok" || run.Workload != "insertbench" || run.Engine != "sqlite" || run.EngineVersion == "" {
		t.Fatalf("run: %+v", run)
	}
	if !strings.EqualFold(run.Settings["journal_mode"], "wal") || run.Settings["busy_timeout"] != "60000" {
		t.Errorf("engine settings not stored: %v", run.Settings)
	}
	for _, k := range []string{"cpu_model", "cores", "ram_bytes", "kernel", "filesystem", "dbperf_version", "git_commit"} {
		if run.Env[k] == "" {
			t.Errorf("env[%s] missing: %v", k, run.Env)
		}
	}
	if run.Params["scale"] != "tiny" || run.Params["seed"] == nil && run.Params["clients"] == nil {
		t.Errorf("params: %v", run.Params)
	}
	if len(run.Steps) != len(allSteps) {
		t.Fatalf("want %d steps, got %d", len(allSteps), len(run.Steps))
	}
	for i, st := range run.Steps {
		if st.Name != allSteps[i] {
			t.Errorf("step %d is %s, want %s", i, st.Name, allSteps[i])
		}
		if st.Status != "ok" || st.Audit.Status != "ok" {
			t.Errorf("%s: status %s audit %s (%s) %s", st.Name, st.Status, st.Audit.Status, st.Audit.Detail, st.Error)
		}
		if st.Name != "cleanup" {
			if p := st.Ops[st.Primary]; p.Count == 0 || p.PerSec <= 0 {
				t.Errorf("%s: primary %s has no throughput: %+v", st.Name, st.Primary, p)
			}
			if st.ClientCPUPerOp <= 0 {
				t.Errorf("%s: client CPU µs per op not measured: %v", st.Name, st.ClientCPUPerOp)
			}
		}
		// HW efficiency: SQLite runs inside dbperf, so per-connection CPU is the client
		// process's and the server-only figure is absent with the reason.
		if v, _ := st.HW["cpupq"].(float64); v <= 0 {
			t.Errorf("%s: cpupq = %v (absent: %v)", st.Name, st.HW["cpupq"], st.HW["absent"])
		}
		if st.ConnCPU["client_process"] <= 0 || len(st.ConnCPU) != 1 {
			t.Errorf("%s: conn_cpu = %v, want the client process only", st.Name, st.ConnCPU)
		}
		if absent, _ := st.HW["absent"].(map[string]any); !strings.Contains(fmt.Sprint(absent["server_cpupq"]), "embedded") {
			t.Errorf("%s: server_cpupq absent for %q", st.Name, absent["server_cpupq"])
		}
		if len(st.Intervals) == 0 {
			t.Errorf("%s: no intervals stored", st.Name)
		}
		if strings.HasPrefix(st.Name, "q") {
			want := map[string]float64{"100": 100, "500": 500, "1000": 1000}[strings.TrimLeft(st.Name, "qrp")]
			for _, role := range []string{"insert", "delete"} {
				bg, ok := st.Background[role]
				if !ok {
					t.Errorf("%s: no background %s", st.Name, role)
					continue
				}
				if bg.Target != want {
					t.Errorf("%s %s: target %v, want %v", st.Name, role, bg.Target, want)
				}
				// The paced writers never run ahead of their target (+3% at most) and meet
				// their SLA (95% of it). On a quiet machine they are within ±3%; beside other tests
				// on 2 cores a writer was seen at 95.5% of 1000/s with its SLA met, and below it
				// with four beside it (so the test runs alone).
				if (bg.Achieved-want)/want > 0.03 || bg.SLA != "ok" || bg.Achieved < 0.95*want {
					t.Errorf("%s %s: achieved %.1f/s of %v (sla %s)", st.Name, role, bg.Achieved, want, bg.SLA)
				}
			}
		}
	}
}

// SIGTERM or Ctrl-C while a managed server is being initialised: exit 130 with one line,
// not exit 2 with initdb's output, and no results store left behind (issue 23).
func TestInterruptedWhileStartingServer(t *testing.T) {
	needServer(t, "postgres")
	tmp := serverWorkdir(t)
	results := filepath.Join(tmp, "r.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel) // initdb takes a second or more
	var out, errb bytes.Buffer
	code := Run(ctx, Env{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }},
		[]string{"run", "insertbench", "--engine", "postgres", "--managed", "--scale", "tiny", "--workdir", tmp,
			"--results", results, "--quiet", "--profiles-dir", "../../profiles"})
	if code != ExitInterrupted || strings.Count(strings.TrimSpace(errb.String()), "\n") > 0 ||
		!strings.Contains(errb.String(), "interrupted while opening postgres") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	if _, err := os.Stat(results); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an interrupted start left a results store: %v", err)
	}
	waitNoServers(t, tmp)
}
