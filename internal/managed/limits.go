package managed

import (
	"fmt"
	"strings"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/server"
)

// Env keys of a run on a managed server: EnvServerStarted always, the others with limits.
const (
	// EnvServerMemory is the memory limit and how it is enforced: "256MiB, page cache
	// included (cgroup v1 memory.limit_in_bytes …; <its cgroup>)".
	EnvServerMemory = "server_memory"
	// EnvServerMemoryFitted lists the profile settings changed to fit under it, one per line.
	EnvServerMemoryFitted = "server_memory_fitted"
	// EnvServerCPUs is the CPUs the server ran on: "1 CPU: 1 (cgroup v1 cpuset.cpus; …)".
	EnvServerCPUs = "server_cpus"
	// EnvServerStarted is when the managed server's process started (RFC 3339, in ms). A
	// server's timers (autovacuum's launcher, checkpoints) count from it: an interleaved
	// sweep opens its points one after another, so their servers vacuum a table that far
	// apart (docs/regression-hunting.md, --load-once).
	EnvServerStarted = "server_started"
)

// A MemoryError is a memory limit too small for the server engine.
type MemoryError struct {
	Err error
	// Least is the smallest memory limit the engine runs with (LeastMemory).
	Least int64
}

func (e *MemoryError) Error() string { return e.Err.Error() }
func (e *MemoryError) Unwrap() error { return e.Err }

// CheckLimits refuses o's limits when they cannot be enforced, before anything starts:
// a memory limit too small for the engine (*MemoryError), or no cgroup dbperf may make
// (no controller, not root: server.Cgroups.Check's error naming why and the fix). No
// limits, no error.
func CheckLimits(o Options) error {
	if !o.Limits.Set() {
		return nil
	}
	if srv, err := catalog.Server(o.Engine); err == nil {
		if err := server.CheckMemory(srv, o.Server("")); err != nil {
			return &MemoryError{Err: err, Least: LeastMemory(srv)}
		}
	}
	cg, err := o.cgroups()
	if err == nil {
		err = cg.Check(o.Limits)
	}
	return err
}

// LeastMemory is the smallest memory limit srv runs with.
func LeastMemory(srv server.Engine) int64 {
	if f, ok := srv.(server.MemoryFloor); ok {
		if n, _ := f.MinMemory(server.Options{}); n > server.MinMemory {
			return n
		}
	}
	return server.MinMemory
}

// Env is what the run's env records of the server: when it started (EnvServerStarted)
// and its limits (EnvServerMemory, EnvServerMemoryFitted, EnvServerCPUs; none without).
func (s *Server) Env() map[string]string {
	env := map[string]string{}
	if !s.Started.IsZero() {
		env[EnvServerStarted] = s.Started.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	if n := s.Cgroup.MemoryNote(); n != "" {
		env[EnvServerMemory] = n
	}
	if len(s.MemoryFitted) > 0 {
		env[EnvServerMemoryFitted] = strings.Join(s.MemoryFitted, "\n")
	}
	if n := s.Cgroup.CPUsNote(); n != "" {
		env[EnvServerCPUs] = n
	}
	return env
}

// OOMWarning is the line saying that the kernel's out-of-memory killer killed some of
// in's processes within its memory limit ("" when it did not): a step that failed with a
// lost connection was the limit's doing. Read it before in stops (Stop removes the cgroup).
func OOMWarning(in *server.Instance) string {
	if in.Cgroup == nil {
		return ""
	}
	n := in.Cgroup.OOMKills()
	if n == 0 {
		return ""
	}
	procs := fmt.Sprintf("%d processes", n)
	if n == 1 {
		procs = "1 process"
	}
	return fmt.Sprintf("warning: the kernel's out-of-memory killer killed %s of the %s server within --server-memory %s: steps that failed then failed of it; raise the limit",
		procs, in.Engine, server.FormatSize(in.Limits.Memory))
}
