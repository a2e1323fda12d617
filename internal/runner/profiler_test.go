package runner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/workload"
)

// fakeProfiler records the runner's calls and says whether the load ran between them.
type fakeProfiler struct {
	mu        sync.Mutex
	calls     []string
	sessions  []ProfiledSession
	opsAtStop int64
	w         *insertWorker
	startErr  error
	stopErr   error
}

func (p *fakeProfiler) Start(_ context.Context, step string, s []ProfiledSession) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, "start "+step)
	p.sessions = s
	return p.startErr
}

func (p *fakeProfiler) Stop(_ context.Context, step string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, "stop "+step)
	p.opsAtStop = int64(p.w.done)
	return p.stopErr
}

// TestProfilerSpansTheLoad: the hook is started once with each session's role (no server
// process: an embedded engine's id is 0) and stopped once after the load's last
// operation; its errors become the step's note, never its failure.
func TestProfilerSpansTheLoad(t *testing.T) {
	for _, tc := range []struct {
		name              string
		startErr, stopErr error
		calls             []string
		note              string
	}{
		{"ok", nil, nil, []string{"start test", "stop test"}, ""},
		{"start fails", errors.New("no perf"), nil, []string{"start test"}, "no perf"},
		{"stop fails", nil, errors.New("perf died"), []string{"start test", "stop test"}, "perf died"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t)
			w := &insertWorker{}
			p := &fakeProfiler{w: w, startErr: tc.startErr, stopErr: tc.stopErr}
			r.Profiler = p
			step := &testStep{load: workload.Load{Kind: "read-write", Primary: "insert", Duration: 300 * time.Millisecond,
				Groups: []workload.Group{{Label: "insert", Role: "writer", Unit: workload.UnitRows, RowsPerOp: 1,
					Workers: []workload.Worker{w}}}}}
			res := r.Run(context.Background(), step, &collector{})
			if res.Status != metrics.StatusOK {
				t.Fatalf("status %s: %s", res.Status, res.Error)
			}
			if strings.Join(p.calls, ",") != strings.Join(tc.calls, ",") {
				t.Errorf("calls %v, want %v", p.calls, tc.calls)
			}
			if len(p.sessions) != 1 || p.sessions[0] != (ProfiledSession{Role: "writer"}) {
				t.Errorf("sessions %+v, want one writer without a server id", p.sessions)
			}
			if tc.stopErr == nil && len(tc.calls) == 2 && (p.opsAtStop == 0 || p.opsAtStop != int64(w.done)) {
				t.Errorf("%d ops at stop, %d in all: stop must follow the load", p.opsAtStop, w.done)
			}
			if tc.note == "" && res.Note != "" || !strings.Contains(res.Note, tc.note) {
				t.Errorf("note %q, want %q", res.Note, tc.note)
			}
		})
	}
}

// TestProfilerNoStart: a profiler whose Start error wraps ErrNoStart (a part's barrier
// not passed) keeps the step's load from running: the step fails with that error and
// nothing is measured. Before, every Start error was only the step's note and the load
// ran (a part ran its step alone).
func TestProfilerNoStart(t *testing.T) {
	r := newRunner(t)
	w := &insertWorker{}
	p := &fakeProfiler{w: w, startErr: NoStart(errors.New("agents barrier: step test: part 2 of 2 arrives again"))}
	r.Profiler = p
	step := &testStep{load: workload.Load{Kind: "read-write", Primary: "insert", Duration: 300 * time.Millisecond,
		Groups: []workload.Group{{Label: "insert", Role: "writer", Unit: workload.UnitRows, RowsPerOp: 1,
			Workers: []workload.Worker{w}}}}}
	res := r.Run(context.Background(), step, &collector{})
	if res.Status != metrics.StatusFailed || res.Error != "agents barrier: step test: part 2 of 2 arrives again" || w.done != 0 ||
		strings.Join(p.calls, ",") != "start test" {
		t.Errorf("status %s, error %q, %d ops, calls %v: want failed with the barrier's error, no op, not stopped", res.Status, res.Error, w.done, p.calls)
	}
}
