package probe

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/runner"
)

// recorder is a runner.Profiler that records its calls and fails Start with err.
type recorder struct {
	calls *[]string
	name  string
	err   error
}

func (r recorder) Start(context.Context, string, []runner.ProfiledSession) error {
	*r.calls = append(*r.calls, "start "+r.name)
	return r.err
}

func (r recorder) Stop(context.Context, string) error {
	*r.calls = append(*r.calls, "stop "+r.name)
	return nil
}

// TestSetNoStart: a profiler that fails to start is left out, its error the note at the
// end; one whose error wraps runner.ErrNoStart ends Start at once with its error (named),
// the profilers started before it stopped and those after it never started.
func TestSetNoStart(t *testing.T) {
	t.Parallel()
	var calls []string
	var s Set
	s.Add("a", recorder{&calls, "a", nil})
	s.Add("b", recorder{&calls, "b", errors.New("no perf")})
	s.Add("c", recorder{&calls, "c", nil})
	if err := s.Start(context.Background(), "l.i0", nil); err != nil {
		t.Fatalf("a start error that is only a note: %v", err)
	}
	if err := s.Stop(context.Background(), "l.i0"); err == nil || err.Error() != "b: no perf" {
		t.Errorf("Stop's note %v, want b: no perf", err)
	}
	calls = nil
	var g Set
	g.Add("a", recorder{&calls, "a", nil})
	g.Add("agents barrier", recorder{&calls, "g", runner.NoStart(errors.New("step l.i0: 1 of 2 parts arrived"))})
	g.Add("c", recorder{&calls, "c", nil})
	err := g.Start(context.Background(), "l.i0", nil)
	if !errors.Is(err, runner.ErrNoStart) || err.Error() != "agents barrier: step l.i0: 1 of 2 parts arrived" ||
		strings.Join(calls, ",") != "start a,start g,stop a" {
		t.Errorf("Start: %v, calls %v; want the barrier's error, a stopped, c never started", err, calls)
	}
}
