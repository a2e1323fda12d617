package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/dbperf/dbperf/internal/stats"
	"github.com/dbperf/dbperf/internal/store"
)

// Intervals per function: explain's second line of evidence, across trials.
//
// The sampling-noise test (FunctionChange.P) asks whether the samples of two sums could
// come from one rate; it knows nothing of how much a function's CPU per operation moves
// from one run or block to the next, which is larger (the machine's minutes, a block's
// tables). So each unit — a block of paired trials (interleaved, duet: its slices' samples
// and operations summed, as the report averages a block's slices) or a run (sequential,
// repeats) — gives each function's µs per operation per role, and the two configs' units
// are compared as the report compares throughput: paired by block when both configs' runs
// carry trials of one sweep (stats.PairedShift), else unpaired (stats.UnpairedShift). The
// shift of µs/op (not its ratio) is estimated, since a function may have no sample in a
// unit.
//
// A function is called changed only when all three hold: its interval excludes 0, its
// estimate is at least the report's threshold (stats.DefaultThreshold) of its role's CPU
// per operation (a change that cannot move the role by 2% is no finding), and the
// sampling-noise test says beyond. A role is changed when its own interval excludes 0 and
// its estimate is beyond the threshold of its base and of the step's CPU per operation
// (all roles'), so a change too small to move the step is no finding.

// unitKey names a unit: a block of a sweep's trials ("b3"), or a run ("run 12").
type unitKey = string

// stepUnits are one config's profiles of a step per unit: each unit's operations and its
// roles' CPU (roleCPU, as configCPU sums them over all runs).
type stepUnits struct {
	ops   map[unitKey]int64
	roles map[unitKey]map[string]*roleCPU
	// sweep is the sweep every run with the step's profiles belongs to, trials whether
	// every such run carries a trial (so its units are blocks); false: units are runs.
	sweep  string
	trials bool
}

// unitStep is one run's step with the unit it belongs to.
type unitStep struct {
	key unitKey
	st  store.Step
}

// unitStepsOf are a config's steps named step that has accepts, each with its unit: the
// block of its trial (its server instance with --instances: unitKeys) when every such run
// carries a trial of one sweep (trials, and sweep that sweep), else its run.
func unitStepsOf(runs []store.Run, step string, has func(store.Step) bool) (out []unitStep, sweep string, trials bool) {
	trials = true
	first := true
	type held struct {
		trial, instance string
		id              int64
		st              store.Step
	}
	var all []held
	for _, r := range runs {
		for _, st := range r.Steps {
			if st.Result.Name != step || !has(st) {
				continue
			}
			sw, tr := paramString(r.Params, paramSweep), paramString(r.Params, paramTrial)
			if tr == "" || (!first && sw != sweep) {
				trials = false
			}
			if first {
				sweep, first = sw, false
			}
			all = append(all, held{trial: tr, instance: paramString(r.Params, store.ParamInstance), id: r.ID, st: st})
		}
	}
	var trs, insts []string
	for _, h := range all {
		trs, insts = append(trs, h.trial), append(insts, h.instance)
	}
	keys := unitKeys(trs, insts)
	for i, h := range all {
		key := keys[i]
		if !trials {
			key = fmt.Sprintf("r%d", h.id)
		}
		out = append(out, unitStep{key: key, st: h.st})
	}
	return out, sweep, trials
}

// unitsOf collects a config's profiles of step per unit. Profiles that do not parse are
// left out (BuildExplain's sums report them).
func unitsOf(runs []store.Run, step, role string) stepUnits {
	steps, sweep, trials := unitStepsOf(runs, step, func(st store.Step) bool { return len(st.Profiles) > 0 })
	u := stepUnits{ops: map[unitKey]int64{}, roles: map[unitKey]map[string]*roleCPU{}, sweep: sweep, trials: trials}
	for _, h := range steps {
		key := h.key
		u.ops[key] += h.st.Result.PrimaryCount()
		if u.roles[key] == nil {
			u.roles[key] = map[string]*roleCPU{}
		}
		for _, p := range h.st.Profiles {
			if role != "" && p.Role != role || p.Hz <= 0 {
				continue
			}
			text, err := p.FoldedText()
			if err != nil {
				continue
			}
			f, err := ParseFolded(text)
			if err != nil {
				continue
			}
			rc := u.roles[key][p.Role]
			if rc == nil {
				rc = &roleCPU{}
				u.roles[key][p.Role] = rc
			}
			rc.add(f, p.Hz, h.st.Result.PrimaryCount())
		}
	}
	return u
}

// unitPairs says how two configs' units compare: the common blocks in order when both
// are blocks of one sweep with at least two in common (paired), else each config's units.
func unitPairs(b, n stepUnits) (bk, nk []unitKey, paired bool) {
	if b.trials && n.trials && b.sweep == n.sweep {
		for k := range b.ops {
			if _, ok := n.ops[k]; ok {
				bk = append(bk, k)
			}
		}
		slices.SortFunc(bk, compareTrials)
		if len(bk) >= 2 {
			return bk, bk, true
		}
	}
	bk, nk = nil, nil
	for k := range b.ops {
		bk = append(bk, k)
	}
	for k := range n.ops {
		nk = append(nk, k)
	}
	slices.SortFunc(bk, compareTrials)
	slices.SortFunc(nk, compareTrials)
	return bk, nk, false
}

// perUnit is a figure per unit in µs per operation: get reads a unit's role's CPU
// seconds (0 when the role or function has no sample there); units without operations
// are left out.
func perUnit(u stepUnits, keys []unitKey, role string, get func(*roleCPU) float64) []float64 {
	out := make([]float64, 0, len(keys))
	for _, k := range keys {
		ops := u.ops[k]
		if ops <= 0 {
			out = append(out, math.NaN())
			continue
		}
		sec := 0.0
		if rc := u.roles[k][role]; rc != nil {
			sec = get(rc)
		}
		out = append(out, sec*1e6/float64(ops))
	}
	return out
}

// shift compares a figure per unit of the two configs.
func shift(b, n []float64, paired bool) stats.Shift {
	if paired {
		return stats.PairedShift(b, n, stats.DefaultConfidence)
	}
	return stats.UnpairedShift(b, n, stats.DefaultConfidence)
}

// addIntervals gives the step's roles and shown functions their intervals across units,
// their verdicts, and each role's explained fraction (see the comment at the top); bs and
// ns are the configs' sums of the step (configCPU), for the sampling-noise test.
func addIntervals(es *ExplainStep, bs, ns *stepCPU, baseRuns, newRuns []store.Run, o ExplainOptions) {
	bu, nu := unitsOf(baseRuns, es.Step, o.Role), unitsOf(newRuns, es.Step, o.Role)
	bk, nk, paired := unitPairs(bu, nu)
	// A role's change must be able to move the step's CPU per operation (all roles') by
	// the threshold: a background writer's few nanoseconds per query doubling is no finding.
	total := 0.0
	for _, r := range es.Roles {
		total += r.Base
	}
	for i := range es.Roles {
		er := &es.Roles[i]
		role := er.Role
		er.Units, er.Paired = min(len(bk), len(nk)), paired
		er.Shift = shift(perUnit(bu, bk, role, func(r *roleCPU) float64 { return r.sec }),
			perUnit(nu, nk, role, func(r *roleCPU) float64 { return r.sec }), paired)
		floor := stats.DefaultThreshold * er.Base
		er.Changed = er.Shift.Excludes0() && math.Abs(er.Shift.Estimate) >= max(floor, stats.DefaultThreshold*total)
		fnShift := func(fn string, self bool) stats.Shift {
			get := func(r *roleCPU) float64 {
				if self {
					return r.self[fn]
				}
				return r.total[fn]
			}
			return shift(perUnit(bu, bk, role, get), perUnit(nu, nk, role, get), paired)
		}
		mark := func(fs []FunctionChange, self bool) {
			for j := range fs {
				f := &fs[j]
				f.Shift = fnShift(f.Function, self)
				f.Changed = f.Beyond && f.Shift.Excludes0() && math.Abs(f.Shift.Estimate) >= floor && f.Build == ""
			}
		}
		mark(er.Self, true)
		mark(er.Total, false)
		// The explained fraction: the role's change that the changed functions' self CPU
		// accounts for (self CPU adds up to the role's; total would count a stack's
		// functions once each). Every function with samples is tested, not only the shown.
		er.Explained, er.BeneathFraction = math.NaN(), math.NaN()
		if !er.Shift.HasCI || er.Shift.Estimate == 0 {
			continue
		}
		fns := map[string]bool{}
		for _, u := range []stepUnits{bu, nu} {
			for _, roles := range u.roles {
				if rc := roles[role]; rc != nil {
					for fn := range rc.self {
						fns[fn] = true
					}
				}
			}
		}
		br, nr := bs.roles[role], ns.roles[role]
		if br == nil {
			br = &roleCPU{}
		}
		if nr == nil {
			nr = &roleCPU{}
		}
		sum, by := 0.0, []string(nil)
		for _, fn := range sortedKeys(fns) {
			if p := stats.PoissonRateP(br.selfN[fn], nr.selfN[fn], br.exposure, nr.exposure); p >= NoiseAlpha/float64(len(fns)) {
				continue
			}
			s := fnShift(fn, true)
			if !s.Excludes0() || math.Abs(s.Estimate) < floor {
				continue
			}
			sum += s.Estimate
			by = append(by, fn)
		}
		er.Explained, er.ExplainedBy = sum/er.Shift.Estimate, by
		if er.Changed && len(by) == 0 {
			er.Beneath, er.BeneathFraction = beneath(er)
		}
	}
}

// beneath is the changed function by total CPU that holds the largest part of a changed
// role's change without holding most of the role's CPU in the base (ancestors of every
// stack, main and the server's loop, hold all of its change and say nothing), with its
// part of the change; "" and NaN when none is changed.
func beneath(er *ExplainRole) (string, float64) {
	best, frac := "", math.NaN()
	for _, f := range er.Total {
		if !f.Changed || f.Base >= 0.5*er.Base || math.Signbit(f.Shift.Estimate) != math.Signbit(er.Shift.Estimate) {
			continue
		}
		if fr := f.Shift.Estimate / er.Shift.Estimate; best == "" || fr > frac {
			best, frac = f.Function, fr
		}
	}
	return best, frac
}
