package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/server"
)

// A managed server's memory and CPU limits (--server-memory, --server-cpus): the flags,
// their checks before anything starts, and what the run's env records. The cgroup itself
// is internal/server's (cgroup.go).

// Env keys of a run on a server with limits.
const (
	// envServerMemory is the memory limit and how it is enforced: "256MiB, page cache
	// included (cgroup v1 memory.limit_in_bytes …; <its cgroup>)".
	envServerMemory = "server_memory"
	// envServerMemoryFitted lists the profile settings changed to fit under it, one per line.
	envServerMemoryFitted = "server_memory_fitted"
	// envServerCPUs is the CPUs the server ran on: "1 CPU: 1 (cgroup v1 cpuset.cpus; …)".
	envServerCPUs = "server_cpus"
)

// readCgroups reads the machine's cgroup hierarchies (a variable: tests point it at a
// cgroup tree of their own).
var readCgroups = server.ReadCgroups

// serverLimitFlags are the flags of the managed server's limits.
type serverLimitFlags struct {
	memory string
	cpus   int
}

// add registers --server-memory and --server-cpus on fl.
func (f *serverLimitFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.memory, "server-memory", "", "run the managed server in a cgroup limiting its memory, page cache included, to SIZE (e.g. 256M, 1G; powers of 1024): a database larger than SIZE is read from the disk; its buffer pool is fitted to a quarter of SIZE when larger (docs/engines.md)")
	fl.IntVar(&f.cpus, "server-cpus", 0, "run the managed server on N CPUs only (a cgroup cpuset of the last N CPUs dbperf may use)")
}

// apply checks the flags' values and sets them in cfg: every problem, one line each.
func (f *serverLimitFlags) apply(cfg *config.Run, changed func(string) bool) []error {
	var errs []error
	if changed("server-memory") {
		n, err := server.ParseSize(f.memory)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("--server-memory %v", err))
		case n < server.MinMemory:
			errs = append(errs, fmt.Errorf("--server-memory %s: a managed server needs at least %s to start with its buffer pool fitted under the limit: use --server-memory %s or more",
				strings.TrimSpace(f.memory), server.FormatSize(server.MinMemory), strings.TrimSuffix(server.FormatSize(server.MinMemory), "iB")))
		case memTotal() > 0 && n > memTotal():
			errs = append(errs, fmt.Errorf("--server-memory %s: more than this machine's memory (%.1fGiB, MemTotal in /proc/meminfo): give at most %dM, or drop --server-memory",
				strings.TrimSpace(f.memory), float64(memTotal())/float64(server.GiB), memTotal()/server.MiB))
		default:
			cfg.ServerMemory = n
		}
	}
	if changed("server-cpus") {
		if f.cpus < 1 {
			errs = append(errs, fmt.Errorf("--server-cpus must be at least 1, got %d", f.cpus))
		} else {
			cfg.ServerCPUs = f.cpus
		}
	}
	return errs
}

// serverLimits are cfg's limits for the managed server.
func serverLimits(cfg *config.Run) server.Limits {
	return server.Limits{Memory: cfg.ServerMemory, CPUs: cfg.ServerCPUs}
}

// checkServerLimits refuses limits that cannot be enforced, before anything starts: not
// a managed server, or no cgroup dbperf may make (no controller, not root), in one line
// naming why and how to fix it.
func checkServerLimits(cfg *config.Run, embedded bool) error {
	l := serverLimits(cfg)
	if !l.Set() {
		return nil
	}
	flags := limitFlagNames(cfg)
	if embedded {
		return fmt.Errorf("%s: limits for a server dbperf starts (--engine %s --managed); --engine %s runs inside dbperf", flags, strings.ReplaceAll(serverNames(), " and ", "|"), cfg.Engine)
	}
	if !cfg.Managed {
		return fmt.Errorf("%s: limits for a server dbperf starts: add --managed (a server of your own, --dsn, has the limits you set it)", flags)
	}
	if srv, err := catalog.Server(cfg.Engine); err == nil {
		if err := server.CheckMemory(srv, serverOptions(cfg, "")); err != nil {
			return fmt.Errorf("%s: %w: use --server-memory %s or more", flags, err, strings.TrimSuffix(server.FormatSize(leastMemory(srv)), "iB"))
		}
	}
	cg, err := readCgroups()
	if err == nil {
		err = cg.Check(l)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", flags, err)
	}
	return nil
}

// leastMemory is the smallest memory limit srv runs with.
func leastMemory(srv server.Engine) int64 {
	if f, ok := srv.(server.MemoryFloor); ok {
		if n, _ := f.MinMemory(server.Options{}); n > server.MinMemory {
			return n
		}
	}
	return server.MinMemory
}

// limitFlagNames names the limit flags cfg sets, with their values.
func limitFlagNames(cfg *config.Run) string {
	var out []string
	if cfg.ServerMemory > 0 {
		out = append(out, "--server-memory "+server.FormatSize(cfg.ServerMemory))
	}
	if cfg.ServerCPUs > 0 {
		out = append(out, fmt.Sprintf("--server-cpus %d", cfg.ServerCPUs))
	}
	return strings.Join(out, " and ")
}

// serverCgroups are the cgroup hierarchies a managed server with cfg's limits is started
// under (nil without limits, or when they cannot be read: the server reads them itself
// and says why).
func serverCgroups(cfg *config.Run) *server.Cgroups {
	if !serverLimits(cfg).Set() {
		return nil
	}
	cg, err := readCgroups()
	if err != nil {
		return nil
	}
	return cg
}

// limitsEnv is what the run's env records of a managed server's limits, and a note line
// per profile setting fitted under the memory limit.
func limitsEnv(in *server.Instance) (env map[string]string, notes []string) {
	env = map[string]string{}
	if n := in.Cgroup.MemoryNote(); n != "" {
		env[envServerMemory] = n
	}
	if len(in.MemoryFitted) > 0 {
		env[envServerMemoryFitted] = strings.Join(in.MemoryFitted, "\n")
		for _, f := range in.MemoryFitted {
			notes = append(notes, fmt.Sprintf("note: --server-memory %s: %s", server.FormatSize(in.Limits.Memory), f))
		}
	}
	if n := in.Cgroup.CPUsNote(); n != "" {
		env[envServerCPUs] = n
	}
	return env, notes
}

// oomWarning is the line saying that the kernel's out-of-memory killer killed some of
// the server's processes within its memory limit ("" when it did not): a step that failed
// with a lost connection was the limit's doing.
func oomWarning(in *server.Instance) string {
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

// memTotal is the machine's memory in bytes (MemTotal in /proc/meminfo), 0 when unknown.
var memTotal = func() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(v)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}
