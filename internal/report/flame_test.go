package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/store"
)

// flameProfile is a role's profile of folded text at hz.
func flameProfile(t *testing.T, role string, hz int, text string) store.StepProfile {
	t.Helper()
	gz, err := store.CompressFolded([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var samples int64
	if err := foldedStacks([]byte(text), func(_ []string, n int64) { samples += n }); err != nil {
		t.Fatal(err)
	}
	return store.StepProfile{Role: role, Event: "cpu-clock", Hz: hz, Samples: samples, Folded: gz}
}

// flamePath is the node at the path of names under root (nil when absent).
func flamePath(root *FlameNode, names ...string) *FlameNode {
	n := root
	for _, name := range names {
		i := slices.IndexFunc(n.Children, func(c *FlameNode) bool { return c.Name == name })
		if i < 0 {
			return nil
		}
		n = n.Children[i]
	}
	return n
}

func TestBuildFlameDiff(t *testing.T) {
	// Base: 100 Hz, 1000 ops: a sample is 10 µs/op. New: 200 Hz, 2000 ops: 2.5 µs/op.
	base := []store.StepProfile{flameProfile(t, "insert", 100, "main;exec;heap 10\nmain;exec;wal 5\nmain;exec;gone 4\nmain 1\n")}
	neu := []store.StepProfile{flameProfile(t, "insert", 200, "main;exec;wal 80\nmain;exec;heap 40\nmain;exec;lock 8\nmain 4\n")}
	root, err := BuildFlameDiff(base, neu, 1000, 2000)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path                    []string
		base, neu, bSelf, nSelf float64
	}{
		{nil, 200, 330, 0, 0},
		{[]string{"main"}, 200, 330, 10, 10},
		{[]string{"main", "exec"}, 190, 320, 0, 0},
		{[]string{"main", "exec", "heap"}, 100, 100, 100, 100},
		{[]string{"main", "exec", "wal"}, 50, 200, 50, 200},
		{[]string{"main", "exec", "lock"}, 0, 20, 0, 20},
	} {
		n := flamePath(root, c.path...)
		if n == nil {
			t.Fatalf("no frame %v", c.path)
		}
		if !near(n.Base, c.base) || !near(n.New, c.neu) || !near(n.BaseSelf, c.bSelf) || !near(n.NewSelf, c.nSelf) {
			t.Errorf("%v: base %v new %v self %v → %v, want %v %v %v → %v", c.path, n.Base, n.New, n.BaseSelf, n.NewSelf, c.base, c.neu, c.bSelf, c.nSelf)
		}
	}
	// Children by name, as flamegraph.pl sorts; "gone" (base only) is not drawn, and its
	// change is exec's own: exec shrank by gone's 40 µs/op.
	exec := flamePath(root, "main", "exec")
	var names []string
	for _, c := range exec.Children {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"heap", "lock", "wal"}) {
		t.Errorf("exec's children %v, want heap lock wal", names)
	}
	if !near(exec.Own, -40) {
		t.Errorf("exec's own change %v, want -40 (its callee gone)", exec.Own)
	}
	if h := flamePath(root, "main", "exec", "heap"); h.Own != 0 || h.Delta() != 0 || h.Pct() != 0 {
		t.Errorf("heap unchanged: own %v delta %v pct %v", h.Own, h.Delta(), h.Pct())
	}
	if l := flamePath(root, "main", "exec", "lock"); !near(l.Own, 20) || !math.IsNaN(l.Pct()) {
		t.Errorf("lock (new): own %v pct %v", l.Own, l.Pct())
	}
	// Own over the drawn frames adds up to the root's change.
	sum := 0.0
	var walk func(*FlameNode)
	walk = func(n *FlameNode) {
		sum += n.Own
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	if !near(sum, root.Delta()) {
		t.Errorf("own changes add up to %v, the root changed %v", sum, root.Delta())
	}
	if root.Frames() != 6 {
		t.Errorf("%d frames, want 6", root.Frames())
	}

	// Two runs of a config are summed: the same profile twice over twice the ops.
	twice, err := BuildFlameDiff(append(base, base...), neu, 2000, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if !near(twice.Base, root.Base) {
		t.Errorf("two runs: base %v, want %v", twice.Base, root.Base)
	}

	if _, err := BuildFlameDiff(base, neu, 0, 2000); err == nil {
		t.Error("no operations: no error")
	}
	bad := store.StepProfile{Role: "insert", Hz: 100, Folded: []byte("not gzip")}
	if _, err := BuildFlameDiff([]store.StepProfile{bad}, neu, 1, 1); err == nil {
		t.Error("unreadable profile: no error")
	}
	if _, err := BuildFlameDiff([]store.StepProfile{flameProfile(t, "insert", 100, "main;a 1\n")}, []store.StepProfile{{Role: "insert", Hz: 100, Folded: mustGzip(t, "main;a x\n")}}, 1, 1); err == nil {
		t.Error("bad folded line: no error")
	}
}

func mustGzip(t *testing.T, s string) []byte {
	t.Helper()
	gz, err := store.CompressFolded([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return gz
}

func TestFlamePrune(t *testing.T) {
	// 10,000 samples: "tiny" (5, 0.05%) is under FlameMinFraction, "small" (10) is not.
	text := "main;big 9985\nmain;tiny 5\nmain;small 10\n"
	p := []store.StepProfile{flameProfile(t, "r", 100, text)}
	root, dropped, err := buildFlame(p, p, 1, 1, FlameMinFraction, MaxFlameFrames)
	if err != nil {
		t.Fatal(err)
	}
	if flamePath(root, "main", "tiny") != nil || flamePath(root, "main", "small") == nil || dropped != 1 {
		t.Errorf("min width: tiny drawn %v, small drawn %v, %d dropped", flamePath(root, "main", "tiny") != nil, flamePath(root, "main", "small") != nil, dropped)
	}
	// The cap keeps the widest frames, and what it keeps is a tree.
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "main;f%02d;g%02d %d\n", i, i, 100+i)
	}
	p = []store.StepProfile{flameProfile(t, "r", 100, b.String())}
	root, dropped, err = buildFlame(p, p, 1, 1, 0, 21)
	if err != nil {
		t.Fatal(err)
	}
	if root.Frames() != 21 || dropped != 102-21 {
		t.Fatalf("%d frames drawn, %d dropped; want 21, 81", root.Frames(), dropped)
	}
	// root, main, then f49..f40 with their g's (2 each): 2 + 19 = 21 → f49..f40 and g49..g41.
	if flamePath(root, "main", "f40") == nil || flamePath(root, "main", "f39") != nil ||
		flamePath(root, "main", "f41", "g41") == nil || flamePath(root, "main", "f40", "g40") != nil {
		t.Errorf("the cap did not keep the widest frames: %v", flamePath(root, "main").Children)
	}
}

// flameRun is a run of steps, each with its ops and role → folded text at 100 Hz.
func flameRun(t *testing.T, id int64, steps map[string]int64, profiles map[string]map[string]string) RunReport {
	t.Helper()
	var st []store.Step
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range steps {
			if !yield(k) {
				return
			}
		}
	}) {
		s := store.Step{Result: metrics.StepResult{Name: name, Status: metrics.StatusOK, Primary: "insert", Seconds: 1,
			Labels: []metrics.LabelStats{{Label: "insert", Unit: metrics.UnitRows, Rows: steps[name], Events: 1}}}}
		for role, text := range profiles[name] {
			s.Profiles = append(s.Profiles, flameProfile(t, role, 100, text))
		}
		st = append(st, s)
	}
	return Build([]store.Run{{ID: id, Status: store.RunOK, Steps: st}}).Runs[0]
}

func TestComparisonFlameDiffs(t *testing.T) {
	ops := map[string]int64{"s1": 1000, "s2": 1000}
	// s1/insert grows by 50 samples, s1/client by 10, s2/insert shrinks by 30; s2/query is
	// profiled in the base only.
	a := flameRun(t, 1, ops, map[string]map[string]string{
		"s1": {"insert": "main;x 100\n", "client": "go;y 10\n"},
		"s2": {"insert": "main;x 100\n", "query": "main;q 5\n"},
	})
	b := flameRun(t, 2, ops, map[string]map[string]string{
		"s1": {"insert": "main;x 150\n", "client": "go;y 20\n"},
		"s2": {"insert": "main;x 70\n"},
	})
	rep := Report{Runs: []RunReport{a, b}}
	c := Compare(rep, []Group{{Name: "a", RunIDs: []int64{1}}, {Name: "b", RunIDs: []int64{2}}}, 0)
	diffs, notes := c.FlameDiffs()
	var got []string
	for _, d := range diffs {
		got = append(got, fmt.Sprintf("%s/%s %s→%s %g→%g", d.Step, d.Role, d.Base, d.New, d.Root.Base, d.Root.New))
	}
	want := []string{"s1/insert a→b 1000→1500", "s2/insert a→b 1000→700", "s1/client a→b 100→200"}
	if !slices.Equal(got, want) || len(notes) != 0 {
		t.Errorf("flame diffs %q, notes %q; want %q", got, notes, want)
	}
	if title := diffs[0].Title(); title != "s1, insert: 1000 → 1500 CPU µs/op (+50%), a → b" {
		t.Errorf("title %q", title)
	}

	// The base second: the other config is the new one.
	c = Compare(rep, []Group{{Name: "a", RunIDs: []int64{1}}, {Name: "b", RunIDs: []int64{2}}}, 1)
	if diffs, _ := c.FlameDiffs(); len(diffs) != 3 || diffs[0].Base != "b" || diffs[0].Root.New != 1000 {
		t.Errorf("base b: %+v", diffs)
	}
	// One config, or three: no graphs.
	for _, groups := range [][]Group{{{Name: "a", RunIDs: []int64{1, 2}}},
		{{Name: "a", RunIDs: []int64{1}}, {Name: "b", RunIDs: []int64{2}}, {Name: "c", RunIDs: []int64{2}}}} {
		if diffs, notes := Compare(rep, groups, 0).FlameDiffs(); diffs != nil || notes != nil {
			t.Errorf("%d configs: %d graphs, notes %q", len(groups), len(diffs), notes)
		}
	}

	// More steps and roles than MaxFlameDiffs: the largest changes, and a note.
	many := map[string]int64{}
	pa, pb := map[string]map[string]string{}, map[string]map[string]string{}
	for i := range MaxFlameDiffs + 2 {
		s := fmt.Sprintf("s%02d", i)
		many[s] = 1000
		pa[s] = map[string]string{"insert": "main 100\n"}
		pb[s] = map[string]string{"insert": fmt.Sprintf("main %d\n", 101+i)}
	}
	rep = Report{Runs: []RunReport{flameRun(t, 1, many, pa), flameRun(t, 2, many, pb)}}
	diffs, notes = Compare(rep, []Group{{Name: "a", RunIDs: []int64{1}}, {Name: "b", RunIDs: []int64{2}}}, 0).FlameDiffs()
	if len(diffs) != MaxFlameDiffs || diffs[0].Step != fmt.Sprintf("s%02d", MaxFlameDiffs+1) || diffs[MaxFlameDiffs-1].Step != "s02" {
		t.Errorf("%d graphs, first %s, last %s", len(diffs), diffs[0].Step, diffs[len(diffs)-1].Step)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "2 more graphs") {
		t.Errorf("notes %q", notes)
	}
}

// TestFlameNoise: a frame whose own samples grew tenfold is coloured (OwnBeyond); one
// with a sample more, or the same samples per op, is not.
func TestFlameNoise(t *testing.T) {
	base := []store.StepProfile{flameProfile(t, "insert", 100, "main;hot 20\nmain;warm 10\nmain;cold 500\n")}
	neu := []store.StepProfile{flameProfile(t, "insert", 100, "main;hot 200\nmain;warm 11\nmain;cold 500\n")}
	root, err := BuildFlameDiff(base, neu, 1000, 1000)
	if err != nil {
		t.Fatal(err)
	}
	beyond := map[string]bool{}
	var walk func(n *FlameNode)
	walk = func(n *FlameNode) {
		beyond[n.Name] = n.OwnBeyond
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	for name, want := range map[string]bool{"hot": true, "warm": false, "cold": false, "main": false} {
		if beyond[name] != want {
			t.Errorf("%s: OwnBeyond %v, want %v", name, beyond[name], want)
		}
	}
}

// Across a sweep's blocks a frame is coloured only when its own change's interval
// excludes 0 as well as beyond sampling noise: "grow" grows in every block; "jitter" is
// much larger in the new config's sum only because two of its blocks spiked, which the
// sampling test (on the sums) calls beyond and the blocks' interval does not.
func TestFlameDiffsIntervalsAcrossBlocks(t *testing.T) {
	var runs []RunReport
	var ga, gb Group
	for blk := 1; blk <= 12; blk++ {
		jitter := 40
		if blk == 3 || blk == 7 {
			jitter = 900
		}
		a := flameRun(t, int64(2*blk-1), map[string]int64{"s": 1000}, map[string]map[string]string{
			"s": {"insert": fmt.Sprintf("main;base 500\nmain;grow 100\nmain;jitter %d\n", 40+blk%3)}})
		b := flameRun(t, int64(2*blk), map[string]int64{"s": 1000}, map[string]map[string]string{
			"s": {"insert": fmt.Sprintf("main;base 500\nmain;grow %d\nmain;jitter %d\n", 160+blk%5, jitter)}})
		for _, r := range []*RunReport{&a, &b} {
			r.Params = map[string]any{"sweep": "s", "trial": fmt.Sprintf("b%d/s1", blk)}
		}
		runs = append(runs, a, b)
		ga.RunIDs, gb.RunIDs = append(ga.RunIDs, a.ID), append(gb.RunIDs, b.ID)
	}
	ga.Name, gb.Name = "a", "b"
	diffs, _ := Compare(Report{Runs: runs}, []Group{ga, gb}, 0).FlameDiffs()
	if len(diffs) != 1 || !diffs[0].Intervals {
		t.Fatalf("diffs %+v", diffs)
	}
	root := diffs[0].Root
	grow, jitter := flamePath(root, "main", "grow"), flamePath(root, "main", "jitter")
	if grow == nil || jitter == nil {
		t.Fatal("frames missing")
	}
	if !grow.OwnBeyond || !grow.OwnSignificant || !grow.OwnShift.Excludes0() {
		t.Errorf("grow: beyond %v significant %v shift %+v", grow.OwnBeyond, grow.OwnSignificant, grow.OwnShift)
	}
	if !jitter.OwnBeyond || jitter.OwnSignificant {
		t.Errorf("jitter: beyond %v significant %v shift %+v: want beyond the sampling test but not significant across blocks", jitter.OwnBeyond, jitter.OwnSignificant, jitter.OwnShift)
	}
}
