package report

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/stats"
	"github.com/dbperf/dbperf/internal/store"
)

// Explain is `dbperf explain BASE NEW`: per step both configs recorded, largest change of
// the step's rate first: per role (largest change first) the functions whose CPU µs per
// operation changed most (dbperf run --cpu-profile), the statements whose time per
// operation changed most with any plan change, and the change of each role's wait shares
// (dbperf run --explain).
type Explain struct {
	Base, New string // the configs' names (Group.Name)
	// BaseRuns and NewRuns are the configs' runs; their profiles are summed per step.
	BaseRuns, NewRuns []int64
	Top               int
	Steps             []ExplainStep
	// Summary says in words, per step that changed, what changed and why (explainsummary.go).
	Summary []StepSummary
	// Notes are what the figures do not say by themselves (events or rates that differ).
	Notes []string
}

// ExplainStep is one step's roles.
type ExplainStep struct {
	Step string
	// BaseRate and NewRate are the step's primary operations per second over each
	// config's runs, Change their relative change (New/Base − 1; NaN when Base is 0):
	// what orders the steps.
	BaseRate, NewRate, Change float64
	// BaseOps and NewOps are the step's primary operations (StepResult.PrimaryCount) over
	// the config's profiled runs: the denominator of every µs/op.
	BaseOps, NewOps int64
	// Roles are the CPU profiles' roles, largest absolute change first (none when the
	// step was not profiled in both).
	Roles []ExplainRole
	// Statements and Waits are from dbperf run --explain (none when the step did not
	// record them in both); StatementOps are the operations of their runs' steps
	// (the denominator of their µs/op).
	Statements                        []StatementChange
	Waits                             []WaitChange
	BaseStatementOps, NewStatementOps int64
}

// ExplainRole is one role's CPU per op in both configs and its functions that changed most.
type ExplainRole struct {
	Role string
	// Base and New are the role's CPU µs per op (every sample), Delta their difference.
	Base, New, Delta float64
	// BaseSamples and NewSamples are the role's samples; P and Beyond test its change
	// against sampling noise at NoiseAlpha (see FunctionChange).
	BaseSamples, NewSamples int64
	P                       float64
	Beyond                  bool
	// Self are the functions by self CPU (the leaf frame), Total by total CPU (the frame
	// anywhere on a stack, once per stack): the Top by absolute change, largest first.
	Self, Total []FunctionChange
	// Builds are the builds of the role's code the configs profiled (buildsOf), base and
	// new, when they differ; the zero value when they are the same.
	Builds [2]string
	// Units are the blocks (Paired) or runs whose µs/op Shift compares (explainpairs.go);
	// Changed says the role's CPU per op changed by its own interval and the threshold.
	Units   int
	Paired  bool
	Shift   stats.Shift
	Changed bool
	// Explained is the fraction of the role's change (Shift.Estimate) that its changed
	// functions' self CPU accounts for, ExplainedBy those functions; NaN without an
	// interval or change.
	Explained   float64
	ExplainedBy []string
	// Beneath is, when no function's self CPU explains a changed role (the change spread
	// over many leaves, as a logging path's is), the changed function by total CPU under
	// which most of it lies, one that does not hold most of the role's CPU (so not a
	// frame every stack passes through); BeneathFraction its part of the role's change.
	// "" and NaN otherwise.
	Beneath         string
	BeneathFraction float64
}

// roleClient is the role of dbperf's own process in a profile (cli's roleClient).
const roleClient = "client"

// buildsOf are the builds of a role's code in a config's runs: the engine and its
// version for a server's processes; for the client role (dbperf's own process) dbperf's
// version, and the engine's too when it is embedded in dbperf.
func buildsOf(runs []store.Run, role string) []string {
	set := map[string]bool{}
	for _, r := range runs {
		b := r.Engine + " " + r.EngineVersion
		if role == roleClient {
			b = "dbperf " + r.Env["dbperf_version"]
			if strings.HasPrefix(r.Env[envServerProcesses], "embedded") {
				b += " with " + r.Engine + " " + r.EngineVersion
			}
		}
		set[b] = true
	}
	return sortedKeys(set)
}

// buildRatio is how far a function's CPU per op must change between two builds (either
// way) before explain says its symbols may differ rather than its work.
const buildRatio = 10

// markBuilds says, for the functions of a role whose configs profiled different builds,
// which figures may be the builds' symbols (FunctionChange.Build); their % change is then
// no figure of the function's work.
func markBuilds(fns []FunctionChange, base, neu string) {
	for i := range fns {
		f := &fns[i]
		// The kernel's functions ("_[k]") are the same kernel's in both configs, and
		// "[unknown]" (a frame that did not unwind) names no symbol.
		if strings.HasSuffix(f.Function, "_[k]") || f.Function == "[unknown]" {
			continue
		}
		switch {
		case f.BaseSamples == 0 && f.NewSamples > 0:
			f.Build = "only in " + neu + "'s build: inlined or renamed?"
		case f.NewSamples == 0 && f.BaseSamples > 0:
			f.Build = "only in " + base + "'s build: inlined or renamed?"
		case f.Base > 0 && f.New > 0 && (f.New/f.Base >= buildRatio || f.Base/f.New >= buildRatio):
			more := neu
			if f.Base > f.New {
				more = base
			}
			f.Build = fmt.Sprintf("×%.0f in %s's build: inlined elsewhere or renamed?", math.Max(f.New/f.Base, f.Base/f.New), more)
		default:
			continue
		}
		f.Pct = math.NaN()
	}
}

// FunctionChange is one function's CPU µs per op in both configs.
type FunctionChange struct {
	Function  string
	Base, New float64 // µs per op
	Delta     float64 // New - Base
	// Pct is Delta in % of Base; NaN when Base is 0 (the function is new) or when Build
	// says the change is the builds' symbols rather than the function's work.
	Pct float64
	// Share is Delta as a fraction of the role's Delta, within −1 and 1; NaN when the
	// role's Delta is 0 or the function's change is larger than the role's (other
	// functions' changes offset it: a share of the role's change it is not).
	Share float64
	// Build is set when the two configs profiled different builds of the role's code and
	// the function's figures may be the builds' symbols rather than its work: it has
	// samples in one config's profile only, or its CPU changed tenfold or more (a
	// function inlined in one build has few samples of its own there, one renamed none).
	// It says which ("only in 13/default's build: inlined or renamed?").
	Build string
	// BaseSamples and NewSamples are the function's samples; P is the p-value of the
	// change against the noise of sampling alone (stats.PoissonRateP, exposures the
	// configs' rate × operations), Beyond whether it is below NoiseAlpha divided by the
	// role's functions compared (Bonferroni): only then does explain call it a change.
	BaseSamples, NewSamples int64
	P                       float64
	Beyond                  bool
	// Shift is the change of its µs/op across the configs' units (blocks or runs) with
	// its interval; Changed says it is a finding: the interval excludes 0, the change is
	// at least the threshold of the role's CPU per op, Beyond holds and Build is empty
	// (explainpairs.go).
	Shift   stats.Shift
	Changed bool
}

// NoiseAlpha is the family-wise level of explain's test of a change against sampling
// noise: per role and kind, a function's change is beyond the noise when its p-value is
// below NoiseAlpha ÷ the number of functions compared.
const NoiseAlpha = 0.01

// ExplainOptions select what Explain shows.
type ExplainOptions struct {
	Step, Role string // only this step or role ("" = every one)
	Top        int    // functions per role and kind (0: DefaultExplainTop)
}

// DefaultExplainTop is how many functions per role and kind Explain shows by default.
const DefaultExplainTop = 10

// FunctionCPU is what a profile's stacks say per function: samples where it is the leaf
// (Self) and samples whose stack holds it (Total, once per stack).
type FunctionCPU struct {
	Samples     int64
	Self, Total map[string]int64
}

// ParseFolded reads folded stacks ("frame;frame;frame count" a line, root first) into
// samples per function.
func ParseFolded(text []byte) (FunctionCPU, error) {
	f := FunctionCPU{Self: map[string]int64{}, Total: map[string]int64{}}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), len(text)+1)
	seen := map[string]bool{}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		count, err := strconv.ParseInt(line[i+1:], 10, 64)
		if i <= 0 || err != nil || count < 0 {
			return FunctionCPU{}, fmt.Errorf("folded line %d: not \"stack count\": %q", n, Clip(line, 80))
		}
		frames := strings.Split(line[:i], ";")
		f.Samples += count
		f.Self[frames[len(frames)-1]] += count
		clear(seen)
		for _, fr := range frames {
			if !seen[fr] {
				seen[fr] = true
				f.Total[fr] += count
			}
		}
	}
	return f, sc.Err()
}

// roleCPU is a role's CPU seconds over a config's runs: in all and per function, with
// the samples behind them and their exposure (Σ rate × the step's operations), the
// denominator of a rate test (stats.PoissonRateP).
type roleCPU struct {
	samples       int64
	sec           float64
	exposure      float64
	self, total   map[string]float64
	selfN, totalN map[string]int64
}

func (r *roleCPU) add(f FunctionCPU, hz int, ops int64) {
	if r.self == nil {
		r.self, r.total = map[string]float64{}, map[string]float64{}
		r.selfN, r.totalN = map[string]int64{}, map[string]int64{}
	}
	h := float64(hz)
	r.samples += f.Samples
	r.sec += float64(f.Samples) / h
	r.exposure += h * float64(ops)
	for fn, n := range f.Self {
		r.self[fn] += float64(n) / h
		r.selfN[fn] += n
	}
	for fn, n := range f.Total {
		r.total[fn] += float64(n) / h
		r.totalN[fn] += n
	}
}

// stepCPU is one step's profiles over a config's runs.
type stepCPU struct {
	ops    int64
	roles  map[string]*roleCPU
	events map[string]bool // "event at hz"
}

// configCPU sums the profiles of a config's runs per step (runs whose step has none are
// left out, their operations too).
func configCPU(runs []store.Run, o ExplainOptions) (map[string]*stepCPU, error) {
	out := map[string]*stepCPU{}
	for _, r := range runs {
		for _, st := range r.Steps {
			if len(st.Profiles) == 0 || o.Step != "" && st.Result.Name != o.Step {
				continue
			}
			s := out[st.Result.Name]
			if s == nil {
				s = &stepCPU{roles: map[string]*roleCPU{}, events: map[string]bool{}}
				out[st.Result.Name] = s
			}
			s.ops += st.Result.PrimaryCount()
			for _, p := range st.Profiles {
				if o.Role != "" && p.Role != o.Role || p.Hz <= 0 {
					continue
				}
				text, err := p.FoldedText()
				if err != nil {
					return nil, fmt.Errorf("run %d step %s: %w", r.ID, st.Result.Name, err)
				}
				f, err := ParseFolded(text)
				if err != nil {
					return nil, fmt.Errorf("run %d step %s role %s: %w", r.ID, st.Result.Name, p.Role, err)
				}
				rc := s.roles[p.Role]
				if rc == nil {
					rc = &roleCPU{}
					s.roles[p.Role] = rc
				}
				rc.add(f, p.Hz, st.Result.PrimaryCount())
				s.events[fmt.Sprintf("%s at %d Hz", cmp.Or(p.Event, "an unknown event"), p.Hz)] = true
			}
		}
	}
	return out, nil
}

// BuildExplain compares the CPU profiles of two configs' runs per step and role.
func BuildExplain(base, neu Group, baseRuns, newRuns []store.Run, o ExplainOptions) (Explain, error) {
	if o.Top <= 0 {
		o.Top = DefaultExplainTop
	}
	e := Explain{Base: base.Name, New: neu.Name, BaseRuns: base.RunIDs, NewRuns: neu.RunIDs, Top: o.Top}
	b, err := configCPU(baseRuns, o)
	if err != nil {
		return Explain{}, err
	}
	n, err := configCPU(newRuns, o)
	if err != nil {
		return Explain{}, err
	}
	bd, nd := configDiag(baseRuns, o), configDiag(newRuns, o)
	// Steps in the new config's run order, then by their change.
	var order []string
	for _, r := range newRuns {
		for _, st := range r.Steps {
			name := st.Result.Name
			if (n[name] != nil && b[name] != nil || nd[name] != nil && bd[name] != nil) && !slices.Contains(order, name) {
				order = append(order, name)
			}
		}
	}
	for _, name := range order {
		es := ExplainStep{Step: name, BaseRate: stepRate(baseRuns, name), NewRate: stepRate(newRuns, name), Change: math.NaN()}
		if es.BaseRate > 0 {
			es.Change = es.NewRate/es.BaseRate - 1
		}
		if bs, ns := bd[name], nd[name]; bs != nil && ns != nil {
			if bs.ops > 0 && ns.ops > 0 {
				es.Statements = statementChanges(bs, ns, stmtUnitsOf(baseRuns, name), stmtUnitsOf(newRuns, name), o.Top)
				es.BaseStatementOps, es.NewStatementOps = bs.ops, ns.ops
			}
			es.Waits = waitChanges(bs, ns)
		}
		bs, ns := b[name], n[name]
		if bs == nil || ns == nil {
			e.Steps = append(e.Steps, es)
			continue
		}
		if bs.ops == 0 || ns.ops == 0 {
			which := neu.Name
			if bs.ops == 0 {
				which = base.Name
			}
			e.Notes = append(e.Notes, fmt.Sprintf("step %s: no operations in %s, so no CPU per operation", name, which))
			continue
		}
		if be, ne := sortedKeys(bs.events), sortedKeys(ns.events); !slices.Equal(be, ne) {
			e.Notes = append(e.Notes, fmt.Sprintf("step %s: sampled with %s in %s but %s in %s: CPU seconds compare, sample counts do not",
				name, strings.Join(be, ", "), base.Name, strings.Join(ne, ", "), neu.Name))
		}
		es.BaseOps, es.NewOps = bs.ops, ns.ops
		roles := map[string]bool{}
		for r := range bs.roles {
			roles[r] = true
		}
		for r := range ns.roles {
			roles[r] = true
		}
		for _, role := range sortedKeys(roles) {
			br, nr := cmp.Or(bs.roles[role], &roleCPU{}), cmp.Or(ns.roles[role], &roleCPU{})
			perOp := func(sec float64, ops int64) float64 { return sec * 1e6 / float64(ops) }
			er := ExplainRole{Role: role, Base: perOp(br.sec, bs.ops), New: perOp(nr.sec, ns.ops),
				BaseSamples: br.samples, NewSamples: nr.samples}
			er.Delta = er.New - er.Base
			er.P = stats.PoissonRateP(br.samples, nr.samples, br.exposure, nr.exposure)
			er.Beyond = er.P < NoiseAlpha
			er.Self = topChanges(br.self, nr.self, fnSamples{br.selfN, nr.selfN, br.exposure, nr.exposure}, bs.ops, ns.ops, er.Delta, o.Top)
			// By total CPU, the frames on (nearly) every stack of the role in both configs
			// (main, the server's loop: whole DWARF stacks reach them) only repeat the
			// role's own line; they are left out so the rows name what differs.
			everywhere := func(fn string) bool {
				return br.samples > 0 && nr.samples > 0 &&
					float64(br.totalN[fn]) >= onEveryStack*float64(br.samples) && float64(nr.totalN[fn]) >= onEveryStack*float64(nr.samples)
			}
			baseTotal, newTotal := withoutKeys(br.total, everywhere), withoutKeys(nr.total, everywhere)
			er.Total = topChanges(baseTotal, newTotal, fnSamples{br.totalN, nr.totalN, br.exposure, nr.exposure}, bs.ops, ns.ops, er.Delta, o.Top)
			if bb, nb := buildsOf(baseRuns, role), buildsOf(newRuns, role); !slices.Equal(bb, nb) {
				er.Builds = [2]string{strings.Join(bb, ", "), strings.Join(nb, ", ")}
				markBuilds(er.Self, base.Name, neu.Name)
				markBuilds(er.Total, base.Name, neu.Name)
			}
			es.Roles = append(es.Roles, er)
		}
		slices.SortStableFunc(es.Roles, func(a, b ExplainRole) int { return cmp.Compare(math.Abs(b.Delta), math.Abs(a.Delta)) })
		addIntervals(&es, bs, ns, baseRuns, newRuns, o)
		e.Steps = append(e.Steps, es)
	}
	slices.SortStableFunc(e.Steps, func(a, b ExplainStep) int { return cmp.Compare(absChange(b.Change), absChange(a.Change)) })
	summarize(&e, baseRuns, newRuns)
	if len(e.Steps) == 0 {
		what := "no step"
		if o.Step != "" {
			what = "step " + o.Step
		}
		if o.Role != "" {
			what += " (role " + o.Role + ")"
		}
		return e, fmt.Errorf("%s has CPU profiles or statements in both %s and %s: record runs with dbperf run --cpu-profile DIR or --explain", what, base.Name, neu.Name)
	}
	return e, nil
}

// absChange orders steps by their change, a step without one (NaN) last.
func absChange(c float64) float64 {
	if math.IsNaN(c) {
		return -1
	}
	return math.Abs(c)
}

// fnSamples are the samples per function of both configs and their exposures.
type fnSamples struct {
	base, neu   map[string]int64
	ebase, eneu float64
}

// topChanges are the top functions by absolute change of CPU µs per op, largest first
// (ties by name), each tested against sampling noise (Bonferroni over every function
// compared).
func topChanges(base, neu map[string]float64, n fnSamples, baseOps, newOps int64, roleDelta float64, top int) []FunctionChange {
	fns := map[string]bool{}
	for f := range base {
		fns[f] = true
	}
	for f := range neu {
		fns[f] = true
	}
	var out []FunctionChange
	for f := range fns {
		c := FunctionChange{Function: f, Base: base[f] * 1e6 / float64(baseOps), New: neu[f] * 1e6 / float64(newOps),
			BaseSamples: n.base[f], NewSamples: n.neu[f]}
		c.P = stats.PoissonRateP(c.BaseSamples, c.NewSamples, n.ebase, n.eneu)
		c.Beyond = c.P < NoiseAlpha/float64(len(fns))
		c.Delta = c.New - c.Base
		c.Pct, c.Share = math.NaN(), math.NaN()
		if c.Base != 0 {
			c.Pct = 100 * c.Delta / c.Base
		}
		if roleDelta != 0 {
			c.Share = shareOf(c.Delta, roleDelta)
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b FunctionChange) int {
		if c := cmp.Compare(math.Abs(b.Delta), math.Abs(a.Delta)); c != 0 {
			return c
		}
		return strings.Compare(a.Function, b.Function)
	})
	return out[:min(top, len(out))]
}

// onEveryStack is the share of a role's samples a function must be on, in both configs,
// to be left out of the ranking by total CPU.
const onEveryStack = 0.95

// withoutKeys is m without the keys drop says.
func withoutKeys(m map[string]float64, drop func(string) bool) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		if !drop(k) {
			out[k] = v
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// LoadExplain reads the two configs' runs from the store (one bulk read) and compares
// their profiles (BuildExplain).
func LoadExplain(ctx context.Context, st *store.Store, base, neu Group, o ExplainOptions) (Explain, error) {
	runs, err := st.Results(ctx, slices.Concat(base.RunIDs, neu.RunIDs))
	if err != nil {
		return Explain{}, err
	}
	return BuildExplain(base, neu, runs[:len(base.RunIDs)], runs[len(base.RunIDs):], o)
}

// shareOf is a change as a fraction of its role's change, within −1 and 1 (a function
// whose change goes against the role's offsets part of it); NaN when it is larger than
// the role's change, which is then the net of larger changes that offset each other and
// no share of it says anything.
func shareOf(delta, roleDelta float64) float64 {
	sh := delta / roleDelta
	const eps = 1e-9 // a function on every stack has the role's change, up to rounding
	switch {
	case math.Abs(sh) <= 1:
		return sh
	case math.Abs(sh) <= 1+eps:
		return math.Copysign(1, sh)
	}
	return math.NaN()
}
