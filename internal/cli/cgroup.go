package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/server"
)

// A managed server's memory and CPU limits (--server-memory, --server-cpus): the flags;
// their checks before anything starts are session.CheckTarget's. The managed server is
// internal/managed's, its cgroup internal/server's (cgroup.go).

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
