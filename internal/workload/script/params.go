package script

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/workload"
)

// Params are the script workload's parameters: the scripts (-f, -b), the setup file,
// pgbench's initialization, the transactions' time and rate. Resolve reads and parses
// the scripts, so a bad script is refused (file:line: what is wrong) before anything
// runs; the parsed scripts are kept for Plan.
type Params struct {
	workload.ParamsBase
	// Files are -f FILE[@WEIGHT], Builtins -b NAME[@WEIGHT], in the order given.
	Files, Builtins []string
	// Setup is a script run once before the timed step (--setup).
	Setup string
	// PgbenchInit builds pgbench's tables as `pgbench -i -s ScaleFactor` does.
	PgbenchInit bool
	// ScaleFactor is pgbench's -s: the tables' size and the scripts' :scale.
	ScaleFactor int64
	// Time is how long the run step runs (--time, else the scale's).
	Time time.Duration
	// Steps are --step NAME:CLIENTS[:SECONDS[:RATE]]: timed steps of their own, in
	// order, instead of the run step.
	Steps []string
	// PerCommand reports each command's mean time in the run step's note (pgbench -r).
	PerCommand bool
	// Defines are -D NAME=VALUE: variables every client starts with.
	Defines []string
	// Rate is the target transactions per second over all clients (0: as fast as they
	// can), on the runner's absolute schedule, latency measured from it.
	Rate float64

	// steps are --step's, parsed (nil: the run step).
	steps []timedStep
	// scaleGiven: --scale-factor was given (else the built-in scripts read :scale from
	// pgbench_branches, as pgbench does, when the run builds no tables).
	scaleGiven bool
	prog       *Program
	setup      *Program
	loadFailed bool // the scripts were refused (Resolve said why)
}

var _ workload.Params = (*Params)(nil)

// NewParams returns the parameters with no scale applied.
func (*Workload) NewParams() workload.Params { return &Params{} }

// Preset returns the parameters of a scale preset: pgbench's scale factor and the run
// step's time.
func Preset(scale string) (*Params, error) {
	p := &Params{ParamsBase: workload.ParamsBase{Scale: scale}}
	switch scale {
	case "tiny":
		p.ScaleFactor, p.Time = 1, time.Second
	case "small":
		p.ScaleFactor, p.Time = 1, 10*time.Second
	case "medium":
		p.ScaleFactor, p.Time = 10, 60*time.Second
	case "large":
		p.ScaleFactor, p.Time = 100, 300*time.Second
	default:
		p.ScaleFactor, p.Time = 1, 10*time.Second
		return p, workload.StandardScales().Unknown(scale)
	}
	return p, nil
}

// AddFlags registers the workload's flags.
func (p *Params) AddFlags(fl *workload.FlagSet) {
	f := p.BindFlags(fl)
	f.StringArrayP(&p.Files, "file", "f", "a script in pgbench's language, FILE or FILE@WEIGHT (repeatable; scripts are chosen per transaction by weight)")
	f.StringArrayP(&p.Builtins, "builtin", "b", "one of pgbench's built-in scripts ("+builtinNames()+"), NAME or NAME@WEIGHT (repeatable; default tpcb-like when no -f or -b)")
	f.String(&p.Setup, "setup", "", "a script run once, by one client, in the init step before the timed run")
	f.Bool(&p.PgbenchInit, "pgbench-init", false, "create and fill pgbench_accounts, _branches, _tellers and _history as `pgbench -i` does, in the init step")
	f.Int64(&p.ScaleFactor, "scale-factor", 0, "pgbench's scale factor (-s): 100,000 accounts each, and the scripts' :scale (default: the scale's)")
	f.StringArrayP(&p.Steps, "step", "", "a timed step of its own, NAME:CLIENTS[:SECONDS[:RATE]] (repeatable, in order; replaces the run step; SECONDS default --time, RATE default --rate)")
	f.Bool(&p.PerCommand, "report-per-command", false, "time every command and report each one's mean in the step's note, as pgbench -r (two clock reads per command)")
	f.StringArrayP(&p.Defines, "define", "D", "a variable every client starts with, NAME=VALUE (repeatable; overrides :scale, :client_id, … as in pgbench)")
	f.Float64(&p.Rate, "rate", 0, "target transactions per second over all clients, latency measured from the schedule; 0 = as fast as they can")
}

// Resolve applies the scale preset, --time and the flags given, then reads, parses and
// checks the scripts, and validates.
func (p *Params) Resolve(cfg *config.Run, set func(string) bool) error {
	var pr workload.Problems
	pr.Join(workload.ApplyScale(p, cfg, Preset))
	if cfg.Time > 0 {
		p.Time = cfg.Time
	}
	pr.Join(p.ApplyFlags(set))
	p.scaleGiven = set("scale-factor")
	pr.Join(p.parseSteps(set("clients")))
	for _, sp := range p.steps {
		cfg.Clients = max(cfg.Clients, sp.clients) // the most sessions a step opens
	}
	if err := p.load(os.ReadFile); err != nil {
		pr.Join(err)
		p.loadFailed = true
	}
	pr.Join(p.Validate(cfg))
	return pr.Err()
}

// load reads and parses the scripts and the setup file.
func (p *Params) load(read func(string) ([]byte, error)) error {
	defines := map[string]value{}
	for _, d := range p.Defines {
		name, val, ok := strings.Cut(d, "=")
		if !ok || !validName(name) {
			return fmt.Errorf("-D %q: want NAME=VALUE, NAME a variable name", d)
		}
		defines[name] = textValue([]byte(val))
	}
	vars := newVarTable()
	var scripts []*Script
	add := func(name, text string, weight int) error {
		s, err := Parse(name, text, vars)
		if err != nil {
			return err
		}
		s.Weight = weight
		scripts = append(scripts, s)
		return nil
	}
	builtins := p.Builtins
	if len(p.Files) == 0 && len(builtins) == 0 {
		builtins = []string{"tpcb-like"}
	}
	for _, b := range builtins {
		name, w, err := splitWeight(b)
		if err != nil {
			return fmt.Errorf("-b: %w", err)
		}
		full, text, ok := builtin(name)
		if !ok {
			return fmt.Errorf("-b: no built-in script %q: pgbench has %s", name, builtinNames())
		}
		if err := add("builtin:"+full, text, w); err != nil {
			return err
		}
	}
	for _, f := range p.Files {
		name, w, err := splitWeight(f)
		if err != nil {
			return fmt.Errorf("-f: %w", err)
		}
		text, err := read(name)
		if err != nil {
			return fmt.Errorf("-f: %w", err)
		}
		if err := add(name, string(text), w); err != nil {
			return err
		}
	}
	prog, err := compile(scripts, vars, defines)
	if err != nil {
		return err
	}
	p.prog = prog
	if p.Setup != "" {
		text, err := read(p.Setup)
		if err != nil {
			return fmt.Errorf("--setup: %w", err)
		}
		svars := newVarTable()
		s, err := Parse(p.Setup, string(text), svars)
		if err != nil {
			return err
		}
		if p.setup, err = compile([]*Script{s}, svars, defines); err != nil {
			return err
		}
	}
	return nil
}

// usesBuiltin: a built-in script is among the scripts (they read :scale).
func (p *Params) usesBuiltin() bool {
	if p.prog == nil {
		return false
	}
	return slices.ContainsFunc(p.prog.Scripts, func(s *Script) bool { return len(s.Name) > 8 && s.Name[:8] == "builtin:" })
}

// Validate checks every parameter, every problem at once.
func (p *Params) Validate(cfg *config.Run) error {
	var pr workload.Problems
	if p.ScaleFactor < 1 || p.ScaleFactor > math.MaxInt64/100_000 {
		pr.Add("--scale-factor must be a whole number ≥ 1, got %d", p.ScaleFactor)
	}
	if p.Time <= 0 {
		pr.Add("--time must be a positive number of seconds, got %g", p.Time.Seconds())
	}
	if p.Rate < 0 || math.IsNaN(p.Rate) || math.IsInf(p.Rate, 0) {
		pr.Add("--rate must be a number of transactions per second ≥ 0 (0: as fast as they can), got %g", p.Rate)
	}
	if cfg.Clients < 1 {
		pr.Add("--clients must be at least 1, got %d", cfg.Clients)
	}
	if p.prog == nil && !p.loadFailed {
		pr.Add("no scripts: give -f FILE or -b NAME")
	}
	names := []string{stepInit}
	for _, sp := range p.timedSteps(cfg) {
		names = append(names, sp.name)
	}
	pr.Steps(cfg, names, Name+" has")
	return pr.Err()
}

// timedStep is one timed step: its name, clients, time and rate.
type timedStep struct {
	name    string
	clients int
	time    time.Duration
	rate    float64
}

// timedSteps are the timed steps: --step's, else run with --clients, --time and --rate.
func (p *Params) timedSteps(cfg *config.Run) []timedStep {
	if len(p.steps) > 0 {
		return p.steps
	}
	return []timedStep{{name: stepRun, clients: cfg.Clients, time: p.Time, rate: p.Rate}}
}

// parseSteps parses --step NAME:CLIENTS[:SECONDS[:RATE]]; with clients (--clients given)
// it is a problem, since every step names its own.
func (p *Params) parseSteps(clients bool) error {
	p.steps = nil
	if len(p.Steps) == 0 {
		return nil
	}
	var pr workload.Problems
	if clients {
		pr.Add("--step and --clients both given: each --step names its clients")
	}
	for _, arg := range p.Steps {
		f := strings.Split(arg, ":")
		sp := timedStep{name: f[0], time: p.Time, rate: p.Rate}
		bad := func(format string, args ...any) {
			pr.Add("--step %q: "+format, append([]any{arg}, args...)...)
		}
		switch {
		case len(f) < 2 || len(f) > 4:
			bad("want NAME:CLIENTS[:SECONDS[:RATE]]")
			continue
		case !validName(strings.ReplaceAll(strings.ReplaceAll(sp.name, "-", "_"), ".", "_")):
			bad("a step's name is letters, digits, '_', '-' and '.'")
			continue
		case sp.name == stepInit:
			bad("init is the load step's name")
			continue
		}
		for _, o := range p.steps {
			if o.name == sp.name {
				bad("step %s is named twice", sp.name)
			}
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 1 {
			bad("CLIENTS must be a whole number ≥ 1")
		}
		sp.clients = n
		if len(f) > 2 {
			secs, err := strconv.ParseFloat(f[2], 64)
			if err != nil || !(secs > 0) {
				bad("SECONDS must be a number > 0")
			}
			sp.time = workload.Seconds(secs)
		}
		if len(f) > 3 {
			r, err := strconv.ParseFloat(f[3], 64)
			if err != nil || r < 0 || math.IsInf(r, 0) {
				bad("RATE must be a number of transactions per second ≥ 0")
			}
			sp.rate = r
		}
		p.steps = append(p.steps, sp)
	}
	return pr.Err()
}

// Stored are the resolved parameters stored with the run.
func (p *Params) Stored() map[string]any {
	extra := map[string]any{"time_sec": p.Time.Seconds()}
	if p.prog != nil {
		var names []string
		for _, s := range p.prog.Scripts {
			names = append(names, fmt.Sprintf("%s@%d", s.Name, s.Weight))
		}
		extra["scripts"] = names
	}
	return workload.Stored(p, extra)
}
