package sweep

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
)

// TestAskedProblems: each refused combination of the design's settings is one line,
// --slice is bounded (NaN too), and a sweep asked right has none.
func TestAskedProblems(t *testing.T) {
	t.Parallel()
	if p := (Asked{Design: Interleaved, Slice: 5}).Problems(); len(p) != 0 {
		t.Errorf("a plain interleaved sweep refused: %q", p)
	}
	for _, c := range []struct {
		a    Asked
		want string
	}{
		{Asked{Design: Interleaved, Settle: true}, "--settle: only with --load-once"},
		{Asked{Design: Sequential, LoadOnce: true}, "--load-once: only with --design interleaved or duet"},
		{Asked{Design: "random"}, `--design "random": use interleaved, sequential, duet`},
		{Asked{Design: Interleaved, Slice: 0.1}, "--slice 0.1: give 0 (whole steps)"},
		{Asked{Design: Interleaved, Slice: math.NaN()}, "--slice NaN"},
		{Asked{Design: Duet, ServerCPUs: 2}, "--server-cpus: the duet design"},
		{Asked{Design: Duet, Placement: "apart"}, `--duet-placement "apart": use point or role`},
		{Asked{Design: Interleaved, Placement: PlacementRole, PlacementGiven: true}, "--duet-placement: only with --design duet"},
		{Asked{Design: Duet, SameData: true}, "--same-data: only with --load-once"},
		{Asked{Design: Duet, SameData: true, LoadOnce: true, Cluster: 3}, "--same-data: a point's cluster has several servers"},
		{Asked{Design: Duet, Instances: -1}, "--instances -1: give 1"},
		{Asked{Design: Duet, Instances: 2}, "--instances: only with --load-once"},
		{Asked{Design: Duet, Instances: 2, LoadOnce: true, Cluster: 3}, "--instances: a point's cluster has several servers"},
		{Asked{Design: Duet, Instances: 2, LoadOnce: true, Resume: true}, "--instances: a resumed sweep"},
		{Asked{Design: Duet, Instances: 8, LoadOnce: true, Repeat: 6}, "--instances 8: more instances than the 6 blocks"},
	} {
		p := c.a.Problems()
		if len(p) != 1 || !strings.HasPrefix(p[0], c.want) {
			t.Errorf("%+v: %q, want one line beginning %q", c.a, p, c.want)
		}
	}
}

// TestKindProblems: a key-value engine has no versions and no duet; an embedded SQL
// engine is swept only over named points of its one configuration (or over clients or
// --vary alone).
func TestKindProblems(t *testing.T) {
	t.Parallel()
	kv := KindOf(engine.Meta{Kind: engine.KindKV, Embedded: true})
	emb := KindOf(engine.Meta{Kind: engine.KindSQL, Embedded: true})
	srv := KindOf(engine.Meta{Kind: engine.KindSQL})
	if kv != (Kind{KV: true}) || emb != (Kind{Embedded: true}) || !srv.Managed() || kv.Managed() || emb.Managed() {
		t.Fatalf("kinds: kv %+v, embedded %+v, server %+v", kv, emb, srv)
	}
	named := []NamedProfile{{Name: "a", Profile: "default"}, {Name: "b", Profile: "default"}}
	for _, c := range []struct {
		a    Asked
		k    Kind
		want string // "" for none
	}{
		{Asked{Design: Interleaved, Versions: []string{"1"}}, kv, "--versions: --engine e is the library"},
		{Asked{Design: Duet}, kv, "--design duet: --engine e compacts"},
		{Asked{Design: Interleaved, Profiles: named}, emb, ""},
		{Asked{Design: Interleaved, Clients: 2}, emb, ""},
		{Asked{Design: Interleaved, Profiles: []NamedProfile{{Profile: "cached"}}}, emb, "--engine e is embedded"},
		{Asked{Design: Duet, Versions: []string{"13", "15"}}, srv, ""},
		{Asked{Design: Duet, Versions: []string{"13", "15"}, Placement: PlacementRole}, srv, ""},
		{Asked{Design: Duet, Profiles: named, Placement: PlacementRole}, emb, "--duet-placement role: engine e runs inside dbperf's own process"},
		{Asked{Design: Duet, Profiles: named, SameData: true}, emb, "--same-data: engine e has no server"},
		{Asked{Design: Interleaved, SameData: true}, kv, "--same-data: engine e has no server"},
		{Asked{Design: Duet, Versions: []string{"13", "15"}, SameData: true}, srv, "--same-data: the points run versions 13, 15"},
		{Asked{Design: Duet, Versions: []string{"15", "15"}, Profiles: named, SameData: true}, srv, ""},
		{Asked{Design: Duet, Profiles: named, Instances: 2}, emb, "--instances: engine e has no server to renew"},
		{Asked{Design: Interleaved, Instances: 3}, kv, "--instances: engine e has no server to renew"},
		{Asked{Design: Duet, Versions: []string{"13", "15"}, Instances: 4}, srv, ""}, // each point renews from its own data
	} {
		p := c.a.KindProblems(c.k, "e")
		if c.want == "" && len(p) != 0 || c.want != "" && (len(p) != 1 || !strings.HasPrefix(p[0], c.want)) {
			t.Errorf("%+v on %+v: %q, want %q", c.a, c.k, p, c.want)
		}
	}
}

// TestParseVary: values split, trimmed and deduplicated; a flag the workload lacks, one
// the sweep owns, a value list missing and an axis given twice each refused, all at once.
func TestParseVary(t *testing.T) {
	t.Parallel()
	has := func(f string) bool { return f == "rows" || f == "clients" || f == "time" }
	own := func(f string) bool { return f == "clients" }
	axes, err := ParseVary([]string{"--rows=10, 20,10,", "time=1"}, has, own)
	if err != nil || len(axes) != 2 || axes[0].Flag != "rows" || !slices.Equal(axes[0].Values, []string{"10", "20"}) || axes[1].Flag != "time" {
		t.Fatalf("ParseVary: %+v, %v", axes, err)
	}
	_, err = ParseVary([]string{"nope=1", "clients=1,2", "rows", "rows=1", "rows=2"}, has, own)
	for _, want := range []string{"--vary nope: the workload has no flag --nope", "--vary clients: --clients is the sweep's or the run's own",
		`--vary "rows": give FLAG=V1,V2,…`, "--vary rows: given twice"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

// TestResolver: a point of a distance axis gets its latency, and a point resolved again
// takes the sweep's CPU-profile settings; an error passes through.
func TestResolver(t *testing.T) {
	t.Parallel()
	sweepCfg := &config.Run{CPUProfileDir: "/p", CPUProfileHz: 99, CPUProfileCallGraph: "dwarf"}
	r := Resolver(sweepCfg, func(pt Point) (*config.Run, error) {
		if pt.Profile == "bad" {
			return nil, errBad
		}
		return &config.Run{CPUProfileDir: "/p", NodeLatency: time.Second}, nil
	})
	pc, err := r(Point{Profile: "x", Latency: 5 * time.Millisecond, ByLatency: true})
	if err != nil || pc.NodeLatency != 5*time.Millisecond || pc.CPUProfileHz != 99 || pc.CPUProfileCallGraph != "dwarf" {
		t.Errorf("resolved %+v, %v", pc, err)
	}
	if pc, _ := r(Point{Profile: "x"}); pc.NodeLatency != time.Second {
		t.Errorf("a point without a distance axis got latency %s", pc.NodeLatency)
	}
	if _, err := r(Point{Profile: "bad"}); err != errBad {
		t.Errorf("error %v, want %v", err, errBad)
	}
}

var errBad = errors.New("bad")
