package sysbench

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/workload"
)

// Scale presets (docs/sysbench.md).
var scales = []string{"tiny", "small", "medium", "large"}

const defaultScale = "small"

// Constants of the reference's runs (§3.2, §3.3).
const (
	// zipfExp is sysbench's --rand-zipfian-exp default (update-zipf).
	zipfExp = 0.8
	// scanWarmTime is the length of scan.warm and scan.warmpre (§3.4), capped at the read time.
	scanWarmTime = 60 * time.Second
	// loadBatch is the rows per INSERT of the load (sysbench's prepare sends bulk inserts).
	loadBatch = 1000
	// maxTableSize keeps ids and k within the 32-bit INTEGER of §3.1.
	maxTableSize = math.MaxInt32 / 2
)

// Params are the sysbench suite's parameters. The cli registers their flags on `dbperf run
// sysbench`; Resolve applies the scale preset and the flags given, and Validate (called by
// Resolve and Plan) is the one place they are checked.
type Params struct {
	Scale string
	// Tables and TableSize: sbtest1..Tables, TableSize rows each (§3.1).
	Tables    int
	TableSize int64
	// ReadTime, WriteTime and InsertTime are how long read tests (and write-only and
	// read-write, §3.4), update and delete tests, and the insert test run.
	ReadTime, WriteTime, InsertTime time.Duration
	// CleanupWait is how long each writeback-debt cleanup lasts at least (§3.5).
	CleanupWait time.Duration
	// RangeSize replaces the catalogue's ranges of the tests that take one (0: keep them).
	RangeSize int
	// Threads are the thread counts every test runs at, in order.
	Threads []int
	// Rate is the target arrival rate in events per second over all threads (0: as fast
	// as they can), on an absolute schedule.
	Rate float64
	// Prepared: statements are server-side prepared where sysbench prepares them (all but
	// BEGIN/COMMIT, the insert test's and scan's); false is sysbench's --db-ps-mode=disable.
	Prepared bool
	// Tests selects tests by name (with the load and its cleanup); empty: all.
	Tests []string

	flags paramFlags
}

// paramFlags are the values of the workload's own flags, applied by Resolve when given.
type paramFlags struct {
	tables                         int
	tableSize                      int64
	readTime, writeTime, insertSec float64
	cleanupWait                    float64
	rangeSize                      int
	threads                        []int
	rate                           float64
	prepared                       bool
	tests                          []string
}

var _ workload.Params = (*Params)(nil)

// NewParams returns the parameters with no scale applied; Resolve (or Preset) fills them.
func (*Workload) NewParams() workload.Params { return &Params{} }

// Preset returns the parameters of a scale preset.
func Preset(scale string) (*Params, error) {
	p := &Params{Scale: scale, Threads: []int{1}, Prepared: true}
	switch scale {
	case "tiny": // tests and CI: the whole suite in well under 2 minutes per engine
		p.Tables, p.TableSize = 1, 10_000
		p.ReadTime, p.WriteTime, p.InsertTime, p.CleanupWait = time.Second, time.Second, time.Second, 0
	case "small": // the default: a few minutes on 2 cores
		p.Tables, p.TableSize = 4, 100_000
		p.ReadTime, p.WriteTime, p.InsertTime, p.CleanupWait = 5*time.Second, 5*time.Second, 5*time.Second, 10*time.Second
	case "medium":
		p.Tables, p.TableSize = 8, 1_000_000
		p.ReadTime, p.WriteTime, p.InsertTime = 120*time.Second, 180*time.Second, 120*time.Second
	case "large": // the reference's archived runs: 8 tables × 10M rows, 600 s reads, 900 s writes
		p.Tables, p.TableSize = 8, 10_000_000
		p.ReadTime, p.WriteTime, p.InsertTime = 600*time.Second, 900*time.Second, 600*time.Second
	default:
		return p, fmt.Errorf("--scale: unknown scale %q: use one of %s", scale, strings.Join(scales, ", "))
	}
	if scale == "medium" || scale == "large" {
		p.CleanupWait = ReferenceCleanupWait(int64(p.Tables) * p.TableSize)
	}
	return p, nil
}

// ReferenceCleanupWait is the reference's writeback-debt wait, min(1200, 60 +
// total_nr/10⁶) seconds, total_nr being the rows of all tables (§3.5).
func ReferenceCleanupWait(totalRows int64) time.Duration {
	return time.Duration(min(1200, 60+totalRows/1_000_000)) * time.Second
}

// AddFlags registers the suite's own flags.
func (p *Params) AddFlags(fl *pflag.FlagSet) {
	f := &p.flags
	fl.IntVar(&f.tables, "tables", 0, "tables sbtest1..N (default: the scale's)")
	fl.Int64Var(&f.tableSize, "table-size", 0, "rows per table (default: the scale's)")
	fl.Float64Var(&f.readTime, "read-time", 0, "seconds each read test runs, and write-only and read-write (default: --time, else the scale's)")
	fl.Float64Var(&f.writeTime, "write-time", 0, "seconds each update and delete test runs (default: --time, else the scale's)")
	fl.Float64Var(&f.insertSec, "insert-time", 0, "seconds the insert test runs (default: --time, else the scale's)")
	fl.Float64Var(&f.cleanupWait, "cleanup-wait", 0, "seconds each writeback-debt cleanup lasts at least (default: the scale's)")
	fl.IntVar(&f.rangeSize, "range-size", 0, "run the tests that take a range (random-points, read-only*, read-write) at this range only (default: the catalogue's)")
	fl.IntSliceVar(&f.threads, "threads", []int{1}, "threads (connections) per test, or a list: 1,4,16 runs every test at each count (--clients N is --threads N)")
	fl.Float64Var(&f.rate, "rate", 0, "target events (transactions) per second over all threads, on an absolute schedule; 0 = as fast as they can")
	fl.BoolVar(&f.prepared, "prepared", true, "server-side prepared statements where sysbench uses them; --prepared=false sends text (sysbench's --db-ps-mode=disable)")
	fl.StringSliceVar(&f.tests, "tests", nil, "run only these tests, by name, after the load (default: all, in this order): "+strings.Join(testNames(), ","))
}

// Scales lists the presets; small is the default.
func (*Params) Scales() ([]string, string) { return slices.Clone(scales), defaultScale }

// ReportInterval is 1 s for tiny and small scales and 5 s otherwise.
func (p *Params) ReportInterval() time.Duration {
	if p.Scale == "tiny" || p.Scale == "small" {
		return time.Second
	}
	return 5 * time.Second
}

// Resolve applies the scale preset, --time, --clients and the flags the user set, then
// validates. --clients N means --threads N; when the thread counts are valid, cfg.Clients
// becomes the largest of them (the connections a step uses at once, shown and stored as
// the run's clients).
func (p *Params) Resolve(cfg *config.Run, set func(string) bool) error {
	var errs []error
	scale := cfg.Scale
	if scale == "" {
		scale = defaultScale
	}
	flags := p.flags
	preset, err := Preset(scale)
	if err != nil {
		errs = append(errs, err)
		preset, _ = Preset(defaultScale) // go on, so the other checks report only real problems
	}
	*p = *preset
	p.flags = flags
	if set("tables") {
		p.Tables = flags.tables
	}
	if set("table-size") {
		p.TableSize = flags.tableSize
	}
	if cfg.Time > 0 {
		p.ReadTime, p.WriteTime, p.InsertTime = cfg.Time, cfg.Time, cfg.Time
	}
	for _, d := range []struct {
		flag string
		v    float64
		dst  *time.Duration
	}{
		{"read-time", flags.readTime, &p.ReadTime}, {"write-time", flags.writeTime, &p.WriteTime},
		{"insert-time", flags.insertSec, &p.InsertTime}, {"cleanup-wait", flags.cleanupWait, &p.CleanupWait},
	} {
		if set(d.flag) {
			*d.dst = time.Duration(d.v * float64(time.Second))
			if d.v > 0 && *d.dst == 0 {
				*d.dst = 1 // a positive value never rounds to "none"
			}
		}
	}
	if set("range-size") {
		p.RangeSize = flags.rangeSize
		if p.RangeSize == 0 {
			p.RangeSize = -1 // given, and invalid: Validate says so
		}
	}
	switch {
	case set("threads") && set("clients"):
		errs = append(errs, fmt.Errorf("--threads and --clients both given: --clients %d is --threads %d; give one", cfg.Clients, cfg.Clients))
	case set("threads"):
		p.Threads = slices.Clone(flags.threads)
	case set("clients"):
		p.Threads = []int{cfg.Clients}
	}
	if set("rate") {
		p.Rate = flags.rate
	}
	if set("prepared") {
		p.Prepared = flags.prepared
	}
	p.Tests = slices.Clone(flags.tests)
	if err := p.Validate(cfg); err != nil {
		errs = append(errs, err)
	}
	if len(p.Threads) > 0 && slices.Min(p.Threads) >= 1 {
		cfg.Clients = slices.Max(p.Threads)
	}
	return errors.Join(errs...)
}

// Validate checks every parameter against the shared configuration and the selected
// steps, every problem at once, one line each naming the flag. Resolve and Plan both call
// it, so a configuration built any other way is checked the same way.
func (p *Params) Validate(cfg *config.Run) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if p.Tables < 1 {
		add("--tables must be at least 1, got %d", p.Tables)
	}
	if p.TableSize < 1 || p.TableSize > maxTableSize {
		add("--table-size must be within 1..%d (ids and k are 32-bit INTEGERs), got %d", maxTableSize, p.TableSize)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--read-time", p.ReadTime}, {"--write-time", p.WriteTime}, {"--insert-time", p.InsertTime}} {
		if d.v <= 0 {
			add("%s must be a positive number of seconds, got %g", d.flag, d.v.Seconds())
		}
	}
	if p.CleanupWait < 0 {
		add("--cleanup-wait must not be negative, got %g", p.CleanupWait.Seconds())
	}
	if p.RangeSize < 0 {
		add("--range-size must be at least 1 (leave it out for the catalogue's ranges)")
	}
	if len(p.Threads) == 0 {
		add("--threads must name at least one thread count")
	}
	for i, n := range p.Threads {
		switch {
		case n < 1:
			add("--threads: every thread count must be at least 1, got %d", n)
		case slices.Index(p.Threads, n) < i:
			add("--threads: %d is listed twice", n)
		}
	}
	if p.Rate < 0 || math.IsNaN(p.Rate) || math.IsInf(p.Rate, 0) {
		add("--rate must be a number of events per second ≥ 0 (0: as fast as they can), got %g", p.Rate)
	}
	if len(p.Tests) > 0 && len(cfg.Steps) > 0 {
		add("--tests and --steps both given: --tests picks tests (with the load), --steps exact step names; give one")
	}
	valid := testNames()
	for i, t := range p.Tests {
		switch {
		case !slices.Contains(valid, t):
			add("--tests: unknown test %q: sysbench has %s", t, strings.Join(valid, ","))
		case slices.Index(p.Tests, t) < i:
			add("--tests: %s is listed twice", t)
		}
	}
	if len(p.Threads) > 0 && slices.Min(p.Threads) >= 1 && p.RangeSize >= 0 {
		names := stepNames(allSteps(p.Threads, p.RangeSize))
		for i, s := range cfg.Steps {
			switch {
			case !slices.Contains(names, s):
				add("--steps: unknown step %q: with these --threads and --range-size, sysbench has %s", s, strings.Join(names, ","))
			case slices.Index(cfg.Steps, s) < i:
				add("--steps: step %q is listed twice", s)
			}
		}
		// A fresh database (a temporary work dir, or a managed server in one) has no
		// tables yet; a --dsn server or a kept --workdir may hold them.
		if len(cfg.Steps) > 0 && !slices.Contains(cfg.Steps, stepLoad) && cfg.WorkDir == "" && cfg.DSN == "" {
			add("--steps %s needs the tables the %s step creates: add %s to --steps, or pass --workdir DIR holding a database kept with --keep (or --dsn, a server holding them)",
				strings.Join(cfg.Steps, ","), stepLoad, stepLoad)
		}
	}
	return errors.Join(errs...)
}

// timeOf is how long a step of test t (as variant) runs.
func (p *Params) timeOf(t test, variant string) time.Duration {
	switch {
	case t.kind == kScan && variant != "":
		return min(scanWarmTime, p.ReadTime)
	case t.time == timeWrite:
		return p.WriteTime
	case t.time == timeInsert:
		return p.InsertTime
	}
	return p.ReadTime
}

// Stored are the resolved parameters stored with the run.
func (p *Params) Stored() map[string]any {
	return map[string]any{
		"scale":                p.Scale,
		"tables":               p.Tables,
		"table_size":           p.TableSize,
		"read_time_sec":        p.ReadTime.Seconds(),
		"write_time_sec":       p.WriteTime.Seconds(),
		"insert_time_sec":      p.InsertTime.Seconds(),
		"scan_warm_time_sec":   min(scanWarmTime, p.ReadTime).Seconds(),
		"cleanup_wait_sec":     p.CleanupWait.Seconds(),
		"range_size":           p.RangeSize,
		"threads":              p.Threads,
		"rate":                 p.Rate,
		"prepared":             p.Prepared,
		"tests":                p.Tests,
		"rand_type":            "uniform",
		"zipf_exp":             zipfExp,
		"load_rows_per_insert": loadBatch,
	}
}
