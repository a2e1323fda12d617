// Package config holds the typed run configuration built from the command line. It is the
// first stop of the flow (cli → config → catalog → …) and imports nothing of ours.
// Validate reports every problem at once, each as one line saying how to fix it.
package config

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Run is everything one `dbperf run` needs.
type Run struct {
	Workload string
	Engine   string
	// Steps selects a subset of the workload's steps by name; empty means all.
	Steps   []string
	Clients int
	Seed    int64
	Label   string
	// Repeat runs the whole workload this many times, each a separate stored run with the
	// same label, so reports can show medians, spread and significance.
	Repeat int
	// ResultsPath is the results store file.
	ResultsPath string
	Quiet       bool
	// ReportInterval is the length of one measurement interval.
	ReportInterval time.Duration
	// WorkDir holds the engine's files; empty means a fresh temporary directory.
	WorkDir string
	// Keep keeps a temporary WorkDir (and a managed server's data dir) after the run.
	Keep bool

	// Managed: dbperf starts a throwaway server (server engines); DSN: the user's server.
	Managed bool
	DSN     string
	// EngineVersion picks a managed server's binaries ("" = the default, e.g. Debian's).
	EngineVersion string
	// Profile names the managed server's config profile (profiles/<engine>/<name>.*).
	Profile     string
	ProfilesDir string
	// CacheDir holds downloaded server versions.
	CacheDir string
	// StorageEngine is MariaDB's storage engine: innodb or rocksdb ("" = innodb).
	StorageEngine string

	InsertBench InsertBench
}

// Scales of the Insert Benchmark (spec/insert-benchmark.md "Scale presets").
var insertBenchScales = []string{"tiny", "small", "medium", "large"}

// InsertBenchScales lists the preset names.
func InsertBenchScales() []string { return append([]string(nil), insertBenchScales...) }

// InsertBench holds the Insert Benchmark's parameters. Counts are per client.
type InsertBench struct {
	Scale string
	// Rows inserted by l.i0 per client.
	Rows int64
	// Rows2 inserted by l.i1 (4/5) and l.i2 (1/5) per client.
	Rows2 int64
	// Time is the length of each read-write step (qr*, qp*).
	Time time.Duration
	// CleanupWait is how long the cleanup step lasts at least.
	CleanupWait time.Duration
	// Delete turns the delete actor on (the default).
	Delete bool
	// RowsPerCommit overrides rows per INSERT (and DELETE) per step name.
	RowsPerCommit map[string]int

	// Data shape, reference §1.4 with the drivers' values.
	DataLengthMin int
	DataLengthMax int
	DataRandomPct int
	Cashregisters int
	Products      int
	Customers     int
	MaxPrice      int
	// RowsPerQuery is the LIMIT of range queries and the IN-list length of point queries.
	RowsPerQuery int
	// ResyncGetMin re-reads min(transactionid) every this many delete batches (§1.5).
	ResyncGetMin int
}

// InsertBenchPreset returns the parameters of a scale preset for the given number of
// clients (the medium/large cleanup wait depends on the total rows).
func InsertBenchPreset(scale string, clients int) (InsertBench, error) {
	ib := InsertBench{
		Scale:         scale,
		Delete:        true,
		DataLengthMin: 10,
		DataLengthMax: 20,
		DataRandomPct: 50,
		Cashregisters: 1000,
		Products:      10000,
		Customers:     100000,
		MaxPrice:      500,
		RowsPerQuery:  10,
		ResyncGetMin:  1000,
	}
	switch scale {
	case "tiny":
		ib.Rows, ib.Rows2, ib.Time, ib.CleanupWait = 100_000, 50_000, 5*time.Second, 0
	case "small":
		ib.Rows, ib.Rows2, ib.Time, ib.CleanupWait = 1_000_000, 500_000, 30*time.Second, 10*time.Second
	case "medium":
		ib.Rows, ib.Rows2, ib.Time = 10_000_000, 5_000_000, 300*time.Second
	case "large":
		ib.Rows, ib.Rows2, ib.Time = 30_000_000, 40_000_000, 1800*time.Second
	default:
		return ib, fmt.Errorf("unknown scale %q: use one of %s", scale, strings.Join(insertBenchScales, ", "))
	}
	if scale == "medium" || scale == "large" {
		ib.CleanupWait = ReferenceCleanupWait(ib.Rows * int64(max(clients, 1)))
	}
	return ib, nil
}

// ReferenceCleanupWait is the reference's writeback-debt wait, min(1200, 60 + nr1/10⁶)
// seconds, where nr1 is the rows l.i0 loads over all clients (reference §1.10).
func ReferenceCleanupWait(totalRows int64) time.Duration {
	s := min(1200, 60+totalRows/1_000_000)
	return time.Duration(s) * time.Second
}

// DefaultReportInterval is 1 s for tiny and small scales and 5 s otherwise.
func DefaultReportInterval(scale string) time.Duration {
	if scale == "tiny" || scale == "small" {
		return time.Second
	}
	return 5 * time.Second
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
	if r.ResultsPath == "" {
		add("--results must name a file")
	}
	if r.Workload == "insertbench" {
		ib := &r.InsertBench
		if ib.Rows < 1 {
			add("--rows must be at least 1, got %d", ib.Rows)
		}
		if ib.Rows2 < 1 {
			add("--rows2 must be at least 1, got %d", ib.Rows2)
		}
		if ib.Time <= 0 {
			add("--time must be a positive number of seconds, got %g", ib.Time.Seconds())
		}
		if ib.CleanupWait < 0 {
			add("--cleanup-wait must not be negative, got %g", ib.CleanupWait.Seconds())
		}
		for step, n := range ib.RowsPerCommit {
			if n < 1 {
				add("--rows-per-commit %s=%d: rows per commit must be at least 1", step, n)
			}
		}
		if ib.DataLengthMin < 0 || ib.DataLengthMax < ib.DataLengthMin {
			add("data length range %d..%d is empty", ib.DataLengthMin, ib.DataLengthMax)
		}
		if ib.RowsPerQuery < 1 {
			add("rows per query must be at least 1, got %d", ib.RowsPerQuery)
		}
	}
	return errors.Join(errs...)
}
