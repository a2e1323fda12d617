// Package config holds the typed run configuration built from the command line. It is the
// first stop of the flow (cli → config → catalog → …) and imports nothing of ours.
// Validate reports every problem at once, each as one line saying how to fix it.
//
// Run holds only what every workload shares: the engine, the clients (and ClientOffset
// and Part, for a part of a run over several agents), the steps, the scale name, the
// time, the store and the target (a managed server or a DSN). Each workload's own
// parameters are its workload.Params, and Plan gets both.
package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Run is what every `dbperf run <workload>` shares; each workload's own parameters are
// its workload.Params.
type Run struct {
	Workload string
	Engine   string
	// Steps selects a subset of the workload's steps by name; empty means all.
	Steps   []string
	Clients int
	// ClientOffset numbers this process's clients from ClientOffset+1: one part of a run
	// whose clients several agents share (dbperf run --agents), so each part's clients own
	// other tables than the others'. 0 for every run of one process.
	ClientOffset int
	// Part is "KEY/I/N" when this run is part I of N of a run over several agents: its
	// steps' loads wait at a barrier in the store for the other parts.
	Part string
	// NoDeepIdle: the CPUs were held out of deep idle states during the run
	// (--no-deep-idle); stored with its parameters.
	NoDeepIdle bool
	Seed       int64
	Label      string
	// Repeat runs the whole workload this many times, each a separate stored run with the
	// same label, so reports can show medians, spread and significance.
	Repeat int
	// ResultsPath is the results store file.
	ResultsPath string
	// StoreTimeout is how long a write to the results store may keep failing or waiting
	// (retried meanwhile) before the run stops and keeps its figures in a spill file; 0 is
	// the default, 30 s. Measuring never waits on the store.
	StoreTimeout time.Duration
	Quiet        bool
	// ReportInterval is the length of one measurement interval.
	ReportInterval time.Duration
	// WorkDir holds the engine's files; empty means a fresh temporary directory.
	WorkDir string
	// DataKept says the database already holds what earlier steps of this process left
	// (a sweep's blocks after the first with --load-once): steps that need the loaded
	// tables may run without the load step.
	DataKept bool
	// Keep keeps a temporary WorkDir (and a managed server's data dir) after the run.
	Keep bool

	// Managed: dbperf starts a throwaway server (server engines); DSN: the user's server.
	Managed bool
	DSN     string
	// EngineVersion picks a managed server's binaries ("" = the default, e.g. Debian's).
	EngineVersion string
	// Profile names the managed server's config profile (built in, or <ProfilesDir>/<engine>/<name>.*),
	// or a key-value engine's.
	Profile     string
	ProfilesDir string
	// KVProfile is the text of a key-value engine's profile ("option = value" lines of the
	// workload's LSM options), read by the CLI; the workload's Resolve applies it.
	KVProfile string
	// CacheDir holds downloaded server versions.
	CacheDir string
	// MavenURL is the Maven repository versions are installed from ("" = Maven Central).
	MavenURL string
	// StorageEngine is MariaDB's storage engine: innodb or rocksdb ("" = innodb).
	StorageEngine string
	// ServerMemory limits a managed server's memory, page cache included, in bytes (0 =
	// none), and ServerCPUs the CPUs it runs on (0 = any): a cgroup of its own.
	ServerMemory int64
	ServerCPUs   int
	// Cluster is how many nodes a managed cluster has (dbperf run --cluster N; 0 or 1:
	// one server). NodeLatency and NodeJitter are the round-trip delay and its jitter
	// added to every replication link between them (--node-latency, --node-jitter), and
	// Spread puts the clients on every node in turn instead of node 0 (--spread).
	Cluster     int
	NodeLatency time.Duration
	NodeJitter  time.Duration
	Spread      bool

	// Scale names the workload's size preset ("" = the workload's default); the
	// workload's Params resolve it.
	Scale string
	// Time is how long each timed step runs; 0 = the workload's default at its scale.
	// Workloads say which steps it applies to.
	Time time.Duration
	// BuildID names the engine's build or commit (--build-id), stored in the run's env.
	BuildID string
	// Think is how long closed-loop workers pause after every operation (dbperf sweep
	// --think: a known effect to check a comparison with); 0 = none.
	Think time.Duration
	// CPUProfileDir, when set, is where each step's CPU profiles go (dbperf run
	// --cpu-profile): DIR/run-<id>/<step>.<role>.folded.
	CPUProfileDir string
	// CPUProfileOff says why no CPU profiles are taken although --cpu-profile asked for
	// them (perf unavailable: profile.Available), for the run's env.
	CPUProfileOff string
	// CPUProfileHz is the profiles' sampling rate per CPU.
	CPUProfileHz int
	// CPUProfileCallGraph is perf's call-graph mode for the profiles ("" for the
	// default: internal/cli cpuProfileCallGraph).
	CPUProfileCallGraph string
	// Explain records, per step, the server's statement statistics, plans and wait
	// samples (dbperf run --explain), for dbperf explain.
	Explain bool
}

// Validate reports every problem with the configuration, one line each, joined.
func (r *Run) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if r.Clients < 1 {
		add("--clients must be at least 1, got %d", r.Clients)
	}
	if r.Repeat < 1 {
		add("--repeat must be at least 1, got %d", r.Repeat)
	}
	if r.ReportInterval <= 0 {
		add("--report-interval must be positive, got %s", r.ReportInterval)
	}
	if r.Label != "" && strings.Trim(r.Label, "0123456789") == "" {
		add("--label %s: a number names a run id in dbperf report, so runs with this label could never be reported by it: use a label with a letter, e.g. --label run-%s", r.Label, r.Label)
	}
	if i := strings.IndexFunc(r.Label, func(c rune) bool { return c == utf8.RuneError || !strconv.IsPrint(c) }); i >= 0 {
		add("--label holds %q (at byte %d), a character that does not print: labels are shown on terminals and in reports, so use printable characters only", []rune(r.Label[i:])[0], i)
	}
	if r.ResultsPath == "" {
		add("--results must name a file")
	}
	if r.Time < 0 {
		add("--time must be a positive number of seconds, got %g", r.Time.Seconds())
	}
	return errors.Join(errs...)
}
