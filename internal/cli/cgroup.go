package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/managed"
	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/session"
)

// A managed server's memory and CPU limits (--server-memory, --server-cpus): the flags and
// their checks before anything starts. The managed server is internal/managed's, its
// cgroup internal/server's (cgroup.go).

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
		memTotal := hwstat.MemTotal()
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("--server-memory %v", err))
		case n < server.MinMemory:
			errs = append(errs, fmt.Errorf("--server-memory %s: a managed server needs at least %s to start with its buffer pool fitted under the limit: use --server-memory %s or more",
				strings.TrimSpace(f.memory), server.FormatSize(server.MinMemory), strings.TrimSuffix(server.FormatSize(server.MinMemory), "iB")))
		case memTotal > 0 && n > memTotal:
			errs = append(errs, fmt.Errorf("--server-memory %s: more than this machine's memory (%.1fGiB, MemTotal in /proc/meminfo): give at most %dM, or drop --server-memory",
				strings.TrimSpace(f.memory), float64(memTotal)/float64(server.GiB), memTotal/server.MiB))
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

// managedOptions are the options of cfg's managed server (engine: its name).
func managedOptions(cfg *config.Run, engine string) managed.Options {
	return session.ManagedOptions(cfg, engine, readCgroups)
}

// checkServerLimits refuses limits that cannot be enforced, before anything starts: not
// a managed server, or no cgroup dbperf may make (no controller, not root), in one line
// naming why and how to fix it.
func checkServerLimits(cfg *config.Run, embedded bool) error {
	o := managedOptions(cfg, cfg.Engine)
	if !o.Limits.Set() {
		return nil
	}
	flags := limitFlagNames(cfg)
	if embedded {
		return fmt.Errorf("%s: limits for a server dbperf starts (--engine %s --managed); --engine %s runs inside dbperf", flags, strings.ReplaceAll(serverNames(), " and ", "|"), cfg.Engine)
	}
	if !cfg.Managed {
		return fmt.Errorf("%s: limits for a server dbperf starts: add --managed (a server of your own, --dsn, has the limits you set it)", flags)
	}
	err := managed.CheckLimits(o)
	var me *managed.MemoryError
	switch {
	case errors.As(err, &me):
		return fmt.Errorf("%s: %w: use --server-memory %s or more", flags, me.Err, strings.TrimSuffix(server.FormatSize(me.Least), "iB"))
	case err != nil:
		return fmt.Errorf("%s: %w", flags, err)
	}
	return nil
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
