package tpcc

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/workload"
	"github.com/dbperf/dbperf/internal/workload/workloadtest"
)

// These tests run TPROC-C through the runner on real managed servers, with fewer items
// (2,000) and customers per district (300) than TPC-C's so that the load takes a second:
// the only place these counts change.

const (
	testItems     = 2000
	testCustomers = 300
)

// startServer starts a managed server of kind ("postgres", "innodb", "rocksdb") and
// opens the engine on it (workloadtest.Managed).
func startServer(t *testing.T, kind string) engine.SQL {
	t.Helper()
	return workloadtest.Managed(t, kind, filepath.Join("..", "..", "..", "profiles"))
}

// plan resolves args as `dbperf run tproc-c` does and plans with the test's counts;
// broken makes payment skip its district update.
func testPlan(t *testing.T, broken bool, args ...string) []workload.Step {
	t.Helper()
	cfg, p := workloadtest.MustResolve[*Params](t, New(), args...)
	p.items, p.customers, p.brokenPayment = testItems, testCustomers, broken
	steps, err := New().Plan(cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

type quiet struct{}

func (quiet) StepStarted(string, workload.Load) {}
func (quiet) Interval(string, metrics.Interval) {}

func runOne(h engine.SQL, s workload.Step) metrics.StepResult {
	return (&runner.Runner{Handle: h, Interval: time.Second}).Run(context.Background(), s, quiet{})
}

// runAll runs the steps in order, failing t on a step that does not end ok, and returns
// the results by step.
func runAll(t *testing.T, h engine.SQL, steps []workload.Step) map[string]metrics.StepResult {
	t.Helper()
	out := map[string]metrics.StepResult{}
	for _, s := range steps {
		res := runOne(h, s)
		if res.Status != metrics.StatusOK {
			t.Fatalf("%s: %s: %s (audit %s: %s)", s.Name(), res.Status, res.Error, res.Audit.Status, res.Audit.Detail)
		}
		out[s.Name()] = res
	}
	return out
}

// checkRun checks a run's steps: the load's row counts and every step's conditions, and
// the run step's figures: each transaction type measured under its label, new-order the
// primary, NOPM and TPM in the note.
func checkRun(t *testing.T, res map[string]metrics.StepResult) {
	t.Helper()
	if d := res[stepLoad].Audit.Detail; !strings.Contains(d, "row counts") || !strings.Contains(d, "conditions 1, 2, 3, 4 hold") {
		t.Errorf("load audit: %q", d)
	}
	run := res[stepRun]
	t.Logf("load: %s; run: %s; %s", res[stepLoad].Audit.Detail, run.Audit.Detail, run.Note)
	if !strings.Contains(run.Audit.Detail, "conditions 1, 2, 3, 4 hold") {
		t.Errorf("run audit: %q", run.Audit.Detail)
	}
	events := map[string]int64{}
	for _, l := range run.Labels {
		events[l.Label] += l.Events
	}
	for _, l := range txLabels[:txNewOrderRollback] {
		if events[l] == 0 {
			t.Errorf("no %s transaction measured: %v", l, events)
		}
	}
	if events["new-order"] < events["stock-level"] {
		t.Errorf("the mix is off: %v", events)
	}
	if !strings.Contains(run.Note, "NOPM ") || !strings.Contains(run.Note, "TPM ") {
		t.Errorf("run note: %q", run.Note)
	}
}

// TestTPROCCPostgres is the whole workload on a managed PostgreSQL: load (two loaders),
// index, warm-up and run at 1 warehouse and 2 clients for 2 s; every step's consistency
// conditions hold.
func TestTPROCCPostgres(t *testing.T) {
	t.Parallel()
	h := startServer(t, "postgres")
	steps := testPlan(t, false, "--warehouses", "1", "--clients", "2", "--time", "2", "--warmup", "0.5")
	if got := strings.Join(workloadtest.Names(steps), ","); got != "load,index,warmup,run" {
		t.Fatalf("steps %s", got)
	}
	checkRun(t, runAll(t, h, steps))
}

// TestTPROCCBrokenPayment: a payment that skips its UPDATE of the district's D_YTD
// breaks consistency condition 1 (W_YTD = sum(D_YTD)), and the run step fails naming it
// and the warehouse.
func TestTPROCCBrokenPayment(t *testing.T) {
	t.Parallel()
	h := startServer(t, "postgres")
	steps := testPlan(t, true, "--warehouses", "1", "--clients", "2", "--time", "1", "--warmup", "0")
	runAll(t, h, steps[:2])
	res := runOne(h, steps[2])
	if res.Status == metrics.StatusOK {
		t.Fatalf("run with a broken payment: ok (audit %q)", res.Audit.Detail)
	}
	msg := res.Error + " " + res.Audit.Detail
	t.Log(msg)
	if !strings.Contains(msg, "consistency condition 1 (W_YTD = sum(D_YTD)) fails in warehouse 1") {
		t.Errorf("failure: %s", msg)
	}
}

// TestTPROCCMariaDB is the whole workload on a managed MariaDB, InnoDB and MyRocks: the
// tables created with their primary keys, the secondary indexes after the load; every
// step's consistency conditions hold.
func TestTPROCCMariaDB(t *testing.T) {
	t.Parallel()
	for _, se := range []string{"innodb", "rocksdb"} {
		t.Run(se, func(t *testing.T) {
			h := startServer(t, se)
			steps := testPlan(t, false, "--warehouses", "2", "--clients", "2", "--loaders", "3", "--time", "2", "--warmup", "0.5")
			checkRun(t, runAll(t, h, steps))
		})
	}
}
