package tpcc

import (
	"time"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/workload"
)

// TPC-C's cardinalities (clause 1.2 and 4.3.3.1): the defaults, which only tests change.
const (
	stdItems        = 100_000 // item rows; stock rows per warehouse
	stdCustomers    = 3_000   // customers and orders per district
	districtsPerW   = 10
	newOrdersPerDis = 900 // the last 900 orders of each district are undelivered
)

// Params are tproc-c's parameters: the warehouses (the scale), the loaders, the warm-up
// and the timed run's time.
type Params struct {
	workload.ParamsBase
	// Warehouses is TPC-C's scale: every table but item grows with it.
	Warehouses int
	// Loaders is how many clients build the schema at once (0: --clients).
	Loaders int
	// Warmup is the warm-up step's time (0: no warm-up step).
	Warmup time.Duration
	// Time is the timed run's time (--time, else the scale's).
	Time time.Duration
	// items and customers are the item rows (stock rows per warehouse) and the customers
	// per district: TPC-C's 100,000 and 3,000, smaller only in this package's tests.
	items, customers int
	// brokenPayment, for a test only: payment skips its UPDATE of the district's D_YTD,
	// so consistency condition 1 fails.
	brokenPayment bool
}

var _ workload.Params = (*Params)(nil)

// NewParams returns the parameters with no scale applied.
func (*Workload) NewParams() workload.Params { return &Params{} }

// Preset returns the parameters of a scale preset.
func Preset(scale string) (*Params, error) {
	p := &Params{ParamsBase: workload.ParamsBase{Scale: scale}, items: stdItems, customers: stdCustomers}
	switch scale {
	case "tiny":
		p.Warehouses, p.Warmup, p.Time = 1, time.Second, 5*time.Second
	case "small":
		p.Warehouses, p.Warmup, p.Time = 2, 10*time.Second, 60*time.Second
	case "medium":
		p.Warehouses, p.Warmup, p.Time = 10, 60*time.Second, 300*time.Second
	case "large":
		p.Warehouses, p.Warmup, p.Time = 100, 120*time.Second, 900*time.Second
	default:
		p.Warehouses, p.Warmup, p.Time = 2, 10*time.Second, 60*time.Second
		return p, workload.StandardScales().Unknown(scale)
	}
	return p, nil
}

// AddFlags registers the workload's flags.
func (p *Params) AddFlags(fl *workload.FlagSet) {
	f := p.BindFlags(fl)
	f.Int(&p.Warehouses, "warehouses", 0, "TPC-C's scale: warehouses (each 100,000 stock rows, 30,000 customers and orders, ~300,000 order lines; default: the scale's)")
	f.Int(&p.Loaders, "loaders", 0, "clients building the schema at once, taking its jobs in turn: the items, then per warehouse its stock and each district's rows (default: --clients)")
	f.Seconds(&p.Warmup, "warmup", "the warm-up step's seconds, the mix run unmeasured before the timed run (default: the scale's; 0: no warm-up)")
}

// Resolve applies the scale preset, --time and the flags given, then validates.
func (p *Params) Resolve(cfg *config.Run, set func(string) bool) error {
	var pr workload.Problems
	pr.Join(workload.ApplyScale(p, cfg, Preset))
	if cfg.Time > 0 {
		p.Time = cfg.Time
	}
	pr.Join(p.ApplyFlags(set))
	pr.Join(p.Validate(cfg))
	return pr.Err()
}

// Validate checks every parameter, every problem at once.
func (p *Params) Validate(cfg *config.Run) error {
	var pr workload.Problems
	if p.Warehouses < 1 || p.Warehouses > 100_000 {
		pr.Add("--warehouses must be a whole number from 1 to 100000, got %d", p.Warehouses)
	}
	if p.Loaders < 0 {
		pr.Add("--loaders must be ≥ 1 (or 0: as many as --clients), got %d", p.Loaders)
	}
	if p.Warmup < 0 {
		pr.Add("--warmup must be a number of seconds ≥ 0, got %g", p.Warmup.Seconds())
	}
	if p.Time <= 0 {
		pr.Add("--time must be a positive number of seconds, got %g", p.Time.Seconds())
	}
	if cfg.Clients < 1 {
		pr.Add("--clients must be at least 1, got %d", cfg.Clients)
	}
	if p.items < 1 || p.customers < 10 {
		pr.Add("tproc-c: %d items and %d customers per district: the parameters were not resolved", p.items, p.customers)
	}
	pr.Steps(cfg, stepNames(), Name+" has")
	pr.NeedsData(cfg, stepLoad, "the tables the load step creates", true)
	return pr.Err()
}

// loaders is how many workers load the schema.
func (p *Params) loaders(cfg *config.Run) int {
	n := p.Loaders
	if n == 0 {
		n = cfg.Clients
	}
	return max(1, min(n, 1+p.Warehouses*(1+districtsPerW))) // at most one per job
}

// Stored are the resolved parameters stored with the run.
func (p *Params) Stored() map[string]any {
	return workload.Stored(p, map[string]any{"time_sec": p.Time.Seconds(),
		"items": p.items, "customers_per_district": p.customers, "keying_thinking": false})
}
