package insertbench

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
	"github.com/dbperf/dbperf/internal/workload/workloadtest"
)

// testCfg is a run's shared configuration and the Insert Benchmark's parameters.
type testCfg struct {
	*config.Run
	InsertBench *Params
}

// testConfig is a tiny, valid run configuration. Its WorkDir stands for a kept database,
// so that steps without l.i0 may be planned.
func testConfig(t testing.TB, clients int, steps ...string) *testCfg {
	t.Helper()
	ib, err := Preset("tiny", clients)
	if err != nil {
		t.Fatal(err)
	}
	ib.Rows, ib.Rows2 = 1000, 500
	ib.Time = 2 * time.Second
	ib.CleanupWait = 3 * time.Second
	return &testCfg{
		Run:         &config.Run{Workload: Name, Engine: "sqlite", Clients: clients, Seed: 42, Steps: steps, WorkDir: t.TempDir()},
		InsertBench: ib,
	}
}

// planOf plans cfg (nil: no configuration at all).
func planOf(cfg *testCfg) ([]workload.Step, error) {
	if cfg == nil {
		return New().Plan(nil, &Params{})
	}
	return New().Plan(cfg.Run, cfg.InsertBench)
}

func mustPlan(t *testing.T, cfg *testCfg) []workload.Step {
	t.Helper()
	steps, err := planOf(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

func TestMeta(t *testing.T) {
	m := New().Meta()
	want := []string{"l.i0", "l.x", "l.i1", "l.i2", "cleanup", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"}
	if m.Name != "insertbench" || m.Version != 1 || m.Kind != engine.KindSQL || !slices.Equal(m.Steps, want) {
		t.Fatalf("Meta() = %+v", m)
	}
}

// Every step is in a declared group (the cleanup in none), and the read-write steps carry
// their rate as a number.
func TestStepGroupsAndRates(t *testing.T) {
	groups := map[string]bool{}
	for _, g := range New().Meta().Groups {
		groups[g.Name] = true
	}
	want := map[string]string{"l.i0": "write", "l.x": "write", "l.i1": "write", "l.i2": "write", "cleanup": "",
		"qr100": "range", "qp100": "point", "qr500": "range", "qp500": "point", "qr1000": "range", "qp1000": "point"}
	for _, s := range mustPlan(t, testConfig(t, 1)) {
		if g := s.Group(); g != want[s.Name()] || (g != "" && !groups[g]) {
			t.Errorf("%s: group %q, want %q (declared: %v)", s.Name(), g, want[s.Name()], groups)
		}
		if rw, ok := s.(*rwStep); ok {
			if r := strconv.Itoa(rw.rate); s.Name()[2:] != r || rw.point != (s.Name()[:2] == "qp") {
				t.Errorf("%s: rate %d point %v", s.Name(), rw.rate, rw.point)
			}
		}
	}
}

func TestPlanStepSelection(t *testing.T) {
	all := New().Meta().Steps
	tests := []struct {
		steps []string
		want  []string
	}{
		{nil, all},
		{[]string{"l.i0"}, []string{"l.i0"}},
		{[]string{"qr100", "l.i0", "l.x"}, []string{"l.i0", "l.x", "qr100"}}, // spec order
		{[]string{"qp1000", "cleanup", "l.i2"}, []string{"l.i2", "cleanup", "qp1000"}},
	}
	for _, tc := range tests {
		if got := workloadtest.Names(mustPlan(t, testConfig(t, 1, tc.steps...))); !slices.Equal(got, tc.want) {
			t.Errorf("steps %v: planned %v, want %v", tc.steps, got, tc.want)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*testCfg)
		want   []string
	}{
		{"nil", nil, []string{"no configuration"}},
		{"unknown step", func(c *testCfg) { c.Steps = []string{"l.i0", "qr200"} }, []string{`unknown step "qr200"`}},
		{"twice", func(c *testCfg) { c.Steps = []string{"l.x", "l.x"} }, []string{`"l.x" is listed twice`}},
		{"rows", func(c *testCfg) { c.InsertBench.Rows = 0 }, []string{"rows must be at least 1"}},
		{"rows not needed", func(c *testCfg) { c.InsertBench.Rows = 0; c.Steps = []string{"qr100"} }, nil},
		{"time", func(c *testCfg) { c.InsertBench.Time = 0 }, []string{"--time must be a positive number of seconds"}},
		{"rpc", func(c *testCfg) {
			c.InsertBench.RowsPerCommit = map[string]int{"l.i1": 0, "l.x": 5, "bogus": 1}
		}, []string{"--rows-per-commit l.i1=0: rows per commit must be at least 1", "step l.x inserts no rows", `unknown step "bogus"`}},
		{"rpc of a step not run", func(c *testCfg) {
			c.Steps = []string{"l.i0"}
			c.InsertBench.RowsPerCommit = map[string]int{"l.i1": 10}
		}, []string{"--rows-per-commit l.i1=10: l.i1 is not in --steps l.i0"}},
		{"fresh database without l.i0", func(c *testCfg) { c.WorkDir = ""; c.Steps = []string{"qp100"} },
			[]string{"--steps qp100 needs the tables l.i0 creates"}},
		{"kept database without l.i0", func(c *testCfg) { c.Steps = []string{"qp100"} }, nil},
		{"range queries without l.x", func(c *testCfg) { c.Steps = []string{"l.i0", "qr100"} },
			[]string{"--steps: qr100 queries the secondary indexes that l.x creates"}},
		{"point queries without l.x", func(c *testCfg) { c.Steps = []string{"l.i0", "qp100"} }, nil},
		{"shape", func(c *testCfg) {
			c.InsertBench.Products = 0
			c.InsertBench.DataLengthMax = 5000
			c.InsertBench.DataRandomPct = 101
		}, []string{"products must be at least 1", "data length range 10..5000", "random percentage"}},
	}
	for _, tc := range tests {
		var cfg *testCfg
		if tc.mutate != nil {
			cfg = testConfig(t, 1)
			tc.mutate(cfg)
		}
		_, err := planOf(cfg)
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tc.name, err, w)
			}
		}
	}
}

// groupShape is what a plan test checks of a group.
type groupShape struct {
	label, role string
	unit        workload.Unit
	workers     int
	rate        float64
	rowsPerOp   int
	target      float64
	background  bool
	untilDone   bool
}

func shapeOf(g workload.Group) groupShape {
	return groupShape{g.Label, g.Role, g.Unit, len(g.Workers), g.Rate, g.RowsPerOp, g.TargetPerSec(), g.Background, g.UntilDone}
}

func TestPlanLoads(t *testing.T) {
	const clients = 3
	type want struct {
		kind, primary string
		groups        []groupShape
		dur, minDur   time.Duration
	}
	ins := func(n int) groupShape { return groupShape{"insert", "insert", "rows", n, 0, 0, 0, false, true} }
	del := func(n int) groupShape { return groupShape{"delete", "delete", "rows", n, 0, 0, 0, false, true} }
	rw := func(query string, rate float64, rpc int) []groupShape {
		return []groupShape{
			{query, "query", "ops", clients, 0, 0, 0, false, false},
			{"insert", "insert", "rows", clients, rate, rpc, rate * float64(rpc) * clients, true, false},
			{"delete", "delete", "rows", clients, rate, rpc, rate * float64(rpc) * clients, true, false},
		}
	}
	wants := map[string]want{
		"l.i0":    {"load", "insert", []groupShape{ins(clients)}, 0, 0},
		"l.x":     {"load", "index", []groupShape{{"index", "index", "rows", clients, 0, 0, 0, false, true}}, 0, 0},
		"l.i1":    {"load", "insert", []groupShape{ins(clients), del(clients)}, 0, 0},
		"l.i2":    {"load", "insert", []groupShape{ins(clients), del(clients)}, 0, 0},
		"cleanup": {"cleanup", "cleanup", []groupShape{{"cleanup", "cleanup", "ops", 1, 0, 0, 0, false, true}}, 0, 3 * time.Second},
		"qr100":   {"read-write", "range-query", rw("range-query", 2, 50), 2 * time.Second, 0},
		"qp100":   {"read-write", "point-query", rw("point-query", 2, 50), 2 * time.Second, 0},
		"qr500":   {"read-write", "range-query", rw("range-query", 10, 50), 2 * time.Second, 0},
		"qp500":   {"read-write", "point-query", rw("point-query", 10, 50), 2 * time.Second, 0},
		"qr1000":  {"read-write", "range-query", rw("range-query", 20, 50), 2 * time.Second, 0},
		"qp1000":  {"read-write", "point-query", rw("point-query", 20, 50), 2 * time.Second, 0},
	}
	for _, s := range mustPlan(t, testConfig(t, clients)) {
		w := wants[s.Name()]
		l := workloadtest.Load(t, s)
		var got []groupShape
		for _, g := range l.Groups {
			got = append(got, shapeOf(g))
		}
		if l.Kind != w.kind || l.Primary != w.primary || l.Duration != w.dur || l.MinDuration != w.minDur {
			t.Errorf("%s: kind %q primary %q duration %s min %s, want %q %q %s %s",
				s.Name(), l.Kind, l.Primary, l.Duration, l.MinDuration, w.kind, w.primary, w.dur, w.minDur)
		}
		if !slices.Equal(got, w.groups) {
			t.Errorf("%s groups:\n got %+v\nwant %+v", s.Name(), got, w.groups)
		}
		if rwStep, ok := s.(*rwStep); ok {
			ins := l.Groups[1]
			if target := ins.TargetPerSec(); target != float64(rwStep.rate*clients) {
				t.Errorf("%s: insert target %g rows/s, want %d", s.Name(), target, rwStep.rate*clients)
			}
		}
	}
}

// Quotas and rows per commit of the insert actors, with and without overrides.
func TestPlanQuotasAndRPC(t *testing.T) {
	cfg := testConfig(t, 2)
	cfg.InsertBench.Rows, cfg.InsertBench.Rows2 = 1234, 1003
	type qr struct {
		quota int64
		rpc   int
		tail  int
	}
	check := func(cfg *testCfg, want map[string]qr) {
		t.Helper()
		for _, s := range mustPlan(t, cfg) {
			w, ok := want[s.Name()]
			if !ok {
				continue
			}
			for _, g := range workloadtest.Load(t, s).Groups {
				for _, wk := range g.Workers {
					switch a := wk.(type) {
					case *inserter:
						if got := (qr{a.quota, a.rpc, a.tailRows}); got != w {
							t.Errorf("%s inserter: %+v, want %+v", s.Name(), got, w)
						}
					case *deleter:
						if a.rpc != w.rpc {
							t.Errorf("%s deleter: rpc %d, want %d", s.Name(), a.rpc, w.rpc)
						}
					}
				}
			}
		}
	}
	check(cfg, map[string]qr{
		"l.i0":   {1234, 100, 34},
		"l.i1":   {802, 50, 2}, // round(1003·4/5) = 802
		"l.i2":   {201, 5, 1},  // 1003 − 802
		"qr100":  {0, 50, 0},
		"qp1000": {0, 50, 0},
	})
	cfg.InsertBench.RowsPerCommit = map[string]int{"l.i0": 1000, "l.i1": 20, "qr100": 200, "qp1000": 7}
	check(cfg, map[string]qr{
		"l.i0":   {1234, 1000, 234},
		"l.i1":   {802, 20, 2},
		"l.i2":   {201, 5, 1},
		"qr100":  {0, 100, 0}, // rpc > rate → rpc = rate (reference §1.4)
		"qp1000": {0, 7, 0},
	})
	for _, s := range mustPlan(t, cfg) {
		if s.Name() == "qr100" {
			if g := workloadtest.Load(t, s).Groups[1]; g.Rate != 1 || g.TargetPerSec() != 200 {
				t.Errorf("qr100 with rpc 100: rate %g target %g", g.Rate, g.TargetPerSec())
			}
		}
		if s.Name() == "qp1000" {
			if g := workloadtest.Load(t, s).Groups[1]; g.TargetPerSec() < 1999.99 || g.TargetPerSec() > 2000.01 {
				t.Errorf("qp1000 with rpc 7: target %g", g.TargetPerSec())
			}
		}
	}
	if _, ok := cfg.InsertBench.RowsPerCommit["l.i2"]; ok {
		t.Error("Plan changed the caller's RowsPerCommit")
	}
}

func TestPlanWithoutDeletes(t *testing.T) {
	cfg := testConfig(t, 2)
	cfg.InsertBench.Delete = false
	for _, s := range mustPlan(t, cfg) {
		for _, g := range workloadtest.Load(t, s).Groups {
			if g.Label == labelDelete {
				t.Errorf("%s has a delete group with deletes off", s.Name())
			}
		}
	}
}

// Plan shares one state between the steps, and separate plans share nothing.
func TestPlanSharedState(t *testing.T) {
	a := mustPlan(t, testConfig(t, 2))
	b := mustPlan(t, testConfig(t, 2))
	pa := a[0].(*writeStep).p
	for _, s := range a {
		if base := stepOf(s); base.p != pa {
			t.Errorf("%s has its own plan state", s.Name())
		}
	}
	if b[0].(*writeStep).p == pa {
		t.Error("two plans share state")
	}
	if !slices.Equal(pa.tables, []string{"pi1", "pi2"}) {
		t.Errorf("tables %v", pa.tables)
	}
}

func stepOf(s workload.Step) *stepBase {
	switch v := s.(type) {
	case *writeStep:
		return &v.stepBase
	case *indexStep:
		return &v.stepBase
	case *workload.CleanupStep:
		return v.StepCore.(*stepBase)
	case *rwStep:
		return &v.stepBase
	}
	return nil
}
