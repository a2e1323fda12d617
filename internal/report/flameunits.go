package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/dbperf/dbperf/internal/store"
)

// Intervals for a differential flame graph's frames, by the rule explain applies to
// functions (explainpairs.go): a frame's own change is coloured only when it is beyond the
// noise of sampling (FlameNode.OwnBeyond) and, where the configs have enough units (blocks
// of a sweep's paired trials, else runs) for an interval, that interval of its own µs per
// operation excludes 0. With too few units for an interval the sampling test alone
// decides, and the graph says so (FlameDiff.Intervals).

// flameUnit is one unit's own CPU per drawn frame (µs summed over its profiles) and its
// operations.
type flameUnit struct {
	ops int64
	own map[*FlameNode]float64
}

// flameUnits collects g's units of step and role: each run's profile of the role, its
// samples put on the deepest frame of root their stack reaches (the frame whose own part
// they are: its self CPU, or a callee not drawn), keyed by block (by server instance with
// --instances: unitKeys) when every run with the profile carries a trial of one sweep,
// else by run.
func flameUnits(g GroupReport, step, role string, root *FlameNode) (units map[string]*flameUnit, sweep string, trials bool, err error) {
	units, trials = map[string]*flameUnit{}, true
	first := true
	type held struct {
		trial, instance string
		id              int64
		s               StepReport
	}
	var all []held
	for _, r := range g.Runs {
		st, ok := r.Step(step)
		if !ok {
			continue
		}
		has := false
		for _, p := range st.Profiles {
			has = has || p.Role == role && p.Hz > 0
		}
		if !has {
			continue
		}
		sw, tr := runTrial(r)
		if tr == "" || (!first && sw != sweep) {
			trials = false
		}
		if first {
			sweep, first = sw, false
		}
		all = append(all, held{trial: tr, instance: paramString(r.Params, store.ParamInstance), id: r.ID, s: st})
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
		u := units[key]
		if u == nil {
			u = &flameUnit{own: map[*FlameNode]float64{}}
			units[key] = u
		}
		if op, ok := h.s.PrimaryOp(); ok {
			u.ops += op.Count
		}
		for _, p := range h.s.Profiles {
			if p.Role != role || p.Hz <= 0 {
				continue
			}
			text, ferr := p.FoldedText()
			if ferr != nil {
				return nil, "", false, ferr
			}
			per := 1e6 / float64(p.Hz)
			ferr = foldedStacks(text, func(frames []string, count int64) {
				n := root
				for _, f := range frames {
					c := childNamed(n, f)
					if c == nil {
						break
					}
					n = c
				}
				u.own[n] += float64(count) * per
			})
			if ferr != nil {
				return nil, "", false, ferr
			}
		}
	}
	return units, sweep, trials, nil
}

// childNamed is n's drawn child of that name (children are sorted by name), nil if none.
func childNamed(n *FlameNode, name string) *FlameNode {
	i, ok := slices.BinarySearchFunc(n.Children, name, func(c *FlameNode, name string) int {
		switch {
		case c.Name < name:
			return -1
		case c.Name > name:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return n.Children[i]
}

// testOwnAcrossUnits sets, under root, each frame's OwnShift (its own µs/op across the
// configs' units) and OwnSignificant; it says whether the units allowed intervals.
func testOwnAcrossUnits(root *FlameNode, base, neu GroupReport, step, role string) (bool, error) {
	bu, bsw, bt, err := flameUnits(base, step, role, root)
	if err != nil {
		return false, err
	}
	nu, nsw, nt, err := flameUnits(neu, step, role, root)
	if err != nil {
		return false, err
	}
	var bk, nk []string
	paired := false
	if bt && nt && bsw == nsw {
		for k := range bu {
			if _, ok := nu[k]; ok {
				bk = append(bk, k)
			}
		}
		slices.SortFunc(bk, compareTrials)
		nk, paired = bk, len(bk) >= 2
	}
	if !paired {
		bk, nk = sortedUnitKeys(bu), sortedUnitKeys(nu)
	}
	perOp := func(units map[string]*flameUnit, keys []string, n *FlameNode) []float64 {
		out := make([]float64, 0, len(keys))
		for _, k := range keys {
			u := units[k]
			if u.ops <= 0 {
				out = append(out, math.NaN())
				continue
			}
			out = append(out, u.own[n]/float64(u.ops))
		}
		return out
	}
	any := false
	var walk func(*FlameNode)
	walk = func(n *FlameNode) {
		n.OwnShift = shift(perOp(bu, bk, n), perOp(nu, nk, n), paired)
		any = any || n.OwnShift.HasCI
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	var mark func(*FlameNode)
	mark = func(n *FlameNode) {
		n.OwnSignificant = n.OwnBeyond && (!any || n.OwnShift.Excludes0())
		for _, c := range n.Children {
			mark(c)
		}
	}
	mark(root)
	return any, nil
}

func sortedUnitKeys(m map[string]*flameUnit) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, compareTrials)
	return out
}
