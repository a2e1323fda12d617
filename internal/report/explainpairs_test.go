package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/store"
)

// sweepRuns makes a config's runs of a sweep: per block one run of step l.i1 with 1000
// operations sampled at 1000 Hz, role insert holding heap_insert (µs/op ≈ heap) and,
// when extra > 0, pglz_compress (≈ extra µs/op), each with the block's own drift (shared
// by both configs: drift[b]) and a little noise of its own.
func sweepRuns(t *testing.T, id0 int64, heap, extra float64, drift []float64, rng *rand.Rand) []store.Run {
	t.Helper()
	var out []store.Run
	for b, d := range drift {
		// 1000 ops at 1000 Hz: a sample is 1 ms of CPU, 1 µs per op.
		h := int(math.Round(heap * d * (1 + 0.01*rng.NormFloat64())))
		folded := fmt.Sprintf("main;ExecInsert;heap_insert %d\n", h)
		if extra > 0 {
			folded += fmt.Sprintf("main;XLogInsert;pglz_compress %d\n", int(math.Round(extra*d*(1+0.02*rng.NormFloat64()))))
		}
		r := explainRun(t, id0+int64(b), "l.i1", 1000, 1000, map[string]string{"insert": folded})
		r.Params = map[string]any{"sweep": "s", "trial": fmt.Sprintf("b%d/s1", b+1)}
		out = append(out, r)
	}
	return out
}

// The paired intervals across blocks find a function that costs more in every block
// despite the blocks' drift (±15%, shared by both configs), name it as what explains its
// role's change, and call nothing changed in an A/A; unpaired runs (no trials) still get
// an interval, wider.
func TestExplainIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	drift := make([]float64, 12)
	for i := range drift {
		drift[i] = 1 + 0.15*rng.NormFloat64()
	}
	base := sweepRuns(t, 1, 400, 0, drift, rng)
	neu := sweepRuns(t, 100, 400, 40, drift, rng)
	aa := sweepRuns(t, 200, 400, 0, drift, rng)
	o := ExplainOptions{Top: 5}
	e, err := BuildExplain(Group{Name: "off"}, Group{Name: "pglz"}, base, neu, o)
	if err != nil {
		t.Fatal(err)
	}
	r := e.Steps[0].Roles[0]
	if r.Role != "insert" || !r.Paired || r.Units != 12 || !r.Changed || !(r.Shift.Lo > 0) {
		t.Fatalf("role %s paired %v units %d changed %v shift %+v", r.Role, r.Paired, r.Units, r.Changed, r.Shift)
	}
	if len(r.ExplainedBy) != 1 || r.ExplainedBy[0] != "pglz_compress" || math.Abs(r.Explained-1) > 0.2 {
		t.Errorf("explained %.2f by %v, want about all of it by pglz_compress", r.Explained, r.ExplainedBy)
	}
	if len(e.Summary) != 1 || !strings.Contains(e.Summary[0].Text, "l.i1") ||
		!strings.Contains(e.Summary[0].Text, "l.i1: the insert role's CPU per op +") || !strings.Contains(e.Summary[0].Text, "of it in pglz_compress") {
		t.Errorf("summary %+v", e.Summary)
	}
	for _, f := range r.Self {
		want := f.Function == "pglz_compress"
		if f.Changed != want {
			t.Errorf("self %s: changed %v (shift %+v)", f.Function, f.Changed, f.Shift)
		}
	}
	e, err = BuildExplain(Group{Name: "a"}, Group{Name: "b"}, base, aa, o)
	if err != nil {
		t.Fatal(err)
	}
	r = e.Steps[0].Roles[0]
	if len(e.Summary) != 0 {
		t.Errorf("A/A summary %+v", e.Summary)
	}
	if r.Changed || len(r.ExplainedBy) > 0 {
		t.Errorf("A/A: role changed %v (shift %+v), explained by %v", r.Changed, r.Shift, r.ExplainedBy)
	}
	for _, f := range append(r.Self, r.Total...) {
		if f.Changed {
			t.Errorf("A/A: %s called changed (shift %+v)", f.Function, f.Shift)
		}
	}
	// Without trials each run is a unit of its own, unpaired: the blocks' drift is then
	// in the interval.
	for i := range base {
		base[i].Params, neu[i].Params = nil, nil
	}
	e, err = BuildExplain(Group{Name: "off"}, Group{Name: "pglz"}, base, neu, o)
	if err != nil {
		t.Fatal(err)
	}
	r = e.Steps[0].Roles[0]
	if r.Paired || r.Units != 12 || !r.Shift.HasCI {
		t.Errorf("unpaired: paired %v units %d shift %+v", r.Paired, r.Units, r.Shift)
	}
}

// A change spread over many leaves (a logging path: no leaf is 2% of the role) is
// explained by none of them, but lies under one changed function by total CPU, which
// the role's line names; main, on every stack, is not it.
func TestExplainBeneath(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var base, neu []store.Run
	for b := range 12 {
		d := 1 + 0.1*rng.NormFloat64()
		fb := fmt.Sprintf("main;exec;scan %d\n", int(400*d*(1+0.01*rng.NormFloat64())))
		fn := fmt.Sprintf("main;exec;scan %d\n", int(400*d*(1+0.01*rng.NormFloat64())))
		for k := range 20 {
			fn += fmt.Sprintf("main;exec;errfinish;leaf%d %d\n", k, int(3*d*(1+0.2*rng.NormFloat64()))+1)
		}
		rb := explainRun(t, int64(b+1), "qp100", 1000, 1000, map[string]string{"query": fb})
		rn := explainRun(t, int64(b+100), "qp100", 1000, 1000, map[string]string{"query": fn})
		rb.Params = map[string]any{"sweep": "s", "trial": fmt.Sprintf("b%d/s1", b+1)}
		rn.Params = map[string]any{"sweep": "s", "trial": fmt.Sprintf("b%d/s1", b+1)}
		base, neu = append(base, rb), append(neu, rn)
	}
	e, err := BuildExplain(Group{Name: "base"}, Group{Name: "logall"}, base, neu, ExplainOptions{Top: 5})
	if err != nil {
		t.Fatal(err)
	}
	r := e.Steps[0].Roles[0]
	if !r.Changed || len(r.ExplainedBy) != 0 || r.Beneath != "errfinish" || !(r.BeneathFraction > 0.8) {
		t.Errorf("changed %v, explained by %v, beneath %q %.2f", r.Changed, r.ExplainedBy, r.Beneath, r.BeneathFraction)
	}
	if len(e.Summary) != 1 || !strings.Contains(e.Summary[0].Text, "of it under errfinish") {
		t.Errorf("summary %+v", e.Summary)
	}
}

// A role whose CPU per op doubles in every block but is a sliver of the step's (a
// background writer's few µs against the queries' hundreds) is no finding: its change
// cannot move the step's CPU per operation by the threshold. The same doubling of a
// role that carries the step is one.
func TestExplainRoleTooSmallToMatter(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	runs := func(id0 int64, deleteSamples int) []store.Run {
		var out []store.Run
		for b := range 12 {
			r := explainRun(t, id0+int64(b), "qp100", 1000, 1000, map[string]string{
				"query":  fmt.Sprintf("main;exec_simple_query;PortalRun %d\n", 400+rng.IntN(8)),
				"delete": fmt.Sprintf("main;ExecDelete;heap_delete %d\n", deleteSamples+rng.IntN(2)),
			})
			r.Params = map[string]any{"sweep": "s", "trial": fmt.Sprintf("b%d/s1", b+1)}
			out = append(out, r)
		}
		return out
	}
	e, err := BuildExplain(Group{Name: "a"}, Group{Name: "b"}, runs(1, 3), runs(100, 6), ExplainOptions{Top: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range e.Steps[0].Roles {
		if r.Role == "delete" && (r.Changed || !r.Shift.Excludes0()) {
			t.Errorf("delete: changed %v, interval %+v: want an interval excluding 0 but no finding", r.Changed, r.Shift)
		}
	}
	e, err = BuildExplain(Group{Name: "a"}, Group{Name: "b"}, runs(1, 300), runs(100, 600), ExplainOptions{Top: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range e.Steps[0].Roles {
		if r.Role == "delete" && !r.Changed {
			t.Errorf("delete carrying half the step, doubled: not called changed (%+v)", r.Shift)
		}
	}
}
