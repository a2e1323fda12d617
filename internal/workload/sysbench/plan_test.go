package sysbench

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/sqlite"
	"github.com/dbperf/dbperf/internal/workload"
)

// resolve parses args as `dbperf run sysbench` would (the suite's flags, and the shared
// --clients, --steps, --time, --scale into cfg) and resolves the parameters.
func resolve(t *testing.T, cfg *config.Run, args ...string) (*Params, error) {
	t.Helper()
	fs := pflag.NewFlagSet("sysbench", pflag.ContinueOnError)
	p := New().NewParams().(*Params)
	p.AddFlags(fs)
	fs.IntVar(&cfg.Clients, "clients", 1, "")
	fs.StringSliceVar(&cfg.Steps, "steps", nil, "")
	fs.StringVar(&cfg.Scale, "scale", "tiny", "")
	var secs float64
	fs.Float64Var(&secs, "time", 0, "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	cfg.Time = time.Duration(secs * float64(time.Second))
	return p, p.Resolve(cfg, fs.Changed)
}

func mustResolve(t *testing.T, args ...string) (*config.Run, *Params) {
	t.Helper()
	cfg := &config.Run{Seed: 7}
	p, err := resolve(t, cfg, args...)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, p
}

func planSteps(t *testing.T, args ...string) []workload.Step {
	t.Helper()
	cfg, p := mustResolve(t, args...)
	steps, err := New().Plan(cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

func names(steps []workload.Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Name())
	}
	return out
}

// referenceOrder is §3.4's sequence with the catalogue's ranges, one thread count.
var referenceOrder = []string{
	"load", "point-query.warm", "cleanup.load", "scan.warmpre", "point-query.pre", "range-notcovered-si.pre",
	"update-inlist", "update-index", "update-nonindex", "update-one", "update-zipf",
	"write-only", "read-write.range=10", "read-write.range=100", "cleanup.read-write",
	"scan.warm", "scan", "read-only.range=10", "read-only.range=100", "read-only.range=10000",
	"read-only-simple.range=1000", "read-only-sum.range=1000", "read-only-order.range=1000",
	"read-only-distinct.range=1000", "read-only-count.range=1000",
	"point-query", "random-points.range=10", "random-points.range=100", "random-points.range=1000", "hot-points",
	"points-covered-pk", "points-notcovered-pk", "range-covered-pk", "range-notcovered-pk",
	"points-covered-si.warm", "points-covered-si", "points-notcovered-si", "range-covered-si", "range-notcovered-si",
	"delete", "insert",
}

func TestPlanNamesAndOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"everything, §3.4's order", nil, referenceOrder},
		{"--tests keeps §3.4's order and adds the load and its cleanup",
			[]string{"--tests", "insert,point-query,scan.warm,read-only-count"},
			[]string{"load", "cleanup.load", "scan.warm", "read-only-count.range=1000", "point-query", "insert"}},
		{"--tests read-write brings its cleanup",
			[]string{"--tests", "read-write"},
			[]string{"load", "cleanup.load", "read-write.range=10", "read-write.range=100", "cleanup.read-write"}},
		{"a list of thread counts: each test at each count, test-major",
			[]string{"--tests", "point-query,read-write", "--threads", "1,4,16"},
			[]string{"load", "cleanup.load",
				"read-write.range=10.t1", "read-write.range=10.t4", "read-write.range=10.t16",
				"read-write.range=100.t1", "read-write.range=100.t4", "read-write.range=100.t16", "cleanup.read-write",
				"point-query.t1", "point-query.t4", "point-query.t16"}},
		{"--clients N is --threads N: no suffix",
			[]string{"--tests", "point-query", "--clients", "8"},
			[]string{"load", "cleanup.load", "point-query"}},
		{"--range-size replaces the catalogue's ranges",
			[]string{"--tests", "random-points,read-only,read-write,range-covered-pk,write-only", "--range-size", "50"},
			[]string{"load", "cleanup.load", "write-only", "read-write.range=50", "cleanup.read-write",
				"read-only.range=50", "random-points.range=50", "range-covered-pk"}},
		{"--steps picks exact steps, in §3.4's order",
			[]string{"--steps", "insert,load,read-only.range=100"},
			[]string{"load", "read-only.range=100", "insert"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(planSteps(t, tc.args...)); !slices.Equal(got, tc.want) {
				t.Errorf("steps:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
	if got := New().Meta().Steps; !slices.Equal(got, referenceOrder) {
		t.Errorf("Meta().Steps = %q", got)
	}
}

func TestValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		cfg  config.Run
		want []string // one line each, in order
	}{
		{"unknown test", []string{"--tests", "point-query,point-querie"}, config.Run{},
			[]string{`--tests: unknown test "point-querie": sysbench has point-query.warm,scan.warmpre,point-query.pre,`}},
		{"test twice", []string{"--tests", "scan,scan"}, config.Run{}, []string{"--tests: scan is listed twice"}},
		{"unknown step names the valid ones", []string{"--steps", "load,read-only"}, config.Run{},
			[]string{`--steps: unknown step "read-only": with these --threads and --range-size, sysbench has load,point-query.warm,cleanup.load,`}},
		{"step names follow the thread counts", []string{"--steps", "load,point-query", "--threads", "1,2"}, config.Run{},
			[]string{`--steps: unknown step "point-query": with these --threads and --range-size, sysbench has load,point-query.warm.t1,point-query.warm.t2,`}},
		{"both selections", []string{"--tests", "scan", "--steps", "load"}, config.Run{},
			[]string{"--tests and --steps both given: --tests picks tests (with the load), --steps exact step names; give one"}},
		{"fresh database without the load", []string{"--steps", "point-query"}, config.Run{},
			[]string{"--steps point-query needs the tables the load step creates: add load to --steps, or pass --workdir DIR"}},
		{"a kept database may skip the load", []string{"--steps", "point-query"}, config.Run{WorkDir: "/kept"}, nil},
		{"threads and clients", []string{"--threads", "4", "--clients", "4"}, config.Run{},
			[]string{"--threads and --clients both given: --clients 4 is --threads 4; give one"}},
		{"bad thread counts", []string{"--threads", "0,2,2"}, config.Run{},
			[]string{"--threads: every thread count must be at least 1, got 0", "--threads: 2 is listed twice"}},
		{"sizes, times, rate, range", []string{"--tables", "0", "--table-size", "0", "--read-time", "0", "--write-time", "-1",
			"--cleanup-wait", "-2", "--range-size", "0", "--rate", "-5"}, config.Run{},
			[]string{"--tables must be at least 1, got 0",
				"--table-size must be within 1..1073741823 (ids and k are 32-bit INTEGERs), got 0",
				"--read-time must be a positive number of seconds, got 0",
				"--write-time must be a positive number of seconds, got -1",
				"--cleanup-wait must not be negative, got -2",
				"--range-size must be at least 1 (leave it out for the catalogue's ranges)",
				"--rate must be a number of events per second ≥ 0 (0: as fast as they can), got -5"}},
		{"unknown scale", []string{"--scale", "huge"}, config.Run{},
			[]string{`--scale: unknown scale "huge": use one of tiny, small, medium, large`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			_, err := resolve(t, &cfg, tc.args...)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("%d lines, want %d:\n%v", len(lines), len(tc.want), err)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("line %d:\n got %s\nwant %s…", i+1, lines[i], w)
				}
			}
		})
	}
}

func TestResolve(t *testing.T) {
	cfg, p := mustResolve(t, "--scale", "small", "--time", "7", "--write-time", "3", "--threads", "2,8", "--rate", "100", "--prepared=false")
	if p.Tables != 4 || p.TableSize != 100_000 || p.ReadTime != 7*time.Second || p.InsertTime != 7*time.Second ||
		p.WriteTime != 3*time.Second || p.CleanupWait != 10*time.Second || p.Prepared || p.Rate != 100 {
		t.Errorf("params: %+v", p)
	}
	if !slices.Equal(p.Threads, []int{2, 8}) || cfg.Clients != 8 {
		t.Errorf("threads %v, clients %d: the run's clients are the most threads at once", p.Threads, cfg.Clients)
	}
	if p.ReportInterval() != time.Second {
		t.Errorf("report interval %v", p.ReportInterval())
	}
	_, p = mustResolve(t, "--scale", "large")
	if p.Tables != 8 || p.TableSize != 10_000_000 || p.ReadTime != 600*time.Second || p.WriteTime != 900*time.Second ||
		p.CleanupWait != 140*time.Second || p.ReportInterval() != 5*time.Second || !p.Prepared || !slices.Equal(p.Threads, []int{1}) {
		t.Errorf("large: %+v", p)
	}
	if got := p.Stored(); got["table_size"] != int64(10_000_000) || got["scan_warm_time_sec"] != 60.0 || got["zipf_exp"] != 0.8 {
		t.Errorf("stored: %v", got)
	}
}

// dialectOnly is a Handle that only knows its dialect: enough for Load, which composes
// statements but does no I/O.
type dialectOnly struct{ engine.SQL }

func (dialectOnly) Dialect() engine.Dialect { return sqlite.Dialect{} }

// Every step's group, kind, duration, thread count, primary label and statements per
// event (§3.6: 16 per read-only transaction, 20 per read-write, 6 per write-only).
func TestStepLoads(t *testing.T) {
	steps := planSteps(t, "--read-time", "2", "--write-time", "3", "--insert-time", "4", "--threads", "3", "--rate", "30")
	want := map[string]struct {
		group, kind string
		dur         time.Duration
		stmts       int
		unit        workload.Unit
	}{
		"load":                          {"load", "load", 0, 0, workload.UnitRows},
		"cleanup.load":                  {"", "cleanup", 0, 0, workload.UnitOps},
		"point-query.warm":              {"warm-up", "read", 2 * time.Second, 1, workload.UnitOps},
		"scan.warmpre":                  {"warm-up", "read", 2 * time.Second, 1, workload.UnitRows},
		"update-inlist":                 {"write", "write", 3 * time.Second, 1, workload.UnitOps},
		"update-zipf":                   {"write", "write", 3 * time.Second, 1, workload.UnitOps},
		"write-only":                    {"write", "write", 2 * time.Second, 6, workload.UnitOps},
		"read-write.range=100":          {"write", "write", 2 * time.Second, 20, workload.UnitOps},
		"scan":                          {"range", "read", 2 * time.Second, 1, workload.UnitRows},
		"read-only.range=10000":         {"range-agg", "read", 2 * time.Second, 16, workload.UnitOps},
		"read-only-distinct.range=1000": {"range-agg", "read", 2 * time.Second, 13, workload.UnitOps},
		"read-only-count.range=1000":    {"range-agg", "read", 2 * time.Second, 1, workload.UnitOps},
		"hot-points":                    {"point", "read", 2 * time.Second, 1, workload.UnitOps},
		"range-covered-si":              {"range", "read", 2 * time.Second, 1, workload.UnitOps},
		"points-covered-si.warm":        {"warm-up", "read", 2 * time.Second, 1, workload.UnitOps},
		"delete":                        {"write", "write", 3 * time.Second, 1, workload.UnitOps},
		"insert":                        {"write", "write", 4 * time.Second, 1, workload.UnitOps},
	}
	groups := map[string]bool{"": true}
	for _, g := range New().Meta().Groups {
		groups[g.Name] = true
	}
	seen := 0
	for _, s := range steps {
		if !groups[s.Group()] {
			t.Errorf("%s: group %q is not in Meta().Groups", s.Name(), s.Group())
		}
		w, ok := want[s.Name()]
		if !ok {
			continue
		}
		seen++
		l, err := s.Load(context.Background(), dialectOnly{})
		if err != nil {
			t.Fatal(err)
		}
		g := l.Groups[0]
		if s.Group() != w.group || l.Kind != w.kind || l.Duration != w.dur || g.Unit != w.unit {
			t.Errorf("%s: group %q kind %q duration %v unit %s", s.Name(), s.Group(), l.Kind, l.Duration, g.Unit)
		}
		if w.kind == "read" || w.kind == "write" {
			if g.StatementsPerOp != w.stmts || len(g.Workers) != 3 || g.Rate != 10 || g.Role != "query" || l.Primary != g.Label {
				t.Errorf("%s: %d statements per event, %d workers at %v/s, role %s, primary %s of %s",
					s.Name(), g.StatementsPerOp, len(g.Workers), g.Rate, g.Role, l.Primary, g.Label)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("checked %d steps of %d", seen, len(want))
	}
	// The scan warm-ups last the read time, capped at the reference's 60 s.
	for _, s := range planSteps(t, "--tests", "scan.warm,scan", "--read-time", "100") {
		if l, err := s.Load(context.Background(), dialectOnly{}); err == nil && strings.HasPrefix(s.Name(), "scan") {
			want := map[string]time.Duration{"scan.warm": 60 * time.Second, "scan": 100 * time.Second}[s.Name()]
			if l.Duration != want {
				t.Errorf("%s lasts %v, want %v", s.Name(), l.Duration, want)
			}
		}
	}
}

func TestPlanRejectsOtherParams(t *testing.T) {
	if _, err := New().Plan(&config.Run{}, nil); err == nil {
		t.Error("nil params accepted")
	}
	if _, err := New().Plan(nil, &Params{}); err == nil {
		t.Error("nil config accepted")
	}
	p, _ := Preset("tiny")
	p.Threads = nil
	if _, err := New().Plan(&config.Run{}, p); err == nil || !strings.Contains(err.Error(), "--threads must name at least one") {
		t.Errorf("Plan does not validate: %v", err)
	}
}
