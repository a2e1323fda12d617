package runner

import (
	"context"
	"errors"

	"github.com/dbperf/dbperf/internal/engine"
)

// Profiler is an optional hook around each step's timed load (dbperf run --cpu-profile,
// --explain): the runner says when the load starts and ends and which sessions play which
// role; what is sampled and where it goes is the hook's. Its errors never fail a step:
// they become the step's note, as they are (so they should name what failed: "cpu
// profile: …"); but a Start error wrapping ErrNoStart fails the step before its load.
type Profiler interface {
	// Start is called once the step's sessions are open and its workers initialised,
	// right before the step's clock starts; the profile should span from its return.
	Start(ctx context.Context, step string, sessions []ProfiledSession) error
	// Stop is called once the load ended and its last interval was sampled, before the
	// audit; it is called only after a Start that returned nil.
	Stop(ctx context.Context, step string) error
}

// ClientThreader is a Profiler that is told the threads a pinned step's workers ran on
// (Runner.Pin: each worker locked to a thread of its own), after the load and before Stop:
// a profile of dbperf's own CPU can then tell the workers of runners that run at once (a
// duet's points, in one process) apart by thread.
type ClientThreader interface {
	ClientThreads(step string, tids []int)
}

// ProfiledSession is one worker's session as a Profiler attributes samples: the worker's
// role and the server process or thread serving the session (engine.ProcessInfo), 0 when
// unknown (an embedded engine, or SessionPID failed: Reason says why).
type ProfiledSession struct {
	Role string
	ID   int
	// Local says ID is this machine's process or thread (the server is local): only then
	// can its CPU be sampled here. A remote server's ID still names the session in the
	// server's own views (PostgreSQL's pg_stat_activity.pid).
	Local bool
	// Reason is why ID is 0 on a server engine ("" when it is known or the engine is
	// embedded).
	Reason string
	// Node is the cluster node serving the session (Runner.Spread), 0 without one: ID is
	// a process or thread of that node's server.
	Node int
}

// profiledSessions are the workers' sessions with their server process or thread ids.
func (r *Runner) profiledSessions(ws []*worker) []ProfiledSession {
	out := make([]ProfiledSession, 0, len(ws))
	for _, w := range ws {
		pi, ok := r.nodeHandle(w).(engine.ProcessInfo)
		s := ProfiledSession{Role: w.group.Role, Local: ok && pi.Local(), Node: w.node}
		if ok && w.s != nil {
			if id, err := pi.SessionPID(w.s); err == nil {
				s.ID = id
			} else {
				s.Reason = err.Error()
			}
		}
		out = append(out, s)
	}
	return out
}

// startProfile starts the step's profile; it reports whether it runs and, when it could
// not start, why (the step's note). An error wrapping ErrNoStart is returned instead: the
// step must not run.
func (r *Runner) startProfile(ctx context.Context, name string, ws []*worker) (bool, string, error) {
	if r.Profiler == nil {
		return false, "", nil
	}
	if err := r.Profiler.Start(ctx, name, r.profiledSessions(ws)); err != nil {
		if errors.Is(err, ErrNoStart) {
			return false, "", err
		}
		return false, err.Error(), nil
	}
	return true, "", nil
}

// ErrNoStart is what a Profiler's Start error wraps (NoStart) when the step must not run
// without it: a part's barrier that was not passed (the other parts of the run went on
// without this one, or never came), whose load alone would be no measurement of the run.
// The step then fails with that error, its load never started.
var ErrNoStart = errors.New("the step's load must not start")

// NoStart wraps err as a Profiler's Start error that keeps the step from running: its
// text is err's, and it is errors.Is ErrNoStart and err.
func NoStart(err error) error { return noStart{err} }

type noStart struct{ err error }

func (e noStart) Error() string   { return e.err.Error() }
func (e noStart) Unwrap() []error { return []error{e.err, ErrNoStart} }
