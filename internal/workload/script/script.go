// Package script is `dbperf run script`: a workload from the user's own files in
// pgbench's script language, so that the scripts people already have run unchanged on
// PostgreSQL, SQLite and MariaDB, with everything dbperf measures. In the flow it is a
// workload family: the catalog lists it, Params.Resolve reads and parses the scripts
// (a bad script is refused with its file and line before anything runs), Plan makes the
// steps, and the runner runs them.
//
// Steps: init (pgbench -i's tables with --pgbench-init, and the --setup script), then
// run: --clients clients, each with its own session, running transactions — one
// execution of a script chosen by weight — for --time, or at --rate. A transaction is
// the step's operation, so its throughput is TPS.
//
// Files: parse.go (the script language: SQL commands and meta-commands), expr.go and
// value.go (\set's expressions with pgbench's semantics), prng.go (pgbench's random
// generators and hash functions, from its PRNG), builtin.go (pgbench's built-in
// scripts), client.go (one client: statements prepared once per session, :variables
// bound as parameters), init.go (pgbench -i), params.go (flags and validation).
//
// The hot path is one client's transaction: its commands are parsed once, its SQL
// commands prepared once per session, its expressions evaluated on unboxed values and
// its variables bound into a reused engine.Args, so a transaction allocates nothing
// but what the engine does (a double or a non-integer \gset value, rendered as text).
package script

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
const Name = "script"

// version is bumped whenever the generated data or statements change.
const version = 1

// Steps and groups.
const (
	stepInit = "init"
	stepRun  = "run"

	groupLoad = "load"
	groupRun  = "run"

	labelTx     = "transaction"
	labelInsert = "insert"
)

func stepNames() []string { return []string{stepInit, stepRun} }

// Workload is the script workload.
type Workload struct{}

// New returns the script workload.
func New() *Workload { return &Workload{} }

var _ workload.Workload = (*Workload)(nil)

// Meta names the workload and its steps.
func (*Workload) Meta() workload.Meta {
	return workload.Meta{Name: Name, Version: version, Kind: engine.KindSQL,
		Steps:   stepNames(),
		Summary: "your own pgbench scripts (-f FILE@W, -b tpcb-like|simple-update|select-only), TPS per step",
		Examples: []string{
			"--pgbench-init --scale-factor 1 -b tpcb-like --clients 2 --time 10",
			"--engine postgres --managed --pgbench-init --scale-factor 2 -b tpcb-like -b select-only@4 --clients 2 --time 10",
			"--engine mariadb --managed --pgbench-init -b select-only --rate 500 --time 10",
			"--pgbench-init -b select-only --step c1:1:5 --step c4:4:5 --step paced:2:5:1000",
		},
		SweepExamples: []string{
			"--engine postgres --versions 13,15 --pgbench-init -b tpcb-like --time 10",
		},
		Groups: []workload.StepGroup{
			{Name: groupLoad, Title: "load (pgbench -i, --setup)"},
			{Name: groupRun, Title: "transactions"},
		}}
}

// Plan returns the init step (with --pgbench-init or --setup, or when --steps names it)
// and the timed steps: run, or those of --step.
func (*Workload) Plan(cfg *config.Run, params workload.Params) ([]workload.Step, error) {
	prm, err := workload.PlanParams[*Params](Name, cfg, params)
	if err != nil {
		return nil, err
	}
	specs := prm.timedSteps(cfg)
	most := 0
	for _, sp := range specs {
		most = max(most, sp.clients)
	}
	pl := &plan{p: *prm, seed: cfg.Seed, seeds: deriveSeeds(cfg.Seed, most)}
	want := func(step string) bool { return len(cfg.Steps) == 0 || slices.Contains(cfg.Steps, step) }
	var steps []workload.Step
	if want(stepInit) && (prm.PgbenchInit || prm.Setup != "" || slices.Contains(cfg.Steps, stepInit)) {
		// An init step asked for by name alone builds pgbench's tables.
		pl.init = prm.PgbenchInit || prm.Setup == ""
		steps = append(steps, &initStep{StepBase: workload.NewStepBase(stepInit, groupLoad), p: pl})
	}
	pl.scaleKnown = prm.scaleGiven || pl.init || !prm.usesBuiltin()
	for _, sp := range specs {
		if want(sp.name) {
			steps = append(steps, &runStep{StepBase: workload.NewStepBase(sp.name, groupRun), p: pl, spec: sp})
		}
	}
	return steps, nil
}

// plan is what the steps of one run share.
type plan struct {
	p     Params
	seed  int64
	seeds seeds
	// init: the init step builds pgbench's tables; scaleKnown: :scale is the scale
	// factor (else the run step counts pgbench_branches, as pgbench does).
	init, scaleKnown bool
}

func (pl *plan) clientSeeds(id int, scale int64) clientSeeds {
	return clientSeeds{fn: pl.seeds.clients[id], choose: pl.seeds.choose + uint64(id),
		throttle:    pl.seeds.throttle + uint64(id),
		defaultSeed: pl.seeds.defaultSeed, randomSeed: pl.seed, scale: scale}
}

// runStep runs the transactions: the run step, or one of --step's.
type runStep struct {
	workload.StepBase
	p     *plan
	spec  timedStep
	scale int64
	// clients keep their variables and random streams across the Loads of a step run
	// as slices (workload.Steady).
	clients []*client
	retries atomic.Int64
}

var (
	_ workload.Step   = (*runStep)(nil)
	_ workload.Steady = (*runStep)(nil)
	_ workload.Noter  = (*runStep)(nil)
)

// SteadyTime is the run's time.
func (s *runStep) SteadyTime() time.Duration { return s.spec.time }

// Prepare finds :scale when it comes from the tables, as pgbench does for its built-in
// scripts: the number of pgbench_branches.
func (s *runStep) Prepare(ctx context.Context, hh engine.Handle) error {
	s.scale = s.p.p.ScaleFactor
	if s.p.scaleKnown {
		return nil
	}
	h, err := engine.AsSQL(hh)
	if err != nil {
		return err
	}
	sess, err := h.NewSession(ctx)
	if err != nil {
		return fmt.Errorf("script %s: %w", s.Name(), err)
	}
	defer sess.Close()
	n, err := queryInt(ctx, sess, "SELECT count(*) FROM pgbench_branches")
	if err != nil {
		return fmt.Errorf("script %s: the built-in scripts' :scale is the count of pgbench_branches (run with --pgbench-init, or give --scale-factor): %w", s.Name(), err)
	}
	if n < 1 {
		return fmt.Errorf("script %s: pgbench_branches is empty: run with --pgbench-init", s.Name())
	}
	s.scale = n
	return nil
}

// Load has one group of --clients clients.
func (s *runStep) Load(_ context.Context, hh engine.Handle) (workload.Load, error) {
	d, err := workload.SQLDialect(hh)
	if err != nil {
		return workload.Load{}, err
	}
	prog := s.p.p.prog
	g := workload.Group{Label: labelTx, Role: "transaction", Unit: workload.UnitOps, ReadOnly: prog.ReadOnly()}
	for id := range s.spec.clients {
		if id >= len(s.clients) {
			s.clients = append(s.clients, newClient(prog, id, s.p.clientSeeds(id, s.scale), &s.retries))
		}
		c := s.clients[id]
		c.d = d
		if s.p.p.PerCommand {
			c.timeCommands()
		}
		c.setScale(s.scale)
		g.Workers = append(g.Workers, c)
	}
	if s.spec.rate > 0 {
		// pgbench's --rate: each client's transactions arrive as a Poisson process, the
		// gaps drawn in whole microseconds as pgbench's getPoissonRand draws them.
		g.Rate = s.spec.rate / float64(s.spec.clients)
		center := 1e6 / g.Rate
		clients := s.clients
		g.Gaps = func(i int) func() time.Duration {
			r := &clients[i].throttle
			return func() time.Duration { return time.Duration(poisson(r, center)) * time.Microsecond }
		}
	}
	kind := "write"
	if g.ReadOnly {
		kind = "read"
	}
	return workload.Load{Kind: kind, Primary: labelTx, Groups: []workload.Group{g}, Duration: s.spec.time}, nil
}

// Verify checks pgbench's tables after pgbench's built-in scripts on tables this run
// built: every transaction that changed a balance added its delta to the history, so
// the accounts' balances add up to the history's deltas, and without simple-update
// (which changes no teller or branch) so do the tellers' and the branches'. A script of
// the user's has effects of its own: nothing is checked.
func (s *runStep) Verify(ctx context.Context, hh engine.Handle) (string, error) {
	if !s.p.init || s.p.p.setup != nil {
		return "", nil
	}
	tellers := true
	for _, sc := range s.p.p.prog.Scripts {
		switch sc.Name {
		case "builtin:simple-update":
			tellers = false
		case "builtin:tpcb-like", "builtin:select-only":
		default:
			return "", nil
		}
	}
	h, err := engine.AsSQL(hh)
	if err != nil {
		return "", err
	}
	sess, err := h.NewSession(ctx)
	if err != nil {
		return "", fmt.Errorf("script %s: %w", s.Name(), err)
	}
	defer sess.Close()
	sums := []string{"pgbench_history.delta", "pgbench_accounts.abalance"}
	if tellers {
		sums = append(sums, "pgbench_tellers.tbalance", "pgbench_branches.bbalance")
	}
	var want int64
	for i, col := range sums {
		table, c, _ := strings.Cut(col, ".")
		n, err := queryInt(ctx, sess, "SELECT coalesce(sum("+c+"), 0) FROM "+table)
		if err != nil {
			return "", fmt.Errorf("script %s: sum of %s: %w", s.Name(), col, err)
		}
		if i == 0 {
			want = n
		} else if n != want {
			return "", fmt.Errorf("script %s: sum(%s) is %d, but the history's deltas add up to %d: a transaction's writes were lost or doubled", s.Name(), col, n, want)
		}
	}
	return fmt.Sprintf("the balances of %s add up to the history's deltas (%d)", strings.Join(sums[1:], ", "), want), nil
}

// Note says how many transactions were run again after a conflict and, with
// --report-per-command, each command's mean time.
func (s *runStep) Note() string {
	var notes []string
	if n := s.retries.Load(); n > 0 {
		notes = append(notes, strconv.FormatInt(n, 10)+" transactions rolled back and run again after a conflict with another client's (deadlock, serialization failure, busy database), with the same random values, as pgbench --max-tries does")
	}
	if s.p.p.PerCommand {
		notes = append(notes, s.perCommand())
	}
	return strings.Join(notes, "; ")
}

// perCommand is pgbench -r's report: each command's mean time in ms over the step, per
// script, from every client's counts.
func (s *runStep) perCommand() string {
	var b strings.Builder
	b.WriteString("mean ms per command (pgbench -r):")
	vars := s.p.p.prog.vars
	for si, sc := range s.p.p.prog.Scripts {
		for ci := range sc.cmds {
			var st cmdStat
			for _, c := range s.clients {
				if c.perCmd != nil {
					st.n += c.perCmd[si][ci].n
					st.ns += c.perCmd[si][ci].ns
				}
			}
			mean := 0.0
			if st.n > 0 {
				mean = float64(st.ns) / float64(st.n) / 1e6
			}
			fmt.Fprintf(&b, " %s:%d %.3f %s;", sc.Name, sc.cmds[ci].line, mean, sc.cmds[ci].display(vars))
		}
	}
	return strings.TrimSuffix(b.String(), ";")
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
