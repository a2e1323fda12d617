package workload

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/config"
)

// Scales are a workload's scale presets (--scale), in the order --help lists them, and
// the one a run without --scale gets.
type Scales struct {
	Names   []string
	Default string
}

// List is Params.Scales: a copy of the names, and the default.
func (s Scales) List() (names []string, def string) { return slices.Clone(s.Names), s.Default }

// Of is the scale cfg selects: cfg.Scale, or the default when it names none.
func (s Scales) Of(cfg *config.Run) string {
	if cfg.Scale == "" {
		return s.Default
	}
	return cfg.Scale
}

// Unknown is the problem of a scale that is not one of Names, for a workload's preset
// function to return.
func (s Scales) Unknown(scale string) error {
	return fmt.Errorf("--scale: unknown scale %q: use one of %s", scale, strings.Join(s.Names, ", "))
}

// ReportInterval is a scale's measurement interval when --report-interval is not given
// (Params.ReportInterval): 1 s at the tiny and small scales, 5 s at larger ones.
func ReportInterval(scale string) time.Duration {
	if scale == "tiny" || scale == "small" {
		return time.Second
	}
	return 5 * time.Second
}

// StandardScales are the scale presets most workloads have (insertbench's and
// sysbench's): tiny (tests and CI), small (the default: minutes on 2 cores), medium and
// large (the reference's runs).
func StandardScales() Scales {
	return Scales{Names: []string{"tiny", "small", "medium", "large"}, Default: "small"}
}

// ParamsBase is embedded in every workload's Params: the scale the parameters come from
// (Scale), the workload's own flags bound to the parameters (BindFlags, ApplyFlags), and
// the Params methods the workloads share: Scales (StandardScales; a workload with other
// presets defines its own) and ReportInterval.
type ParamsBase struct {
	// Scale is the scale preset (--scale) the parameters come from.
	Scale string

	flags *Flags
}

// BindFlags returns the flags to register on fl (AddFlags), bound to the parameters, and
// keeps them for ApplyFlags.
func (b *ParamsBase) BindFlags(fl *FlagSet) *Flags {
	b.flags = NewFlags(fl)
	return b.flags
}

// ApplyFlags sets the parameters of the flags given (Flags.Apply); with no flags bound
// (a Params built without AddFlags), none.
func (b *ParamsBase) ApplyFlags(set func(flag string) bool) error { return b.flags.Apply(set) }

// Scales lists the standard presets; small is the default (Params.Scales).
func (b *ParamsBase) Scales() (names []string, def string) { return StandardScales().List() }

// ReportInterval is the scale's measurement interval when --report-interval is not given
// (Params.ReportInterval, ReportInterval).
func (b *ParamsBase) ReportInterval() time.Duration { return ReportInterval(b.Scale) }

func (b *ParamsBase) base() *ParamsBase { return b }

// ApplyScale is how a Params' Resolve starts: it sets *p to the preset of cfg's scale
// (preset is the workload's preset function; p's Scales name the scales and the default),
// keeping the flags p bound, which a preset has none of. For a scale preset does not
// know it applies the default's preset and returns the problem, so that the other checks
// report only real problems.
func ApplyScale[P any, PP interface {
	*P
	Params
	base() *ParamsBase
}](p PP, cfg *config.Run, preset func(scale string) (*P, error)) error {
	names, def := p.Scales()
	pre, err := preset(Scales{Names: names, Default: def}.Of(cfg))
	if err != nil {
		pre, _ = preset(def)
	}
	flags := p.base().flags
	*p = *pre
	p.base().flags = flags
	return err
}

// Threads resolves the --threads of a workload whose threads are its concurrency
// against the shared --clients N, which then means --threads N: *dst holds --threads'
// value when it was given (Flags.Apply), preset the scale's. Both given is a problem, and
// the preset's value stays; --clients alone sets *dst to clients(N).
func Threads[T any](set func(flag string) bool, cfg *config.Run, dst *T, preset T, clients func(n int) T) error {
	switch {
	case set("threads") && set("clients"):
		*dst = preset
		return fmt.Errorf("--threads and --clients both given: --clients %d is --threads %d; give one", cfg.Clients, cfg.Clients)
	case set("clients") && !set("threads"):
		*dst = clients(cfg.Clients)
	}
	return nil
}

// Problems collects what is wrong with a workload's parameters, to report every problem
// at once, one line each, naming the flag to fix (Params.Resolve, a Validate).
type Problems []error

// Add adds a problem, formatted as fmt.Errorf does.
func (pr *Problems) Add(format string, args ...any) { *pr = append(*pr, fmt.Errorf(format, args...)) }

// Join adds err (one or more problems joined) unless it is nil.
func (pr *Problems) Join(err error) {
	if err != nil {
		*pr = append(*pr, err)
	}
}

// Err is every problem, joined (one a line), or nil when there is none.
func (pr Problems) Err() error { return errors.Join(pr...) }

// Steps adds a problem for each step of --steps (cfg.Steps) that is not one of names,
// the workload's steps (has says whose: "insertbench has"), and for each listed twice.
func (pr *Problems) Steps(cfg *config.Run, names []string, has string) {
	for i, s := range cfg.Steps {
		switch {
		case !slices.Contains(names, s):
			pr.Add("--steps: unknown step %q: %s %s", s, has, strings.Join(names, ","))
		case slices.Index(cfg.Steps, s) < i:
			pr.Add("--steps: step %q is listed twice", s)
		}
	}
}

// NeedsData adds the problem of a --steps selection without first, the step that creates
// the workload's data (what: "the tables the load step creates"), on a fresh database:
// neither a kept --workdir nor, for a server workload (server), --dsn names one, nor does
// the process keep the data its earlier steps left (cfg.DataKept).
func (pr *Problems) NeedsData(cfg *config.Run, first, what string, server bool) {
	if len(cfg.Steps) == 0 || slices.Contains(cfg.Steps, first) || cfg.WorkDir != "" || cfg.DataKept || server && cfg.DSN != "" {
		return
	}
	orDSN := ""
	if server {
		orDSN = " (or --dsn, a server holding them)"
	}
	pr.Add("--steps %s needs %s: add %s to --steps, or pass --workdir DIR holding a database kept with --keep%s",
		strings.Join(cfg.Steps, ","), what, first, orDSN)
}

// Validator is a workload's own Params that Plan validates (the kit's PlanParams).
type Validator interface {
	comparable
	Params
	// Validate checks every parameter against cfg: every problem at once, one a line.
	Validate(cfg *config.Run) error
}

// PlanParams is how a workload's Plan starts: cfg and params, which must be the
// workload's own (of type P, not nil), validated. name names the workload in errors.
func PlanParams[P Validator](name string, cfg *config.Run, params Params) (P, error) {
	var zero P
	if cfg == nil {
		return zero, fmt.Errorf("%s plan: no configuration", name)
	}
	p, ok := params.(P)
	if !ok || p == zero {
		return zero, fmt.Errorf("%s plan: parameters of type %T, want %T", name, params, zero)
	}
	if err := p.Validate(cfg); err != nil {
		return zero, err
	}
	return p, nil
}
