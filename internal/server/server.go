// Package server is what every throwaway database server dbperf starts has in common: the
// Engine interface a server engine implements (one folder each: internal/server/postgres,
// internal/server/mariadb, listed in the catalog), the running Instance (its private
// directory, generated password, process group, log, stop), config profiles (built into
// the binary, or files in a profiles directory), versions installed from a Maven
// repository (maven.go), the files, processes and ports engines share (files.go), and
// the memory and CPU limits a server may run under, in a cgroup of its own (limits.go,
// cgroup.go).
//
// Every server listens only on 127.0.0.1 (a free port) and a unix socket in the
// instance's private directory (0700), its superuser reachable only with the password
// generated for the instance, and is stopped — also on failure and on Ctrl-C — so no
// process outlives dbperf. It imports nothing of ours; the cli turns an Instance's DSN
// into an engine.Target.
//
// # A server engine is a folder
//
// The original design had one server package with a function per engine and the cli
// choosing among them by name; adding a third engine meant string switches in five
// files. Now Engine is an interface, which each engine implements in its own package
// (server/postgres, server/mariadb), and catalog.Servers lists them; the cli asks
// catalog.Server(name) and never names an engine. What engines share is here:
//
//   - Engine: Name, Check of its options before anything starts, Start, StopSignal,
//     Versions, Installs and Install. Ensure installs a version on first use; StopPID
//     stops, by its pid, a server this process did not start.
//   - Instance: NewInstance makes a private (0700) instance directory and a password per
//     instance, carried only in the DSN; Launch starts the server in its own process
//     group; then WaitReady, Stop with the engine's signal, AfterStop and Remove.
//   - Config profiles, built in (go:embed of internal/server/profiles/, which the
//     repository's top-level profiles symlinks to) and overridable from a directory.
//   - maven.go: Artifact, a server's builds on a Maven repository. An engine supplies its
//     path, what an installed version holds and how its jar unpacks. The newest matching
//     version comes from maven-metadata.xml; HTTP reads are bounded; a jar is checked
//     against its SHA-1 and unpacked atomically; installed versions and matches are
//     listed.
//   - files.go: free ports below the ephemeral range, helper commands, private files,
//     short socket directories, tree copies.
//   - limits.go: Limits, a server's memory and CPUs (--server-memory, --server-cpus);
//     ParseSize and FormatSize; MinMemory and an engine's MemoryFloor; FitMemory, the
//     settings above their share of a memory limit, which each engine fits in its own
//     memfit.go.
//   - cgroup.go: Cgroups, the hierarchies from /proc (v2 where it offers the controller,
//     else v1's); Check, one line naming why no cgroup can be made, before anything
//     starts; Cgroup, made below dbperf's own cgroup and removed by Stop. In
//     cgroupgate.go, Launch starts the server behind a shell gate that execs it once its
//     pid is in the cgroup.
//   - cluster.go: ClusterEngine, an engine that starts a replicated cluster of itself
//     (StartCluster); ClusterOptions (the nodes, and Link: the address a node dials to
//     reach another, the cli's delaying proxy); Cluster (its nodes, topology and links;
//     ReadOnlyStandbys: only node 0 takes writes; Stop; Remove; Agree: every node caught
//     up and its tables' rows and checksums compared with node 0's); ClusterDriver (an
//     engine's catch-up, table sums and replication figures); NewNodeInstance, a node
//     sharing the first node's password.
//
// # Adding a server engine
//
// Its client is an engine in internal/engine/<name> (Meta().Embedded false). Its server
// is internal/server/<name> implementing Engine: Start builds on NewInstance (private
// directory, password), Instance.Launch and WaitReady; versions from Maven Central are
// an Artifact; its config profiles go in internal/server/profiles/<name>/. Then one line
// in each of catalog.Engines and catalog.Servers. Package servertest has the shared
// test pieces.
package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// Options say which server to start and where.
type Options struct {
	// WorkDir is the parent of the data directory (created if missing).
	WorkDir string
	// Version selects the server binaries ("" = the default for the engine, e.g. Debian's).
	Version string
	// Profile names a config profile: ProfilesDir/<engine>/<Profile>.conf (or .cnf) when
	// ProfilesDir is set and has it, else the built-in profile of that name.
	Profile     string
	ProfilesDir string
	// CacheDir holds downloaded server versions.
	CacheDir string
	// MavenURL is the Maven repository a version not installed yet comes from
	// (DefaultMavenBase when ""): a mirror, offline (--maven-url).
	MavenURL string
	// StorageEngine is the server's default storage engine, for engines that have several
	// (MariaDB: "innodb", the default, or "rocksdb"); "" is the engine's default.
	StorageEngine string
	// Detached servers outlive dbperf (`dbperf server start`); others die with it.
	Detached bool
	// Limits are the memory and CPUs the server may use (dbperf run --server-memory,
	// --server-cpus), enforced by a cgroup of its own while it runs (cgroup.go); the
	// engine fits its profile's buffer pool under the memory limit (Instance.MemoryFitted).
	// Cgroups are the machine's cgroup hierarchies (nil: ReadCgroups).
	Limits  Limits
	Cgroups *Cgroups
	// CopyOf, when set, is a server of this engine and version whose data the new server
	// starts from instead of a fresh data directory: a physical copy (the same pages; of a
	// running server as a streaming standby's base backup, of one shut down cleanly by its
	// files), with its superuser's password, the new server's own profile, port and
	// socket. Engines that cannot copy refuse it in Check.
	CopyOf *Instance
}

// Engine is one kind of server dbperf starts. A server engine lives in its own folder
// under internal/server and is listed once in the catalog (catalog.Servers); nothing else
// names it. Its Name is the name of the client engine (engine.Meta.Name) that reaches it.
type Engine interface {
	// Name is the engine's name on the command line: "postgres".
	Name() string
	// Check refuses, in one line each, options that Start would refuse for reasons known
	// before anything is installed or started (a storage engine this version lacks).
	Check(o Options) error
	// Start initialises a fresh data directory under o.WorkDir from the profile o.Profile
	// (profile lines the version does not know may be left out, noted in
	// Instance.ProfileSkipped), starts the server and waits until it serves the benchmark
	// database. On any failure nothing is left running or behind.
	Start(ctx context.Context, o Options) (*Instance, error)
	// StopSignal is the signal that shuts the server down cleanly, and how long that may
	// take before the server is killed.
	StopSignal() (syscall.Signal, time.Duration)
	// Versions lists the versions Start can use: the system's own packages, then those
	// installed in cacheDir, oldest first.
	Versions(cacheDir string) ([]Version, error)
	// Installs says whether version comes from a Maven repository (Install) rather than
	// from the system's package.
	Installs(version string) bool
	// Install installs version (full or a prefix resolved to the newest published match)
	// from the Maven repository at baseURL (DefaultMavenBase when "") into cacheDir and
	// returns its directory. A version the engine does not install is an error naming
	// where that version comes from.
	Install(ctx context.Context, baseURL, cacheDir, version string) (string, error)
}

// Version is one version of a server engine dbperf can start.
type Version struct {
	Version string // "15", "13.18.0"
	// Source is where it comes from: the system's package ("Debian") or the cache dir.
	Source string
}

// Ensure installs version of e from Maven Central on first use, so `--engine-version 13`
// works without a separate `dbperf server install`. The system's versions need nothing.
func Ensure(ctx context.Context, e Engine, cacheDir, version string) error {
	return EnsureFrom(ctx, e, DefaultMavenBase, cacheDir, version)
}

// EnsureFrom is Ensure from the Maven repository at baseURL. When the install fails (no
// network, a mirror down) the error says how to go on: the versions installed here, a
// mirror (dbperf server install … --maven-url), or a copy of the cache dir from a host
// that has the version (issue 42: the failure named only the refused connection).
func EnsureFrom(ctx context.Context, e Engine, baseURL, cacheDir, version string) error {
	if !e.Installs(version) {
		return nil
	}
	have, err := e.Versions(cacheDir)
	if err != nil {
		return err
	}
	for _, v := range have {
		if v.Source == cacheDir && (v.Version == version || strings.HasPrefix(v.Version, version+".")) {
			return nil
		}
	}
	if baseURL == "" {
		baseURL = DefaultMavenBase
	}
	if _, err := e.Install(ctx, baseURL, cacheDir, version); err != nil {
		var installed []string
		for _, v := range have {
			installed = append(installed, fmt.Sprintf("%s (%s)", v.Version, v.Source))
		}
		here := "none"
		if len(installed) > 0 {
			here = strings.Join(installed, ", ")
		}
		return fmt.Errorf("%s %s is not installed and installing it failed: %w; installed here: %s; to go on: use an installed version (--engine-version), install it from a mirror you can reach (--maven-url URL, or dbperf server install %s@%s --maven-url URL --cache-dir %s), or copy %s from a host that has %s %s (dbperf server list there says where)",
			e.Name(), version, err, here, e.Name(), version, cacheDir, cacheDir, e.Name(), version)
	}
	return nil
}

// StopPID stops a server this process did not start (one left running by `dbperf server
// start`): the engine's shutdown signal, up to grace to exit, then SIGKILL to its process
// group (servers are started as group leaders).
func StopPID(e Engine, pid int, grace time.Duration) error {
	if pid <= 0 || !pidAlive(pid) {
		return nil
	}
	sig, _ := e.StopSignal()
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s (pid %d): %w", e.Name(), pid, err)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !pidAlive(pid) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return nil
}

// pidAlive says whether a process exists and is not a zombie.
func pidAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}
