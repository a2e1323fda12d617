// Package tpcc is `dbperf run tproc-c`: HammerDB's TPROC-C, the workload derived from
// TPC-C, on PostgreSQL, MariaDB (InnoDB, MyRocks) and SQLite. In the flow it is a
// workload family: the catalog lists it, Params.Resolve validates, Plan makes the steps
// and the runner runs them.
//
// Steps: load (the nine tables, filled by --loaders clients in parallel, a job per
// warehouse and per district), index (the primary keys where the engine adds them after
// the load, and the two secondary indexes), warmup (the mix, unmeasured as HammerDB's
// ramp-up) and run (the mix for --time with --clients clients). Every step ends with
// TPC-C's consistency conditions 1–4 (check.go); a violation fails the step, naming the
// condition, the warehouse and the district.
//
// Files: params.go (flags and presets), schema.go (the tables, keys and per-dialect
// SQL), gen.go (TPC-C's random data), load.go (the loader), tx.go (a client: its
// statements, the mix, retries), txs.go (the five transactions), check.go (the
// consistency conditions).
//
// Each client is a workload.Mixer: every transaction is one op, recorded under its own
// label, so the report has throughput and latency percentiles per transaction type; the
// run step's primary label is new-order (committed new orders), whose throughput × 60
// is HammerDB's NOPM. The step's note has NOPM and TPM and the rollbacks and retries of
// each type.
package tpcc

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

// Name is the workload's name on the command line.
const Name = "tproc-c"

// version is bumped whenever the generated data or statements change.
const version = 1

// Steps, groups and labels.
const (
	stepLoad   = "load"
	stepIndex  = "index"
	stepWarmup = "warmup"
	stepRun    = "run"

	groupLoad = "load"
	groupRun  = "run"

	labelInsert = "insert"
	labelIndex  = "index"
)

func stepNames() []string { return []string{stepLoad, stepIndex, stepWarmup, stepRun} }

// Workload is TPROC-C.
type Workload struct{}

// New returns the TPROC-C workload.
func New() *Workload { return &Workload{} }

var _ workload.Workload = (*Workload)(nil)

// Meta names the workload and its steps.
func (*Workload) Meta() workload.Meta {
	return workload.Meta{Name: Name, Version: version, Kind: engine.KindSQL,
		Steps:   stepNames(),
		Summary: "HammerDB's TPROC-C (TPC-C's nine tables and five transactions), NOPM and TPM, --warehouses N",
		Examples: []string{
			"--engine postgres --managed --warehouses 4 --clients 4 --time 60",
			"--engine mariadb --managed --mysql-storage-engine rocksdb --warehouses 2 --clients 4 --time 30",
			"--scale tiny --clients 2",
		},
		SweepExamples: []string{
			"--engine postgres --versions 13,15 --warehouses 2 --time 30",
		},
		Groups: []workload.StepGroup{
			{Name: groupLoad, Title: "load and index"},
			{Name: groupRun, Title: "transactions (new orders/s: NOPM ÷ 60)", PerMinute: perMinute()},
		}}
}

// perMinute are HammerDB's figures, which comparisons show beside the run step's new
// orders per second: NOPM, the committed new orders per minute (the step's throughput ×
// 60), and TPM, the committed transactions of the five types per minute (a new-order
// rolled back on purpose is not committed).
func perMinute() []workload.PerMinute {
	return []workload.PerMinute{
		{Name: "NOPM", Title: "committed new orders per minute (HammerDB's)", Labels: []string{txLabels[txNewOrder]}},
		{Name: "TPM", Title: "committed transactions per minute, the five types (HammerDB's)", Labels: slices.Clone(txLabels[:txNewOrderRollback])},
	}
}

// Plan returns the steps --steps selects (all by default).
func (*Workload) Plan(cfg *config.Run, params workload.Params) ([]workload.Step, error) {
	prm, err := workload.PlanParams[*Params](Name, cfg, params)
	if err != nil {
		return nil, err
	}
	pl := &plan{p: *prm, seed: cfg.Seed, loaders: prm.loaders(cfg), clients: cfg.Clients, c: constants(cfg.Seed)}
	want := func(step string) bool { return len(cfg.Steps) == 0 || slices.Contains(cfg.Steps, step) }
	var steps []workload.Step
	if want(stepLoad) {
		steps = append(steps, &loadStep{StepBase: workload.NewStepBase(stepLoad, groupLoad), p: pl})
	}
	if want(stepIndex) {
		steps = append(steps, &indexStep{StepBase: workload.NewStepBase(stepIndex, groupLoad), p: pl})
	}
	if want(stepWarmup) && prm.Warmup > 0 {
		steps = append(steps, &runStep{StepBase: workload.NewStepBase(stepWarmup, ""), p: pl, time: prm.Warmup})
	}
	if want(stepRun) {
		steps = append(steps, &runStep{StepBase: workload.NewStepBase(stepRun, groupRun), p: pl, time: prm.Time})
	}
	return steps, nil
}

// plan is what the steps of one run share.
type plan struct {
	p       Params
	seed    int64
	loaders int
	clients int
	c       nuConsts
}

// names is how many customer last names there are (1,000 unless a test loads fewer
// customers).
func (pl *plan) names() int { return min(1000, pl.p.customers) }

// nuConsts are NURand's constants C (clause 2.1.6): C_LAST at load and at run time
// (their difference in [65, 119], not 96 or 112, as clause 2.1.6.1 requires), C_ID and
// OL_I_ID's, drawn from the seed.
type nuConsts struct {
	lastLoad, lastRun, id, item int
}

func constants(seed int64) nuConsts {
	r := workload.Stream(seed, Name, "C")
	c := nuConsts{lastLoad: r.IntN(256), id: r.IntN(1024), item: r.IntN(8192)}
	for {
		c.lastRun = r.IntN(256)
		if delta := abs(c.lastRun - c.lastLoad); delta >= 65 && delta <= 119 && delta != 96 && delta != 112 {
			return c
		}
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// indexStep builds every table's keys after the load, one builder per table at once.
type indexStep struct {
	workload.StepBase
	p *plan
}

var _ workload.Step = (*indexStep)(nil)

// Prepare has nothing to do.
func (s *indexStep) Prepare(context.Context, engine.Handle) error { return nil }

// Load has one workload.Indexer per table that has keys to build.
func (s *indexStep) Load(_ context.Context, hh engine.Handle) (workload.Load, error) {
	d, err := workload.SQLDialect(hh)
	if err != nil {
		return workload.Load{}, err
	}
	g := workload.Group{Label: labelIndex, Role: "index", Unit: workload.UnitRows, UntilDone: true}
	for _, t := range tables(d) {
		stmts := indexStmts(d, t)
		if len(stmts) == 0 {
			continue
		}
		var rows atomic.Int64
		g.Workers = append(g.Workers, &workload.Indexer{
			Who: Name + " " + s.Name() + " " + t.name, Stmts: stmts, Indexed: rows.Load,
			Setup: func(ctx context.Context, sess engine.Session) error {
				n, err := queryInt(ctx, sess, "SELECT count(*) FROM "+t.name)
				rows.Store(n)
				return err
			},
		})
	}
	return workload.Load{Kind: "load", Primary: labelIndex, Groups: []workload.Group{g}}, nil
}

// Verify checks the consistency conditions.
func (s *indexStep) Verify(ctx context.Context, hh engine.Handle) (string, error) {
	return s.p.verify(ctx, hh, s.Name(), false)
}

// runStep runs the mix: the warm-up or the timed run.
type runStep struct {
	workload.StepBase
	p     *plan
	time  time.Duration
	stats *txStats
	// clients keep their random streams across the Loads of a step run as slices.
	clients []*client
}

var (
	_ workload.Step   = (*runStep)(nil)
	_ workload.Steady = (*runStep)(nil)
	_ workload.Noter  = (*runStep)(nil)
)

// txStats count each kind's committed transactions and retries over one Load of the
// step (a step run as slices has a Load and a Note per slice); start is when its first
// transaction started (Unix ns), for the rates of the note.
type txStats struct {
	committed, retries [nKinds]atomic.Int64
	start              atomic.Int64
}

// SteadyTime is the step's time.
func (s *runStep) SteadyTime() time.Duration { return s.time }

// Prepare has nothing to do.
func (s *runStep) Prepare(context.Context, engine.Handle) error { return nil }

// Load has --clients clients, client i's home warehouse the (i mod W)+1-th.
func (s *runStep) Load(_ context.Context, hh engine.Handle) (workload.Load, error) {
	d, err := workload.SQLDialect(hh)
	if err != nil {
		return workload.Load{}, err
	}
	s.stats = &txStats{}
	g := workload.Group{Label: txLabels[txNewOrder], Role: "transaction", Unit: workload.UnitOps}
	for i := range s.p.clients {
		if i >= len(s.clients) {
			src, r := clientRand(s.p.seed, Name, s.Name(), "client", strconv.Itoa(i))
			s.clients = append(s.clients, &client{pl: s.p, w: i%s.p.p.Warehouses + 1,
				slD: i/s.p.p.Warehouses%districtsPerW + 1, src: src, r: r})
		}
		c := s.clients[i]
		c.d, c.stats = d, s.stats
		g.Workers = append(g.Workers, c)
	}
	return workload.Load{Kind: "write", Primary: txLabels[txNewOrder], Groups: []workload.Group{g}, Duration: s.time}, nil
}

// Verify checks the consistency conditions.
func (s *runStep) Verify(ctx context.Context, hh engine.Handle) (string, error) {
	return s.p.verify(ctx, hh, s.Name(), false)
}

// Note is HammerDB's figures, NOPM and TPM from the first transaction's start to the
// load's end, and each type's transactions, rollbacks and retries.
func (s *runStep) Note() string {
	if s.stats == nil || s.stats.start.Load() == 0 {
		return ""
	}
	elapsed := time.Since(time.Unix(0, s.stats.start.Load()))
	var total int64
	parts := make([]string, 0, nKinds)
	for k := range nKinds {
		n := s.stats.committed[k].Load()
		if k != txNewOrderRollback {
			total += n
		}
	}
	mins := elapsed.Minutes()
	nopm := float64(s.stats.committed[txNewOrder].Load()) / mins
	for k := range txNewOrderRollback {
		part := fmt.Sprintf("%s %d", txLabels[k], s.stats.committed[k].Load())
		if k == txNewOrder {
			part += fmt.Sprintf(" (+%d rolled back on an unused item)", s.stats.committed[txNewOrderRollback].Load())
		}
		if r := s.stats.retries[k].Load(); r > 0 {
			part += fmt.Sprintf(" (%d retried after a conflict)", r)
		}
		parts = append(parts, part)
	}
	return fmt.Sprintf("NOPM %.0f, TPM %.0f (HammerDB's: committed new orders and committed transactions per minute over %.1fs); committed: %s",
		nopm, float64(total)/mins, elapsed.Seconds(), strings.Join(parts, ", "))
}

// queryInt prepares, runs and closes a one-integer query.
func queryInt(ctx context.Context, s engine.Session, q string) (int64, error) {
	st, err := s.Prepare(ctx, q)
	if err != nil {
		return 0, err
	}
	v, _, err := st.QueryInt(ctx, nil)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	return v, err
}
