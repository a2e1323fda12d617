package sysbench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/workload"
	"github.com/dbperf/dbperf/internal/workload/workloadtest"
)

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
	workloadtest.Steps(t, New(), []workloadtest.PlanCase{
		{Name: "everything, §3.4's order", Want: referenceOrder},
		{Name: "--tests keeps §3.4's order and adds the load and its cleanup",
			Args: []string{"--tests", "insert,point-query,scan.warm,read-only-count"},
			Want: []string{"load", "cleanup.load", "scan.warm", "read-only-count.range=1000", "point-query", "insert"}},
		{Name: "--tests read-write brings its cleanup",
			Args: []string{"--tests", "read-write"},
			Want: []string{"load", "cleanup.load", "read-write.range=10", "read-write.range=100", "cleanup.read-write"}},
		{Name: "a list of thread counts: each test at each count, test-major",
			Args: []string{"--tests", "point-query,read-write", "--threads", "1,4,16"},
			Want: []string{"load", "cleanup.load",
				"read-write.range=10.t1", "read-write.range=10.t4", "read-write.range=10.t16",
				"read-write.range=100.t1", "read-write.range=100.t4", "read-write.range=100.t16", "cleanup.read-write",
				"point-query.t1", "point-query.t4", "point-query.t16"}},
		{Name: "--clients N is --threads N: no suffix",
			Args: []string{"--tests", "point-query", "--clients", "8"},
			Want: []string{"load", "cleanup.load", "point-query"}},
		{Name: "--range-size replaces the catalogue's ranges",
			Args: []string{"--tests", "random-points,read-only,read-write,range-covered-pk,write-only", "--range-size", "50"},
			Want: []string{"load", "cleanup.load", "write-only", "read-write.range=50", "cleanup.read-write",
				"read-only.range=50", "random-points.range=50", "range-covered-pk"}},
		{Name: "--steps picks exact steps, in §3.4's order",
			Args: []string{"--steps", "insert,load,read-only.range=100"},
			Want: []string{"load", "read-only.range=100", "insert"}},
	})
	workloadtest.MetaSteps(t, New(), referenceOrder)
}

// Every step's group, kind, duration, thread count, primary label and statements per
// event (§3.6: 16 per read-only transaction, 20 per read-write, 6 per write-only).
func TestStepLoads(t *testing.T) {
	steps := workloadtest.Plan(t, New(), "--read-time", "2", "--write-time", "3", "--insert-time", "4", "--threads", "3", "--rate", "30")
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
		l, err := s.Load(context.Background(), workloadtest.DialectOnly{})
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
	for _, s := range workloadtest.Plan(t, New(), "--tests", "scan.warm,scan", "--read-time", "100") {
		if l, err := s.Load(context.Background(), workloadtest.DialectOnly{}); err == nil && strings.HasPrefix(s.Name(), "scan") {
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
