package sysbench

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/workload"
)

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
//
// Its scales are the standard ones (workload.StandardScales, docs/sysbench.md): Scale,
// Scales and ReportInterval are workload.ParamsBase's.
type Params struct {
	workload.ParamsBase
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
}

var _ workload.Params = (*Params)(nil)

// NewParams returns the parameters with no scale applied; Resolve (or Preset) fills them.
func (*Workload) NewParams() workload.Params { return &Params{} }

// Preset returns the parameters of a scale preset.
func Preset(scale string) (*Params, error) {
	p := &Params{ParamsBase: workload.ParamsBase{Scale: scale}, Threads: []int{1}, Prepared: true}
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
		return p, workload.StandardScales().Unknown(scale)
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
func (p *Params) AddFlags(fl *workload.FlagSet) {
	f := p.BindFlags(fl)
	f.Int(&p.Tables, "tables", 0, "tables sbtest1..N (default: the scale's)")
	f.Int64(&p.TableSize, "table-size", 0, "rows per table (default: the scale's)")
	f.Seconds(&p.ReadTime, "read-time", "seconds each read test runs, and write-only and read-write (default: --time, else the scale's)")
	f.Seconds(&p.WriteTime, "write-time", "seconds each update and delete test runs (default: --time, else the scale's)")
	f.Seconds(&p.InsertTime, "insert-time", "seconds the insert test runs (default: --time, else the scale's)")
	f.Seconds(&p.CleanupWait, "cleanup-wait", "seconds each writeback-debt cleanup lasts at least (default: the scale's)")
	f.Int(&p.RangeSize, "range-size", 0, "run the tests that take a range (random-points, read-only*, read-write) at this range only (default: the catalogue's)")
	f.IntSlice(&p.Threads, "threads", []int{1}, "threads (connections) per test, or a list: 1,4,16 runs every test at each count (--clients N is --threads N)")
	f.Float64(&p.Rate, "rate", 0, "target events (transactions) per second over all threads, on an absolute schedule; 0 = as fast as they can")
	f.Bool(&p.Prepared, "prepared", true, "server-side prepared statements where sysbench uses them; --prepared=false sends text (sysbench's --db-ps-mode=disable)")
	f.StringSlice(&p.Tests, "tests", nil, "run only these tests, by name, after the load (default: all, in this order): "+strings.Join(testNames(), ","))
}

// Resolve applies the scale preset, --time, --clients and the flags the user set, then
// validates. --clients N means --threads N; when the thread counts are valid, cfg.Clients
// becomes the largest of them (the connections a step uses at once, shown and stored as
// the run's clients).
func (p *Params) Resolve(cfg *config.Run, set func(string) bool) error {
	var pr workload.Problems
	pr.Join(workload.ApplyScale(p, cfg, Preset))
	if cfg.Time > 0 {
		p.ReadTime, p.WriteTime, p.InsertTime = cfg.Time, cfg.Time, cfg.Time
	}
	threads := p.Threads
	pr.Join(p.ApplyFlags(set))
	if set("range-size") && p.RangeSize == 0 {
		p.RangeSize = -1 // given, and invalid: Validate says so
	}
	pr.Join(workload.Threads(set, cfg, &p.Threads, threads, func(n int) []int { return []int{n} }))
	pr.Join(p.Validate(cfg))
	if len(p.Threads) > 0 && slices.Min(p.Threads) >= 1 {
		cfg.Clients = slices.Max(p.Threads)
	}
	return pr.Err()
}

// Validate checks every parameter against the shared configuration and the selected
// steps, every problem at once, one line each naming the flag. Resolve and Plan both call
// it, so a configuration built any other way is checked the same way.
func (p *Params) Validate(cfg *config.Run) error {
	var pr workload.Problems
	add := pr.Add
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
		pr.Steps(cfg, stepNames(allSteps(p.Threads, p.RangeSize)), "with these --threads and --range-size, "+Name+" has")
		// A fresh database (a temporary work dir, or a managed server in one) has no
		// tables yet; a --dsn server or a kept --workdir may hold them.
		pr.NeedsData(cfg, stepLoad, "the tables the "+stepLoad+" step creates", true)
	}
	return pr.Err()
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

// Stored are the resolved parameters stored with the run: the scale and every flag's
// (workload.Stored), and the constants of the reference's runs.
func (p *Params) Stored() map[string]any {
	return workload.Stored(p, map[string]any{
		"scan_warm_time_sec":   min(scanWarmTime, p.ReadTime).Seconds(),
		"rand_type":            "uniform",
		"zipf_exp":             zipfExp,
		"load_rows_per_insert": loadBatch,
	})
}
