package report

import (
	"math"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/store"
)

func TestParseFolded(t *testing.T) {
	f, err := ParseFolded([]byte("main;a;b 3\nmain;b;a;b 2\nmain 1\n\n[no stack] 4\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Samples != 10 {
		t.Errorf("samples %d, want 10", f.Samples)
	}
	for fn, want := range map[string]int64{"b": 5, "main": 1, "a": 0, "[no stack]": 4} {
		if f.Self[fn] != want {
			t.Errorf("self %s = %d, want %d", fn, f.Self[fn], want)
		}
	}
	// Total: once per stack, whatever the recursion.
	for fn, want := range map[string]int64{"main": 6, "a": 5, "b": 5, "[no stack]": 4} {
		if f.Total[fn] != want {
			t.Errorf("total %s = %d, want %d", fn, f.Total[fn], want)
		}
	}
	for _, bad := range []string{"main;a\n", "main;a x\n", "5\n", "a -1\n"} {
		if _, err := ParseFolded([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// explainRun is a run of one step with the given ops and profiles (role → folded text).
func explainRun(t *testing.T, id int64, step string, ops int64, hz int, profiles map[string]string) store.Run {
	t.Helper()
	st := store.Step{Result: metrics.StepResult{Name: step, Primary: "insert",
		Labels: []metrics.LabelStats{{Label: "insert", Unit: metrics.UnitRows, Rows: ops}}}}
	for role, text := range profiles {
		gz, err := store.CompressFolded([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		st.Profiles = append(st.Profiles, store.StepProfile{Role: role, Event: "cpu-clock", Hz: hz, Folded: gz})
	}
	return store.Run{ID: id, Steps: []store.Step{st}}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestBuildExplain(t *testing.T) {
	// Base: 100 Hz, 1000 ops. insert: main;exec;heap 100 samples = 1 s, main;exec;wal 50.
	// New: 200 Hz, 2000 ops. insert: main;exec;heap 200 = 1 s (same µs/op),
	// main;exec;wal 400 = 2 s, main;exec;lock 100 = 0.5 s (new).
	base := []store.Run{explainRun(t, 1, "l.i0", 1000, 100, map[string]string{
		"insert": "main;exec;heap 100\nmain;exec;wal 50\n",
		"client": "go;send 10\n",
	})}
	neu := []store.Run{explainRun(t, 2, "l.i0", 2000, 200, map[string]string{
		"insert": "main;exec;heap 200\nmain;exec;wal 400\nmain;exec;lock 100\n",
		"client": "go;send 20\n",
	})}
	e, err := BuildExplain(Group{Name: "a", RunIDs: []int64{1}}, Group{Name: "b", RunIDs: []int64{2}}, base, neu, ExplainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Steps) != 1 || e.Steps[0].Step != "l.i0" || e.Steps[0].BaseOps != 1000 || e.Steps[0].NewOps != 2000 {
		t.Fatalf("steps %+v", e.Steps)
	}
	roles := e.Steps[0].Roles
	// Largest change first: insert +250, client -50.
	if len(roles) != 2 || roles[0].Role != "insert" || roles[1].Role != "client" {
		t.Fatalf("roles %+v", roles)
	}
	// client: 0.1 s / 1000 ops = 100 µs/op; 0.1 s / 2000 = 50 µs/op.
	if c := roles[1]; !near(c.Base, 100) || !near(c.New, 50) || !near(c.Delta, -50) {
		t.Errorf("client %+v", c)
	}
	ins := roles[0]
	// insert: 1.5 s / 1000 = 1500 µs/op; 3.5 s / 2000 = 1750.
	if !near(ins.Base, 1500) || !near(ins.New, 1750) || !near(ins.Delta, 250) || ins.BaseSamples != 150 || ins.NewSamples != 700 {
		t.Errorf("insert %+v", ins)
	}
	// Self, ranked by |Δ|: lock +250 (new: no %), wal 500 → 1000 = +500, heap 1000 → 500 =
	// -500: changes larger than the role's (+250), which offset each other, have no share.
	want := []FunctionChange{
		{Function: "heap", Base: 1000, New: 500, Delta: -500, Pct: -50, Share: math.NaN()},
		{Function: "wal", Base: 500, New: 1000, Delta: 500, Pct: 100, Share: math.NaN()},
		{Function: "lock", Base: 0, New: 250, Delta: 250, Pct: math.NaN(), Share: 1},
	}
	checkChanges(t, "self", ins.Self, want)
	// Total: a leaf's total is its self here; main and exec, on every stack of both
	// configs, only repeat the role's line and are left out.
	checkChanges(t, "total", ins.Total, []FunctionChange{want[0], want[1], want[2]})
	if len(ins.Total) != 3 {
		t.Errorf("total has %d functions, want 3", len(ins.Total))
	}

	// --top, --role and --step.
	e, err = BuildExplain(Group{Name: "a"}, Group{Name: "b"}, base, neu, ExplainOptions{Role: "insert", Top: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.Steps[0].Roles; len(r) != 1 || r[0].Role != "insert" || len(r[0].Self) != 1 || r[0].Self[0].Function != "heap" {
		t.Errorf("--role insert --top 1: %+v", r)
	}
	if _, err := BuildExplain(Group{Name: "a"}, Group{Name: "b"}, base, neu, ExplainOptions{Step: "qp100"}); err == nil || !strings.Contains(err.Error(), "step qp100") {
		t.Errorf("--step qp100: %v", err)
	}
}

// TestBuildExplainGroups: a config of several runs sums their CPU and their operations;
// a run whose step has no profile counts neither; a step profiled on one side only is left out.
func TestBuildExplainGroups(t *testing.T) {
	base := []store.Run{
		explainRun(t, 1, "l.i0", 1000, 100, map[string]string{"insert": "main;f 100\n"}),
		explainRun(t, 2, "l.i0", 3000, 100, map[string]string{"insert": "main;f 100\nmain;g 200\n"}),
		explainRun(t, 3, "l.i0", 99999, 100, nil),
		explainRun(t, 4, "qp100", 10, 100, map[string]string{"query": "main;q 1\n"}),
	}
	neu := []store.Run{explainRun(t, 5, "l.i0", 1000, 100, map[string]string{"insert": "main;f 100\n"})}
	e, err := BuildExplain(Group{Name: "a"}, Group{Name: "b"}, base, neu, ExplainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Steps) != 1 || e.Steps[0].BaseOps != 4000 {
		t.Fatalf("steps %+v", e.Steps)
	}
	// Base: 4 s / 4000 ops = 1000 µs/op; f 2 s → 500, g 2 s → 500. New: f 1000.
	ins := e.Steps[0].Roles[0]
	if !near(ins.Base, 1000) || !near(ins.New, 1000) || ins.Delta != 0 {
		t.Errorf("insert %+v", ins)
	}
	checkChanges(t, "self", ins.Self, []FunctionChange{
		{Function: "f", Base: 500, New: 1000, Delta: 500, Pct: 100, Share: math.NaN()},
		{Function: "g", Base: 500, New: 0, Delta: -500, Pct: -100, Share: math.NaN()},
	})
}

func checkChanges(t *testing.T, kind string, got, want []FunctionChange) {
	t.Helper()
	eq := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || near(a, b) }
	if len(got) < len(want) {
		t.Fatalf("%s: %+v, want %+v", kind, got, want)
	}
	for i, w := range want {
		g := got[i]
		if g.Function != w.Function || !eq(g.Base, w.Base) || !eq(g.New, w.New) || !eq(g.Delta, w.Delta) || !eq(g.Pct, w.Pct) || !eq(g.Share, w.Share) {
			t.Errorf("%s %d: %+v, want %+v", kind, i, g, w)
		}
	}
}

// TestExplainNoise: a function whose samples per operation grew tenfold is beyond the
// noise of sampling; one with a few samples more is within it, and so is a role whose
// samples per op are the same at twice the operations.
func TestExplainNoise(t *testing.T) {
	base := []store.Run{explainRun(t, 1, "l.i0", 1000, 100, map[string]string{
		"insert": "main;hot 20\nmain;warm 10\nmain;cold 500\n",
		"client": "go;send 100\n",
	})}
	neu := []store.Run{explainRun(t, 2, "l.i0", 2000, 100, map[string]string{
		"insert": "main;hot 400\nmain;warm 26\nmain;cold 1000\n",
		"client": "go;send 202\n",
	})}
	e, err := BuildExplain(Group{Name: "a", RunIDs: []int64{1}}, Group{Name: "b", RunIDs: []int64{2}}, base, neu, ExplainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	beyond := map[string]bool{}
	for _, r := range e.Steps[0].Roles {
		beyond[r.Role] = r.Beyond
		for _, f := range r.Self {
			beyond[r.Role+"/"+f.Function] = f.Beyond
			if f.P < 0 || f.P > 1 || f.BaseSamples+f.NewSamples == 0 {
				t.Errorf("%s %s: p %g, samples %d → %d", r.Role, f.Function, f.P, f.BaseSamples, f.NewSamples)
			}
		}
	}
	want := map[string]bool{"insert": true, "insert/hot": true, "insert/warm": false, "insert/cold": false,
		"client": false, "client/send": false}
	for k, w := range want {
		if beyond[k] != w {
			t.Errorf("%s beyond noise: %v, want %v", k, beyond[k], w)
		}
	}
}

// TestExplainBuilds: where the two configs profiled different builds of a role's code, a
// function with samples in one config only, or ten times the CPU per op in one, is marked
// as the builds' symbols (no % change) rather than called new, vanished or +4000%; the
// same figures between runs of one build are changes. No share is beyond ±100% of the
// role's change.
func TestExplainBuilds(t *testing.T) {
	run := func(id int64, version, folded string) store.Run {
		r := explainRun(t, id, "qp100", 1000, 100, map[string]string{"query": folded, "client": "go;send 10\n"})
		r.Engine, r.EngineVersion = "postgres", version
		r.Env = map[string]string{"dbperf_version": "v1", "server_processes": "managed server: pid 1 and its children"}
		return r
	}
	// 13: internal_flush has its own frames (1 sample of 100); 14 inlines pq_flush into
	// it (41), exec_simple is renamed exec_simple_query, heap is the same, lock grows 3×.
	// The kernel's functions and frames that did not unwind are no build's symbols.
	base := "main;exec_simple;internal_flush 1\nmain;exec_simple;pq_flush 40\nmain;exec_simple;heap 50\nmain;exec_simple;lock 9\n" +
		"[unknown];[unknown] 30\nmain;exec_simple;read_[k] 20\n"
	neu := "main;exec_simple_query;internal_flush 41\nmain;exec_simple_query;heap 50\nmain;exec_simple_query;lock 27\n" +
		"main;exec_simple_query;write_[k] 5\n"
	for _, tc := range []struct {
		name       string
		bv, nv     string
		wantBuild  map[string]string // function (self) → its mark
		wantBuilds [2]string
	}{
		{"13 vs 14", "13.23", "14.24", map[string]string{
			"internal_flush": "×41 in b's build: inlined elsewhere or renamed?",
			"pq_flush":       "only in a's build: inlined or renamed?",
			"heap":           "", "lock": "", "[unknown]": "", "read_[k]": "", "write_[k]": "",
		}, [2]string{"postgres 13.23", "postgres 14.24"}},
		{"one build", "15.18", "15.18", map[string]string{"internal_flush": "", "pq_flush": "", "heap": "", "lock": ""}, [2]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := BuildExplain(Group{Name: "a", RunIDs: []int64{1}}, Group{Name: "b", RunIDs: []int64{2}},
				[]store.Run{run(1, tc.bv, base)}, []store.Run{run(2, tc.nv, neu)}, ExplainOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range e.Steps[0].Roles {
				if r.Role == "client" {
					if r.Builds != [2]string{} {
						t.Errorf("client: builds %q (one dbperf, not embedded)", r.Builds)
					}
					continue
				}
				if r.Builds != tc.wantBuilds {
					t.Errorf("query: builds %q, want %q", r.Builds, tc.wantBuilds)
				}
				got := map[string]string{}
				for _, f := range r.Self {
					got[f.Function] = f.Build
					if f.Build != "" && !math.IsNaN(f.Pct) {
						t.Errorf("%s: %% change %v beside %q", f.Function, f.Pct, f.Build)
					}
				}
				for fn, want := range tc.wantBuild {
					if g, ok := got[fn]; !ok || g != want {
						t.Errorf("self %s: build %q, want %q", fn, g, want)
					}
				}
				for _, f := range append(r.Self, r.Total...) {
					if math.Abs(f.Share) > 1 {
						t.Errorf("%s: share %v beyond the role's change", f.Function, f.Share)
					}
				}
				// The renamed caller: only in one build each, in the total view.
				for _, f := range r.Total {
					if f.Function == "exec_simple" && tc.wantBuilds != [2]string{} && f.Build != "only in a's build: inlined or renamed?" {
						t.Errorf("total exec_simple: %q", f.Build)
					}
				}
			}
		})
	}
}

func TestShareOf(t *testing.T) {
	for _, tc := range []struct{ delta, role, want float64 }{
		{5, 10, 0.5}, {-3, 10, -0.3}, {10, 10, 1}, {10 * (1 + 1e-12), 10, 1}, {75, 1, math.NaN()}, {-20, 10, math.NaN()},
	} {
		if got := shareOf(tc.delta, tc.role); !(got == tc.want || math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("shareOf(%v, %v) = %v, want %v", tc.delta, tc.role, got, tc.want)
		}
	}
}
