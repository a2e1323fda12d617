package session

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/managed"
	"github.com/dbperf/dbperf/internal/server"
)

// CheckTarget says, before anything starts, what keeps cfg from reaching its engine
// (meta), one line per problem: embedded engines take neither --dsn nor --managed, server
// engines exactly one of them; a managed server's limits must be enforceable here
// (readCgroups reads the machine's cgroups: server.ReadCgroups, or a test's), its cluster
// one dbperf can start, its storage engine one the engine offers.
func CheckTarget(cfg *config.Run, meta engine.Meta, readCgroups func() (*server.Cgroups, error)) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if meta.Embedded {
		if cfg.Managed || cfg.DSN != "" {
			add("--engine %s runs inside dbperf: drop --managed and --dsn", meta.Name)
		}
	} else {
		switch {
		case cfg.Managed && cfg.DSN != "":
			add("--managed and --dsn exclude each other: let dbperf start a server (--managed) or name yours (--dsn)")
		case !cfg.Managed && cfg.DSN == "":
			add("--engine %s needs a server: pass --managed to let dbperf start a throwaway one, or --dsn to use yours", meta.Name)
		}
	}
	if cfg.EngineVersion != "" && !cfg.Managed {
		add("--engine-version picks the binaries of a managed server: add --managed")
	}
	o := ManagedOptions(cfg, cfg.Engine, readCgroups)
	if err := checkServerLimits(cfg, o, meta.Embedded); err != nil {
		errs = append(errs, err)
	}
	if err := checkCluster(cfg, meta); err != nil {
		errs = append(errs, err)
	}
	if cfg.StorageEngine != "" {
		if len(meta.StorageEngines) == 0 {
			add("--mysql-storage-engine applies to --engine %s only", strings.Join(storageEngineOwners(), ", "))
		} else if !slices.Contains(meta.StorageEngines, cfg.StorageEngine) {
			add("--mysql-storage-engine %q: use %s", cfg.StorageEngine, strings.Join(meta.StorageEngines, " or "))
		} else if cfg.Managed {
			if srv, err := catalog.Server(meta.Name); err == nil {
				if err := srv.Check(o.Server("")); err != nil {
					add("--mysql-storage-engine %v; use another --engine-version or storage engine", err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// storageEngineOwners names the engines that offer storage engines (MariaDB).
func storageEngineOwners() []string {
	var out []string
	for _, e := range catalog.Engines(catalog.EngineOptions{}) {
		if len(e.Meta().StorageEngines) > 0 {
			out = append(out, e.Meta().Name)
		}
	}
	return out
}

// checkServerLimits refuses limits that cannot be enforced, before anything starts: not
// a managed server, or no cgroup dbperf may make (no controller, not root), in one line
// naming why and how to fix it. o are cfg's managed server's options.
func checkServerLimits(cfg *config.Run, o managed.Options, embedded bool) error {
	if !o.Limits.Set() {
		return nil
	}
	flags := limitFlagNames(cfg)
	if embedded {
		return fmt.Errorf("%s: limits for a server dbperf starts (--engine %s --managed); --engine %s runs inside dbperf", flags, strings.Join(catalog.ServerNames(), "|"), cfg.Engine)
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

// checkCluster refuses cluster settings that cannot apply, one line each.
func checkCluster(cfg *config.Run, meta engine.Meta) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if cfg.Cluster < 2 {
		if cfg.NodeLatency > 0 || cfg.NodeJitter > 0 || cfg.Spread {
			add("--node-latency, --node-jitter and --spread are for a cluster: add --cluster 3")
		}
		return errors.Join(errs...)
	}
	if !cfg.Managed {
		add("--cluster %d starts a cluster of managed servers: add --managed", cfg.Cluster)
	}
	if srv, err := catalog.Server(meta.Name); err != nil || meta.Embedded {
		add("--cluster: --engine %s has no servers to replicate", meta.Name)
	} else if _, ok := srv.(server.ClusterEngine); !ok {
		add("--cluster: dbperf cannot start a cluster of %s", meta.Name)
	}
	if cfg.ServerMemory > 0 || cfg.ServerCPUs > 0 {
		add("--server-memory and --server-cpus limit one server: not a --cluster")
	}
	if cfg.NodeJitter > cfg.NodeLatency {
		add("--node-jitter %s is more than --node-latency %s", cfg.NodeJitter, cfg.NodeLatency)
	}
	if cfg.Spread && (cfg.CPUProfileDir != "" || cfg.Explain) {
		// Both read node 0's server only: sessions on other nodes would be missing.
		add("--spread: --cpu-profile and --explain see node 0's server only: run them without --spread")
	}
	return errors.Join(errs...)
}

// ReadKVProfile reads a key-value engine's profile (--profile, built in or in
// --profiles-dir) into cfg.KVProfile, for the workload's Resolve to apply: its LSM options
// are the workload's parameters, so each step's reopen keeps them. Other engines'
// configurations are left as they are (an unknown engine is the caller's to report).
func ReadKVProfile(cfg *config.Run) error {
	e, err := catalog.Engine(cfg.Engine, catalog.EngineOptions{StorageEngine: cfg.StorageEngine})
	if err != nil || e.Meta().Kind != engine.KindKV {
		return nil
	}
	text, _, err := server.ReadProfile(cfg.ProfilesDir, cfg.Engine, cfg.Profile)
	if err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	cfg.KVProfile = text
	return nil
}
