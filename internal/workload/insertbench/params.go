package insertbench

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/workload"
)

// Params are the Insert Benchmark's parameters. Counts are per client. The cli registers
// its flags on `dbperf run insertbench`; Resolve is the one place they are validated.
//
// Its scales are the standard ones (workload.StandardScales, spec/insert-benchmark.md
// "Scale presets"): Scale, Scales and ReportInterval are workload.ParamsBase's.
type Params struct {
	workload.ParamsBase
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

var _ workload.Params = (*Params)(nil)

// NewParams returns the parameters with no scale applied; Resolve (or Preset) fills them.
func (*Workload) NewParams() workload.Params { return &Params{} }

// Preset returns the parameters of a scale preset for the given number of clients (the
// medium/large cleanup wait depends on the total rows).
func Preset(scale string, clients int) (*Params, error) {
	p := &Params{
		ParamsBase:    workload.ParamsBase{Scale: scale},
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
		p.Rows, p.Rows2, p.Time, p.CleanupWait = 100_000, 50_000, 5*time.Second, 0
	case "small":
		p.Rows, p.Rows2, p.Time, p.CleanupWait = 1_000_000, 500_000, 30*time.Second, 10*time.Second
	case "medium":
		p.Rows, p.Rows2, p.Time = 10_000_000, 5_000_000, 300*time.Second
	case "large":
		p.Rows, p.Rows2, p.Time = 30_000_000, 40_000_000, 1800*time.Second
	default:
		return p, workload.StandardScales().Unknown(scale)
	}
	if scale == "medium" || scale == "large" {
		p.CleanupWait = ReferenceCleanupWait(p.Rows * int64(max(clients, 1)))
	}
	return p, nil
}

// ReferenceCleanupWait is the reference's writeback-debt wait, min(1200, 60 + nr1/10⁶)
// seconds, where nr1 is the rows l.i0 loads over all clients (reference §1.10).
func ReferenceCleanupWait(totalRows int64) time.Duration {
	s := min(1200, 60+totalRows/1_000_000)
	return time.Duration(s) * time.Second
}

// AddFlags registers the Insert Benchmark's own flags.
func (p *Params) AddFlags(fl *workload.FlagSet) {
	f := p.BindFlags(fl)
	f.Int64(&p.Rows, "rows", 0, "rows l.i0 inserts per client (default: the scale's)")
	f.Int64(&p.Rows2, "rows2", 0, "rows l.i1 (4/5) and l.i2 (1/5) insert per client (default: the scale's)")
	f.Seconds(&p.CleanupWait, "cleanup-wait", "seconds the cleanup step lasts at least (default: the scale's)")
	f.StringToInt(&p.RowsPerCommit, "rows-per-commit", nil, "rows per INSERT/DELETE per step, e.g. l.i0=1000,l.i1=100 (defaults: l.i0 100, l.i1 50, l.i2 5, q* 50)")
	f.Bool(&p.Delete, "delete", true, "run the delete actor (the table is a queue); --delete=false turns it off")
}

// Resolve applies the scale preset, --time and the flags the user set, then validates.
func (p *Params) Resolve(cfg *config.Run, set func(string) bool) error {
	var pr workload.Problems
	pr.Join(workload.ApplyScale(p, cfg, func(scale string) (*Params, error) { return Preset(scale, cfg.Clients) }))
	if cfg.Time > 0 {
		p.Time = cfg.Time
	}
	pr.Join(p.ApplyFlags(set))
	pr.Join(p.Validate(cfg))
	return pr.Err()
}

// Validate checks every parameter against the shared configuration and the selected steps,
// every problem at once, one line each naming the flag. Resolve and Plan both call it, so a
// configuration built any other way is checked the same way.
func (p *Params) Validate(cfg *config.Run) error {
	var pr workload.Problems
	add := pr.Add
	sel, err := selectSteps(cfg)
	pr.Join(err)
	// The step-dependency rules judge only a selection that is itself right.
	stepsOK := err == nil
	if sel[stepLoad] && p.Rows < 1 {
		add("--rows must be at least 1, got %d", p.Rows)
	}
	if (sel[stepWrite1] || sel[stepWrite2]) && p.Rows2 < 1 {
		add("--rows2 must be at least 1, got %d", p.Rows2)
	}
	for _, st := range stepTable() {
		if sel[st.name] && st.kind == kindReadWrite && p.Time <= 0 {
			add("--time must be a positive number of seconds for the read-write steps, got %g", p.Time.Seconds())
			break
		}
	}
	if p.CleanupWait < 0 {
		add("--cleanup-wait must not be negative, got %g", p.CleanupWait.Seconds())
	}
	for _, step := range slices.Sorted(maps.Keys(p.RowsPerCommit)) {
		n := p.RowsPerCommit[step]
		switch st, ok := stepByName(step); {
		case !ok:
			add("--rows-per-commit: unknown step %q: insertbench has %s", step, strings.Join(stepNames(), ","))
		case st.rpc == 0:
			add("--rows-per-commit: step %s inserts no rows: set it for %s", step, strings.Join(rpcSteps(), ","))
		case n < 1:
			add("--rows-per-commit %s=%d: rows per commit must be at least 1", step, n)
		case stepsOK && len(cfg.Steps) > 0 && !sel[step]:
			add("--rows-per-commit %s=%d: %s is not in --steps %s: add it, or drop the setting", step, n, step, strings.Join(cfg.Steps, ","))
		}
	}
	for _, b := range []struct {
		name string
		v    int
	}{
		{"cashregisters", p.Cashregisters}, {"products", p.Products},
		{"customers", p.Customers}, {"max price", p.MaxPrice}, {"rows per query", p.RowsPerQuery},
	} {
		if b.v < 1 {
			add("%s must be at least 1, got %d", b.name, b.v)
		}
	}
	if p.DataLengthMin < 0 || p.DataLengthMax < p.DataLengthMin || p.DataLengthMax > maxDataLength {
		add("data length range %d..%d must lie within 0..%d (the data column is varchar(%d))",
			p.DataLengthMin, p.DataLengthMax, maxDataLength, maxDataLength)
	}
	if p.DataRandomPct < 0 || p.DataRandomPct > 100 {
		add("data random percentage must be within 0..100, got %d", p.DataRandomPct)
	}
	if p.ResyncGetMin < 0 {
		add("resync-get-min must not be negative, got %d", p.ResyncGetMin)
	}
	// A fresh database (a temporary work dir, or a managed server in one) has no tables
	// yet; a --dsn server keeps them from an earlier run.
	if stepsOK {
		pr.NeedsData(cfg, stepLoad, "the tables "+stepLoad+" creates", true)
	}
	// Range queries read the secondary indexes l.x creates: fresh tables (l.i0) without
	// l.x would fail at the first qr step.
	if stepsOK && sel[stepLoad] && !sel[stepIndex] {
		for _, st := range stepTable() {
			if sel[st.name] && st.kind == kindReadWrite && !st.point {
				add("--steps: %s queries the secondary indexes that %s creates: add %s to --steps", st.name, stepIndex, stepIndex)
				break
			}
		}
	}
	return pr.Err()
}

// Stored are the resolved parameters stored with the run: the scale and every flag's
// (workload.Stored), --time's and the data shape's.
func (p *Params) Stored() map[string]any {
	return workload.Stored(p, map[string]any{
		"time_sec":        p.Time.Seconds(),
		"data_length_min": p.DataLengthMin,
		"data_length_max": p.DataLengthMax,
		"data_random_pct": p.DataRandomPct,
		"rows_per_query":  p.RowsPerQuery,
		"resync_get_min":  p.ResyncGetMin,
	})
}
