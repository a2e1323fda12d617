package session

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/runner"
)

// Keys of the run's env that say what the HW sampling could see (docs/metrics.md).
const (
	envServerProcesses = "server_processes" // which processes are "the server", or why none
	envIODevices       = "io_devices"       // the block devices whose IO is counted
	envIODevicesNote   = "io_devices_note"  // why device IO is not counted
)

// HWTargets decides what the runner samples besides dbperf itself: the server's process
// tree (a managed server's pid; a server on this machine reached by --dsn, found through
// one session's backend or thread) and the block devices of the data directory. What it
// could not see, and why, goes into env so reports can say it instead of showing zeros.
// dir is the data directory on this machine whose devices were looked up ("" if none).
func HWTargets(ctx context.Context, meta engine.Meta, tg *Target, info engine.Info, s *hwstat.Sampler, env map[string]string) (t runner.HWTargets, dir string) {
	switch {
	case meta.Embedded:
		t.Embedded, dir = true, tg.Dir
		env[envServerProcesses] = "embedded: the engine runs inside dbperf, so its CPU and memory are the client's"
	case tg.ServerPID != 0:
		t.ServerPID, dir = tg.ServerPID, tg.Dir
		env[envServerProcesses] = fmt.Sprintf("managed server: pid %d and its children", tg.ServerPID)
	default:
		pid, how := localServer(ctx, tg.Handle, s)
		pi, ok := tg.Handle.(engine.ProcessInfo)
		if !ok || !pi.Local() {
			t.Remote = true
			env[envServerProcesses] = "not visible: " + how
			env[envIODevicesNote] = "not counted: the server's disks are not this machine's"
			return t, ""
		}
		if pid == 0 {
			env[envServerProcesses] = "not visible: " + how
		} else {
			t.ServerPID = pid
			env[envServerProcesses] = fmt.Sprintf("local server (--dsn): pid %d and its children, found %s", pid, how)
		}
		if info.DataDir != "" {
			if _, err := os.Stat(info.DataDir); err == nil {
				dir = info.DataDir
			}
		}
	}
	if dir == "" {
		env[envIODevicesNote] = "not counted: the data directory is not readable here"
		return t, ""
	}
	devs, err := s.Devices(dir)
	if err != nil {
		env[envIODevicesNote] = "not counted: " + err.Error()
		return t, dir
	}
	t.Devices = devs
	env[envIODevices] = strings.Join(devs, " ")
	return t, dir
}

// localServer finds the main process of a server reached by --dsn when it runs on this
// machine, and says how it was found: first from the socket it listens on (which needs no
// help from the server: MariaDB names a connection's thread only with performance_schema
// on), else through the backend or thread serving one session. 0 and the reasons
// otherwise.
func localServer(ctx context.Context, h engine.Handle, s *hwstat.Sampler) (int, string) {
	pi, ok := h.(engine.ProcessInfo)
	if !ok {
		return 0, "this engine cannot name the server process of a session"
	}
	if !pi.Local() {
		return 0, "the server is on another machine (--dsn); server CPU, memory and per-connection CPU are not measured"
	}
	var whyNot string
	if sa, ok := h.(engine.ServerAddr); ok {
		network, addr := sa.ServerAddr()
		pid, err := s.ListenerPID(network, addr)
		if err == nil {
			pid, err = s.ServerRoot(pid)
		}
		if err == nil {
			return pid, fmt.Sprintf("listening on %s %s", network, addr)
		}
		whyNot = err.Error() + "; "
	}
	sh, ok := h.(engine.SQL)
	if !ok {
		return 0, whyNot + "no session to ask the server for its process"
	}
	sess, err := sh.NewSession(ctx)
	if err != nil {
		return 0, fmt.Sprintf("%sopen a session to find the server's process: %v", whyNot, err)
	}
	defer sess.Close()
	id, err := pi.SessionPID(sess)
	if err != nil {
		return 0, whyNot + err.Error()
	}
	pid, err := s.ServerRoot(id)
	if err != nil {
		return 0, fmt.Sprintf("%sthe server's process is not visible here (another container or pid namespace?): %v", whyNot, err)
	}
	return pid, fmt.Sprintf("through the server process or thread %d serving a session", id)
}
