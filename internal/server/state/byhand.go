package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/store"
)

// ErrNotStarted is StopIn's error when no server of the engine was started in the work
// dir (it has no state file).
var ErrNotStarted = errors.New("no server was started here")

// A RunningError is StartIn refusing to start a server where one of the engine's still
// runs.
// Engine is the server engine's name, Server the running server's state.
type RunningError struct {
	Engine string
	Server Server
}

func (e *RunningError) Error() string {
	return fmt.Sprintf("a %s server started here is still running (pid %d, %s): \"dbperf server stop %s\" first",
		e.Engine, e.Server.PID, store.RedactDSN(e.Server.DSN), e.Engine)
}

// A WorkDirError is a work dir StartIn could not create.
type WorkDirError struct{ Err error }

func (e *WorkDirError) Error() string { return e.Err.Error() }
func (e *WorkDirError) Unwrap() error { return e.Err }

// StartIn starts a detached server of srv as Start does, with o.WorkDir created and made
// absolute first, unless a server of srv started there still runs (*RunningError).
func StartIn(ctx context.Context, srv server.Engine, o Options) (Started, error) {
	if st, err := Read(Path(o.WorkDir, srv.Name())); err == nil && st.Running() {
		return Started{}, &RunningError{Engine: srv.Name(), Server: st}
	}
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return Started{}, &WorkDirError{Err: err}
	}
	abs, err := filepath.Abs(o.WorkDir)
	if err != nil {
		return Started{}, &WorkDirError{Err: err}
	}
	o.WorkDir = abs
	return Start(ctx, srv, o)
}

// StopIn stops the server of srv started in workdir (Server.Stop) and removes its files,
// and its dir unless keep (Server.Remove). It returns the server's state, and foreign
// when its pid is another process now, left alone (the files are removed all the same).
// With no state file in workdir its error is ErrNotStarted.
func StopIn(workdir string, srv server.Engine, keep bool) (st Server, foreign bool, err error) {
	sp := Path(workdir, srv.Name())
	st, err = Read(sp)
	if errors.Is(err, os.ErrNotExist) {
		return st, false, ErrNotStarted
	}
	if err != nil {
		return st, false, err
	}
	if foreign, err = st.Stop(srv); err != nil {
		return st, foreign, err
	}
	return st, foreign, st.Remove(sp, keep)
}

// Status is what `dbperf server status` says of the state's server: "running", or
// that it is not, why, and where its log is.
func (st Server) Status() string {
	switch st.Liveness() {
	case Died:
		return "not running (it died; see " + st.Log + ")"
	case PIDReused:
		return fmt.Sprintf("not running (it died; pid %d is another process now; see %s)", st.PID, st.Log)
	}
	return "running"
}
