package runner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/sqlite"
	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/workload"
)

// These tests drive the runner with small steps of their own against real SQLite.

type collector struct {
	mu        sync.Mutex
	started   int
	intervals []metrics.Interval
}

func (c *collector) StepStarted(string, workload.Load) { c.mu.Lock(); c.started++; c.mu.Unlock() }
func (c *collector) Interval(_ string, iv metrics.Interval) {
	c.mu.Lock()
	c.intervals = append(c.intervals, iv)
	c.mu.Unlock()
}

// insertWorker inserts one row per op into table t; quota > 0 ends it after that many ops.
type insertWorker struct {
	quota, done int
	failAt      int // fail on this op (1-based), 0 = never
	ins         engine.Stmt
}

func (w *insertWorker) Init(ctx context.Context, s engine.Session) (err error) {
	w.ins, err = s.Prepare(ctx, "INSERT INTO t (v) VALUES (?)")
	return err
}
func (w *insertWorker) Ready(context.Context) error { return nil }
func (w *insertWorker) Op(ctx context.Context) (int64, error) {
	if w.quota > 0 && w.done >= w.quota {
		return 0, workload.ErrDone
	}
	w.done++
	if w.done == w.failAt {
		return 0, errors.New("deliberate failure")
	}
	return w.ins.Exec(ctx, engine.NewArgs(w.done))
}
func (w *insertWorker) Close() error { return w.ins.Close() }

type testStep struct {
	load      workload.Load
	verifyErr error
}

func (s *testStep) Name() string  { return "test" }
func (s *testStep) Group() string { return "" }
func (s *testStep) Prepare(ctx context.Context, h engine.Handle) error {
	sess, err := h.(engine.SQL).NewSession(ctx)
	if err != nil {
		return err
	}
	defer sess.Close()
	_, err = sess.Exec(ctx, "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v INTEGER)")
	return err
}
func (s *testStep) Load(context.Context, engine.Handle) (workload.Load, error) { return s.load, nil }
func (s *testStep) Verify(context.Context, engine.Handle) (string, error) {
	return "checked", s.verifyErr
}

func newRunner(t *testing.T) *Runner {
	t.Helper()
	h, err := sqlite.New().Open(context.Background(), engine.Target{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	smp, err := hwstat.New()
	if err != nil {
		t.Fatal(err)
	}
	return &Runner{Handle: h, Interval: 200 * time.Millisecond, Sampler: smp}
}

func label(r metrics.StepResult, name string) metrics.LabelStats {
	for _, l := range r.Labels {
		if l.Label == name {
			return l
		}
	}
	return metrics.LabelStats{}
}

func TestPacedWorkersKeepTheirSchedule(t *testing.T) {
	r := newRunner(t)
	c := &collector{}
	step := &testStep{load: workload.Load{Kind: "read-write", Primary: "insert", Duration: time.Second, Groups: []workload.Group{{
		Label: "insert", Role: "insert", Unit: workload.UnitRows, Rate: 100, RowsPerOp: 1, Background: true,
		Workers: []workload.Worker{&insertWorker{}, &insertWorker{}},
	}}}}
	res := r.Run(context.Background(), step, c)
	if res.Status != metrics.StatusOK || res.Audit.Status != "ok" {
		t.Fatalf("status %s: %s", res.Status, res.Error)
	}
	ins := label(res, "insert")
	// Slots at 0, 10 ms, …, 990 ms: exactly 100 per worker within the second, none at 1 s.
	if ins.Statements != 200 || ins.TargetPerSec != 200 || !ins.HasResponse {
		t.Fatalf("paced insert: %d statements, target %v, response %v", ins.Statements, ins.TargetPerSec, ins.HasResponse)
	}
	if res.Seconds < 1 || res.Seconds > 1.5 {
		t.Fatalf("a 1 s step took %v s", res.Seconds)
	}
	var sum int64
	for _, iv := range c.intervals {
		for _, l := range iv.Labels {
			sum += l.Statements
		}
	}
	if c.started != 1 || len(c.intervals) < 5 || sum != ins.Statements {
		t.Fatalf("%d intervals summing to %d statements, want ≥5 summing to %d", len(c.intervals), sum, ins.Statements)
	}
}

func TestUntilDoneWaitsForMinDuration(t *testing.T) {
	r := newRunner(t)
	step := &testStep{load: workload.Load{Kind: "load", Primary: "insert", MinDuration: 400 * time.Millisecond, Groups: []workload.Group{
		{Label: "insert", Role: "insert", Unit: workload.UnitRows, UntilDone: true, Workers: []workload.Worker{&insertWorker{quota: 50}, &insertWorker{quota: 20}}},
		// A background closed-loop worker without a quota is stopped when the quota is done.
		{Label: "other", Role: "insert", Unit: workload.UnitRows, Workers: []workload.Worker{&insertWorker{}}},
	}}}
	res := r.Run(context.Background(), step, &collector{})
	if res.Status != metrics.StatusOK {
		t.Fatalf("status %s: %s", res.Status, res.Error)
	}
	if ins := label(res, "insert"); ins.Rows != 70 || ins.HasResponse {
		t.Fatalf("quota: %+v", ins)
	}
	if res.Seconds < 0.4 {
		t.Fatalf("step ended after %v s, before its minimum duration", res.Seconds)
	}
	if res.ClientCPUSec <= 0 || res.ClientCPUPerOpUS() <= 0 {
		t.Fatalf("client CPU not measured: %v", res.ClientCPUSec)
	}
}

func TestOpErrorFailsTheStep(t *testing.T) {
	r := newRunner(t)
	step := &testStep{load: workload.Load{Primary: "insert", Groups: []workload.Group{
		{Label: "insert", Unit: workload.UnitRows, UntilDone: true, Workers: []workload.Worker{&insertWorker{quota: 1000, failAt: 10}}},
	}}}
	res := r.Run(context.Background(), step, &collector{})
	if res.Status != metrics.StatusFailed || !strings.Contains(res.Error, "insert worker 1: deliberate failure") {
		t.Fatalf("status %s error %q", res.Status, res.Error)
	}
	if ins := label(res, "insert"); ins.Rows != 9 || ins.Errors != 1 {
		t.Fatalf("measurements before the failure must be kept: %+v", ins)
	}
	if res.Audit.Status != "" {
		t.Fatalf("a failed load must not be audited: %+v", res.Audit)
	}
}

func TestAuditFailureFailsTheStep(t *testing.T) {
	r := newRunner(t)
	step := &testStep{verifyErr: errors.New("count(*)=9 but inserted−deleted=10"), load: workload.Load{Primary: "insert", Groups: []workload.Group{
		{Label: "insert", Unit: workload.UnitRows, UntilDone: true, Workers: []workload.Worker{&insertWorker{quota: 10}}},
	}}}
	res := r.Run(context.Background(), step, &collector{})
	if res.Status != metrics.StatusFailed || res.Audit.Status != "failed" || !strings.Contains(res.Error, "audit: count(*)=9") {
		t.Fatalf("status %s audit %+v error %q", res.Status, res.Audit, res.Error)
	}
}

func TestCancelInterrupts(t *testing.T) {
	r := newRunner(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	step := &testStep{load: workload.Load{Primary: "insert", Duration: time.Minute, Groups: []workload.Group{
		{Label: "insert", Unit: workload.UnitRows, Rate: 50, Workers: []workload.Worker{&insertWorker{}}},
	}}}
	start := time.Now()
	res := r.Run(ctx, step, &collector{})
	if res.Status != metrics.StatusInterrupted || time.Since(start) > 5*time.Second {
		t.Fatalf("status %s after %v", res.Status, time.Since(start))
	}
	if ins := label(res, "insert"); ins.Statements < 10 {
		t.Fatalf("measurements before the interrupt must be kept: %+v", ins)
	}
}

func TestLoadWithoutStopRuleFails(t *testing.T) {
	r := newRunner(t)
	step := &testStep{load: workload.Load{Primary: "insert", Groups: []workload.Group{
		{Label: "insert", Unit: workload.UnitRows, Workers: []workload.Worker{&insertWorker{}}},
	}}}
	if res := r.Run(context.Background(), step, &collector{}); res.Status != metrics.StatusFailed {
		t.Fatalf("status %s", res.Status)
	}
}
