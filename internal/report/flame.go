package report

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/stats"
	"github.com/dbperf/dbperf/internal/store"
)

// Differential flame graphs: per step and role, the NEW config's CPU profile drawn as a
// flame graph whose frames are coloured by how they changed against the BASE config, as
// Brendan Gregg's difffolded.pl and flamegraph.pl draw them (red grew, blue shrank). The
// model is here; render.FlameSVG draws it. No maintained Go library draws differential
// flame graphs (pprof's and the flame graph packages draw one profile), so dbperf has its
// own small tree and SVG.

const (
	// FlameMinFraction is the narrowest frame drawn, as a fraction of the root's width
	// (the NEW profile's CPU µs/op): narrower ones are left out, as flamegraph.pl's
	// --minwidth leaves out frames under 0.1 pixel.
	FlameMinFraction = 0.001
	// MaxFlameFrames bounds the frames of one graph (the widest are kept), so that a page
	// of several graphs stays small whatever the profiles hold.
	MaxFlameFrames = 1000
	// MaxFlameDiffs is how many step and role graphs a comparison draws: the largest
	// changes of CPU µs/op.
	MaxFlameDiffs = 8
)

// FlameNode is one frame of a differential flame graph: a function at one place in the
// call tree (root first, as in folded stacks), with its CPU µs per operation in the base
// and the new config. A frame's width is New; its children are sorted by name, as
// flamegraph.pl sorts them.
type FlameNode struct {
	Name string
	// Base and New are the frame's total CPU µs/op: samples whose stack passes through
	// it. BaseSelf and NewSelf its self CPU: samples where it is the leaf.
	Base, New         float64
	BaseSelf, NewSelf float64
	// Own is the change (µs/op) of what is drawn as the frame's own, its width not
	// covered by children drawn above it: its self CPU's change, plus the change of the
	// frames above it that are not drawn (too narrow, or absent from the new profile),
	// so that a frame whose callee disappeared shows shrinking. Own over every drawn
	// frame adds up to the root's Delta. A frame's colour is its Own.
	Own float64
	// OwnBeyond says Own exceeds the noise of sampling: the samples behind it in both
	// configs, tested as explain tests a function (stats.PoissonRateP, NoiseAlpha over the
	// frames drawn). A frame whose Own is within the noise is drawn neutral, not red or
	// blue: its colour must say no more than its samples do.
	OwnBeyond bool
	// OwnShift is Own across the configs' units (blocks or runs, flameunits.go), and
	// OwnSignificant what colours the frame: OwnBeyond, and its interval excluding 0
	// when the units allow intervals.
	OwnShift       stats.Shift
	OwnSignificant bool
	Children       []*FlameNode

	baseN, newN int64 // samples through the frame

	kids map[string]*FlameNode // while the tree is built
}

// Delta is the change of the frame's total CPU µs/op: New - Base.
func (n *FlameNode) Delta() float64 { return n.New - n.Base }

// Pct is Delta in % of Base; NaN when Base is 0 (the frame is new).
func (n *FlameNode) Pct() float64 {
	if n.Base == 0 {
		return math.NaN()
	}
	return 100 * n.Delta() / n.Base
}

// Frames is how many frames the graph under n draws (n included): those with new CPU.
func (n *FlameNode) Frames() int {
	if n.New <= 0 {
		return 0
	}
	k := 1
	for _, c := range n.Children {
		k += c.Frames()
	}
	return k
}

func (n *FlameNode) child(name string) *FlameNode {
	c := n.kids[name]
	if c == nil {
		if n.kids == nil {
			n.kids = map[string]*FlameNode{}
		}
		c = &FlameNode{Name: name}
		n.kids[name] = c
	}
	return c
}

// BuildFlameDiff builds the differential flame graph of one step and role: base and neu
// are the role's profiles in each config's runs (summed, as dbperf explain sums them),
// baseOps and newOps the step's primary operations over those runs. A profile's samples
// count 10⁶ ÷ (its rate × ops) µs/op each. Frames narrower than FlameMinFraction of the
// root are left out, and the narrowest beyond MaxFlameFrames.
func BuildFlameDiff(base, neu []store.StepProfile, baseOps, newOps float64) (*FlameNode, error) {
	root, _, err := buildFlame(base, neu, baseOps, newOps, FlameMinFraction, MaxFlameFrames)
	return root, err
}

// buildFlame is BuildFlameDiff with its limits, and how many frames with new CPU it left
// out.
func buildFlame(base, neu []store.StepProfile, baseOps, newOps, minFrac float64, maxFrames int) (*FlameNode, int, error) {
	if !(baseOps > 0) || !(newOps > 0) {
		return nil, 0, fmt.Errorf("flame graph: no operations (%v in the base, %v in the new config), so no CPU per operation", baseOps, newOps)
	}
	root := &FlameNode{Name: "all"}
	add := func(ps []store.StepProfile, ops float64, isNew bool) error {
		for _, p := range ps {
			if p.Hz <= 0 {
				continue // no rate: its samples are no CPU time (explain leaves it out too)
			}
			text, err := p.FoldedText()
			if err != nil {
				return err
			}
			per := 1e6 / (float64(p.Hz) * ops)
			err = foldedStacks(text, func(frames []string, count int64) {
				v := float64(count) * per
				n := root
				n.addTotal(v, count, isNew)
				for _, f := range frames {
					n = n.child(f)
					n.addTotal(v, count, isNew)
				}
				if isNew {
					n.NewSelf += v
				} else {
					n.BaseSelf += v
				}
			})
			if err != nil {
				return fmt.Errorf("profile of %s: %w", p.Role, err)
			}
		}
		return nil
	}
	if err := add(base, baseOps, false); err != nil {
		return nil, 0, err
	}
	if err := add(neu, newOps, true); err != nil {
		return nil, 0, err
	}
	root.sortChildren()
	before := root.Frames()
	root.prune(minFrac*root.New, maxFrames)
	eps := 1e-9 * max(root.Base, root.New)
	root.setOwn(eps)
	// Exposures (rate × operations) from the root: its samples over its CPU per op.
	if root.Base > 0 && root.New > 0 {
		root.testOwn(float64(root.baseN)*1e6/root.Base, float64(root.newN)*1e6/root.New, NoiseAlpha/float64(max(1, root.Frames())))
	}
	return root, before - root.Frames(), nil
}

// testOwn sets OwnBeyond under n: the samples behind each frame's Own (its samples less
// those of its children drawn) tested at alpha.
func (n *FlameNode) testOwn(ebase, enew, alpha float64) {
	b, w := n.baseN, n.newN
	for _, c := range n.Children {
		b, w = b-c.baseN, w-c.newN
		c.testOwn(ebase, enew, alpha)
	}
	n.OwnBeyond = n.Own != 0 && stats.PoissonRateP(max(b, 0), max(w, 0), ebase, enew) < alpha
	n.OwnSignificant = n.OwnBeyond // until testOwnAcrossUnits has units to say more
}

func (n *FlameNode) addTotal(v float64, count int64, isNew bool) {
	if isNew {
		n.New += v
		n.newN += count
	} else {
		n.Base += v
		n.baseN += count
	}
}

// sortChildren turns the children built in a map into a list sorted by name.
func (n *FlameNode) sortChildren() {
	n.Children = make([]*FlameNode, 0, len(n.kids))
	for _, c := range n.kids {
		n.Children = append(n.Children, c)
	}
	n.kids = nil
	slices.SortFunc(n.Children, func(a, b *FlameNode) int { return strings.Compare(a.Name, b.Name) })
	for _, c := range n.Children {
		c.sortChildren()
	}
}

// prune leaves out the frames under minWidth (new CPU µs/op; every frame absent from the
// new profile), then, over maxFrames, all but the widest maxFrames (ties: the shallower,
// then the first drawn). A frame is never narrower than one it calls, so what is kept is
// still a tree.
func (n *FlameNode) prune(minWidth float64, maxFrames int) {
	var cut func(*FlameNode)
	cut = func(n *FlameNode) {
		n.Children = slices.DeleteFunc(n.Children, func(c *FlameNode) bool { return !(c.New > 0) || c.New < minWidth })
		for _, c := range n.Children {
			cut(c)
		}
	}
	cut(n)
	if maxFrames <= 0 || n.Frames() <= maxFrames {
		return
	}
	type frame struct {
		n            *FlameNode
		depth, order int
	}
	var all []frame
	var walk func(*FlameNode, int)
	walk = func(f *FlameNode, depth int) {
		all = append(all, frame{f, depth, len(all)})
		for _, c := range f.Children {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	slices.SortFunc(all, func(a, b frame) int {
		return cmp.Or(cmp.Compare(b.n.New, a.n.New), cmp.Compare(a.depth, b.depth), cmp.Compare(a.order, b.order))
	})
	keep := make(map[*FlameNode]bool, maxFrames)
	for _, f := range all[:maxFrames] {
		keep[f.n] = true
	}
	var drop func(*FlameNode)
	drop = func(f *FlameNode) {
		f.Children = slices.DeleteFunc(f.Children, func(c *FlameNode) bool { return !keep[c] })
		for _, c := range f.Children {
			drop(c)
		}
	}
	drop(n)
}

// setOwn sets Own under n, a change within eps of 0 (rounding) as 0.
func (n *FlameNode) setOwn(eps float64) {
	n.Own = n.Delta()
	for _, c := range n.Children {
		n.Own -= c.Delta()
		c.setOwn(eps)
	}
	if math.Abs(n.Own) <= eps {
		n.Own = 0
	}
}

// foldedStacks calls fn with the frames and count of each line of folded text ("frame;
// frame;frame count", root first), as ParseFolded reads it.
func foldedStacks(text []byte, fn func(frames []string, count int64)) error {
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), len(text)+1)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i <= 0 {
			return fmt.Errorf("folded line %d: not \"stack count\": %q", n, Clip(line, 80))
		}
		count, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil || count < 0 {
			return fmt.Errorf("folded line %d: not \"stack count\": %q", n, Clip(line, 80))
		}
		fn(strings.Split(line[:i], ";"), count)
	}
	return sc.Err()
}

// FlameDiff is one step and role's differential flame graph between a comparison's two
// configs.
type FlameDiff struct {
	Step, Role string
	// Base and New name the configs (Group.Name).
	Base, New string
	// BaseOps and NewOps are the step's primary operations over the runs profiled.
	BaseOps, NewOps int64
	// Root is the graph; its Base and New are the role's CPU µs/op.
	Root *FlameNode
	// Dropped is how many frames with new CPU are not drawn (too narrow, or beyond
	// MaxFlameFrames).
	Dropped int
	// Intervals says the configs had units enough for intervals of the frames' own
	// change (else only the sampling test colours them).
	Intervals bool
}

// Title is the graph's heading: step, role and the role's CPU µs/op in both configs.
func (f FlameDiff) Title() string {
	change := "new"
	if p := f.Root.Pct(); !math.IsNaN(p) {
		change = SignedPct(p)
	}
	return fmt.Sprintf("%s, %s: %s → %s CPU µs/op (%s), %s → %s", f.Step, f.Role,
		FormatNum(f.Root.Base), FormatNum(f.Root.New), change, f.Base, f.New)
}

// SignedPct is a change in percent with its sign: +12%, -3.5%.
func SignedPct(p float64) string {
	if p > 0 {
		return "+" + FormatPct(p)
	}
	return FormatPct(p)
}

// FlameLegend is what a reader of the differential flame graphs needs to know.
func FlameLegend(base, neu string) []string {
	return []string{
		fmt.Sprintf("Per step and role profiled in both configs (dbperf run --cpu-profile), at most %d, the largest change of CPU µs per operation first: "+
			"%s's call stacks, root at the bottom, each frame as wide as its CPU µs/op in %s (children sorted by name).", MaxFlameDiffs, neu, neu),
		fmt.Sprintf("Colour: the change of a frame's own part (its self CPU, and callees not drawn) against %s: red grew, blue shrank, grey unchanged or not significant "+
			"(coloured only beyond the noise of sampling and, where the configs have blocks or runs enough for it, when its 95%% interval across them excludes 0, as dbperf explain calls a function changed); "+
			"the deeper the colour, the larger the change against the graph's largest. Frames only in %s are not drawn: their parent shrinks. "+
			"Hover a frame for its µs/op in both. Frames under %s of the root are left out.", base, base, FormatPct(100*FlameMinFraction)),
	}
}

// FlameDiffs are the comparison's differential flame graphs when it compares two configs:
// per step (in run order) and role profiled in both, at most MaxFlameDiffs, the largest
// change of the role's CPU µs/op first. Notes say what is left out: graphs beyond the
// limit, profiles that cannot be read.
func (c Comparison) FlameDiffs() ([]FlameDiff, []string) {
	if len(c.Groups) != 2 {
		return nil, nil
	}
	bg, ng := c.Groups[c.Base], c.Groups[1-c.Base]
	type side struct {
		ops      int64
		profiles map[string][]store.StepProfile
		sec      map[string]float64
	}
	collect := func(g GroupReport, step string) side {
		s := side{profiles: map[string][]store.StepProfile{}, sec: map[string]float64{}}
		for _, r := range g.Runs {
			st, ok := r.Step(step)
			if !ok || len(st.Profiles) == 0 {
				continue
			}
			if op, ok := st.PrimaryOp(); ok {
				s.ops += op.Count
			}
			for _, p := range st.Profiles {
				if p.Hz > 0 {
					s.profiles[p.Role] = append(s.profiles[p.Role], p)
					s.sec[p.Role] += float64(p.Samples) / float64(p.Hz)
				}
			}
		}
		return s
	}
	type candidate struct {
		step, role string
		order      int
		change     float64
		b, n       side
	}
	var cands []candidate
	for i, step := range c.Steps {
		b, n := collect(bg, step), collect(ng, step)
		if b.ops <= 0 || n.ops <= 0 {
			continue
		}
		for role := range n.profiles {
			if b.profiles[role] == nil || !(n.sec[role] > 0) {
				continue
			}
			change := n.sec[role]*1e6/float64(n.ops) - b.sec[role]*1e6/float64(b.ops)
			cands = append(cands, candidate{step, role, i, math.Abs(change), b, n})
		}
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(b.change, a.change), cmp.Compare(a.order, b.order), strings.Compare(a.role, b.role))
	})
	var out []FlameDiff
	var notes []string
	for _, cd := range cands[:min(MaxFlameDiffs, len(cands))] {
		root, dropped, err := buildFlame(cd.b.profiles[cd.role], cd.n.profiles[cd.role], float64(cd.b.ops), float64(cd.n.ops),
			FlameMinFraction, MaxFlameFrames)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s, %s: no flame graph: %v", cd.step, cd.role, err))
			continue
		}
		iv, err := testOwnAcrossUnits(root, bg, ng, cd.step, cd.role)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s, %s: no flame graph: %v", cd.step, cd.role, err))
			continue
		}
		out = append(out, FlameDiff{Step: cd.step, Role: cd.role, Base: bg.Name, New: ng.Name,
			BaseOps: cd.b.ops, NewOps: cd.n.ops, Root: root, Dropped: dropped, Intervals: iv})
	}
	if k := len(cands) - MaxFlameDiffs; k > 0 {
		verb := "are"
		if k == 1 {
			verb = "is"
		}
		notes = append(notes, fmt.Sprintf("%s (a step and role profiled in both) changed less and %s not drawn: dbperf explain lists every role's functions.",
			Plural(k, "more graph"), verb))
	}
	return out, notes
}
