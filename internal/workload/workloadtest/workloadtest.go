// Package workloadtest helps the workloads' tests (and the cli's) resolve and plan a
// workload as `dbperf run <workload>` does, without an engine: Resolve parses the
// command's flags and resolves the parameters exactly as the cli's buildConfig does, Plan
// plans them, Names lists the steps, and Problems checks the one-line-each problems a
// Resolve reports. MustResolve fails the test on a problem. Validation and Steps are
// table-driven checks of a workload's problems and plans, MetaSteps checks its Meta's step
// names, DialectOnly and Load give a step's Load without an engine, InitWorker
// initialises a worker on a session, and Managed starts a managed server for a
// workload's integration tests.
package workloadtest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/sqlite"
	"github.com/dbperf/dbperf/internal/workload"
)

// Resolve parses args as `dbperf run <w>` does — the workload's own flags
// (Params.AddFlags) and the shared ones its Resolve reads (--scale, --clients, --steps,
// --time) — into cfg and a new Params of w, and resolves them as the cli's buildConfig
// does: --time into cfg.Time when given (a --time not above 0 is the cli's problem, and
// cfg.Time stays 0), Params.Resolve with the flags given, then cfg.ReportInterval. cfg's other fields (a work dir, a key-value profile) stay as they
// are. The cli's --scale defaults to the workload's default scale; here cfg.Scale, when
// set, is the default instead. A flag the command does not have fails t; Resolve's
// problems are the error. P is w's Params type.
func Resolve[P workload.Params](t testing.TB, w workload.Workload, cfg *config.Run, args ...string) (P, error) {
	t.Helper()
	p, ok := w.NewParams().(P)
	if !ok {
		t.Fatalf("%s: parameters of type %T, not %T", w.Meta().Name, w.NewParams(), p)
	}
	fs := pflag.NewFlagSet(w.Meta().Name, pflag.ContinueOnError)
	scale := cfg.Scale
	if scale == "" {
		_, scale = p.Scales()
	}
	fs.StringVar(&cfg.Scale, "scale", scale, "")
	fs.IntVar(&cfg.Clients, "clients", 1, "")
	fs.StringSliceVar(&cfg.Steps, "steps", nil, "")
	var secs float64
	fs.Float64Var(&secs, "time", 0, "")
	p.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	var pr workload.Problems
	switch {
	case !fs.Changed("time"):
	case !(secs > 0):
		pr.Add("--time must be a positive number of seconds, got %g", secs)
	default:
		cfg.Time = time.Duration(secs * float64(time.Second))
	}
	pr.Join(p.Resolve(cfg, fs.Changed))
	cfg.ReportInterval = p.ReportInterval()
	return p, pr.Err()
}

// Tiny is the configuration the workloads' tests start from: the tiny scale, seed 7.
func Tiny() *config.Run { return &config.Run{Scale: "tiny", Seed: 7} }

// MustResolve resolves args (Resolve) from Tiny(), failing t on a problem.
func MustResolve[P workload.Params](t testing.TB, w workload.Workload, args ...string) (*config.Run, P) {
	t.Helper()
	cfg := Tiny()
	p, err := Resolve[P](t, w, cfg, args...)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, p
}

// Plan resolves args from Tiny() and plans w's steps, failing t on a problem.
func Plan(t testing.TB, w workload.Workload, args ...string) []workload.Step {
	t.Helper()
	cfg, p := MustResolve[workload.Params](t, w, args...)
	steps, err := w.Plan(cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

// Names are the steps' names, in order.
func Names(steps []workload.Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Name())
	}
	return out
}

// Problems checks that err holds the problems want, one line each, in order: each line
// starts with its want (nil want: err is nil).
func Problems(t testing.TB, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d:\n got %s\nwant %s…", i+1, lines[i], w)
		}
	}
}

// Case is one case of Validation: a command line and the problems it has.
type Case struct {
	Name string
	// Args are the command's flags; Cfg the configuration they are resolved into (its
	// Scale, when empty, is tiny).
	Args []string
	Cfg  config.Run
	// Want are the problems, one line each, in order (Problems); none: Args are valid.
	Want []string
}

// Validation resolves each case's Args (Resolve, as the cli does) in a subtest of its
// name and checks the problems (Problems).
func Validation[P workload.Params](t *testing.T, w workload.Workload, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			cfg := c.Cfg
			if cfg.Scale == "" {
				cfg.Scale = "tiny"
			}
			_, err := Resolve[P](t, w, &cfg, c.Args...)
			Problems(t, err, c.Want)
		})
	}
}

// DialectOnly is a SQL handle that only knows its dialect, SQLite's: enough for a step's
// Load, which composes statements but does no I/O. Anything else panics.
type DialectOnly struct{ engine.SQL }

// Dialect is SQLite's.
func (DialectOnly) Dialect() engine.Dialect { return sqlite.Dialect{} }

// Load is step's Load on a DialectOnly, failing t on an error.
func Load(t testing.TB, step workload.Step) workload.Load {
	t.Helper()
	l, err := step.Load(context.Background(), DialectOnly{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// PlanCase is one case of Steps: a command line and the steps it plans.
type PlanCase struct {
	Name string
	// Args are the command's flags, resolved from Tiny().
	Args []string
	// Want are the steps' names, in order.
	Want []string
}

// Steps plans each case's Args (Plan) in a subtest of its name and checks that the
// steps are Want's, in order, each once.
func Steps(t *testing.T, w workload.Workload, cases []PlanCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			got := Names(Plan(t, w, c.Args...))
			if !slices.Equal(got, c.Want) {
				t.Errorf("steps:\n got %q\nwant %q", got, c.Want)
			}
			seen := map[string]bool{}
			for _, n := range got {
				if seen[n] {
					t.Errorf("step %q twice", n)
				}
				seen[n] = true
			}
		})
	}
}

// MetaSteps checks that w's Meta lists want as its steps, in order.
func MetaSteps(t testing.TB, w workload.Workload, want []string) {
	t.Helper()
	if got := w.Meta().Steps; !slices.Equal(got, want) {
		t.Errorf("Meta().Steps = %q, want %q", got, want)
	}
}

// InitWorker opens a session of h for w and runs w's Init with it, as the runner does
// before a step's clock starts, failing t on an error. When the test ends, w is closed,
// then the session. It returns the session.
func InitWorker(t testing.TB, h engine.SQL, w workload.Worker) engine.Session {
	t.Helper()
	ctx := context.Background()
	s, err := h.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := w.Init(ctx, s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return s
}
