package dbbench

import (
	"slices"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/workload"
	"github.com/dbperf/dbperf/internal/workload/workloadtest"
)

// currentOrder is §4.1's jobs, names verbatim, overwriteandwait's flush and wait after it.
var currentOrder = []string{
	"fillseq_disable_wal", "revrange", "readrandom", "fwdrange", "multireadrandom", "overwritesome", "flush_mt_l0",
	"revrangewhilewriting", "fwdrangewhilewriting", "readwhilewriting", "overwriteandwait", "overwriteandwait.wait",
}

var legacyOrder = []string{
	"fillrandom", "overwrite", "readseq.after-overwrite", "readrandom.after-overwrite", "seekrandom.nexts=1.after-overwrite",
	"readseq", "readrandom",
	"readseq.pre.seekrandom.nexts=0", "seekrandom.nexts=0", "readseq.pre.seekrandom.nexts=1", "seekrandom.nexts=1",
	"readseq.pre.seekrandom.nexts=10", "seekrandom.nexts=10", "readseq.pre.seekrandom.nexts=100", "seekrandom.nexts=100",
	"overwrite.ratelimited", "readwhilewriting",
	"overwrite.ratelimited.pre.seekrandomwhilewriting.nexts=0", "seekrandomwhilewriting.nexts=0",
	"overwrite.ratelimited.pre.seekrandomwhilewriting.nexts=1", "seekrandomwhilewriting.nexts=1",
	"overwrite.ratelimited.pre.seekrandomwhilewriting.nexts=10", "seekrandomwhilewriting.nexts=10",
	"overwrite.ratelimited.pre.seekrandomwhilewriting.nexts=100", "seekrandomwhilewriting.nexts=100",
}

func shapeOrder() []string {
	out := []string{"fillrandom"}
	for _, st := range []string{"pre_flush", "post_flush", "compact_l0", "compact_l1", "compact_all"} {
		out = append(out, st,
			"readrandom."+st+".bloom", "fwdrange."+st+".bloom", "readrandom."+st+".nobloom", "fwdrange."+st+".nobloom")
	}
	return out
}

func TestPlanNamesAndOrder(t *testing.T) {
	workloadtest.Steps(t, New(), []workloadtest.PlanCase{
		{Name: "current (§4.1), the default", Want: currentOrder},
		{Name: "legacy (§4.5)", Args: []string{"--sequence", "legacy"}, Want: legacyOrder},
		{Name: "shape (§4.2)", Args: []string{"--sequence", "shape"}, Want: shapeOrder()},
		{Name: "--steps picks steps in the sequence's order",
			Args: []string{"--steps", "readrandom,fillseq_disable_wal,flush_mt_l0"},
			Want: []string{"fillseq_disable_wal", "readrandom", "flush_mt_l0"}},
	})
	workloadtest.MetaSteps(t, New(), currentOrder)
}

// Every step names a group of Meta.Groups, or none for the two steps the reference's
// summaries leave out; each spec has what its kind needs.
func TestPlanGroupsAndSpecs(t *testing.T) {
	groups := map[string]bool{"": true}
	for _, g := range New().Meta().Groups {
		groups[g.Name] = true
	}
	for _, seq := range sequences {
		for _, s := range workloadtest.Plan(t, New(), "--sequence", seq) {
			if !groups[s.Group()] {
				t.Errorf("%s %s: group %q not in Meta.Groups", seq, s.Name(), s.Group())
			}
			if s.Group() == "" && s.Name() != "revrange" && s.Name() != "overwritesome" {
				t.Errorf("%s %s: no group", seq, s.Name())
			}
		}
	}
	byName := map[string]stepSpec{}
	_, p := workloadtest.MustResolve[*Params](t, New(), "--threads", "3", "--num", "3000")
	for _, s := range currentSpecs(p) {
		byName[s.name] = s
	}
	if s := byName["fillseq_disable_wal"]; !s.walOff || s.threads != 1 || s.op != opFill || s.random {
		t.Errorf("fillseq_disable_wal: %+v", s)
	}
	if s := byName["overwritesome"]; s.count != 100 || s.threads != 3 || s.dur != 0 { // NUM_KEYS/N/10 per thread
		t.Errorf("overwritesome: %+v", s)
	}
	if s := byName["revrange"]; !s.reverse || s.threads != 1 || s.dur != p.SettleTime || s.nexts != 10 {
		t.Errorf("revrange: %+v", s)
	}
	if s := byName["flush_mt_l0"]; !slices.Equal(s.parts, []part{partLevelStats, partFlush, partWait, partCompact0, partWait, partMemStats, partLevelStats}) {
		t.Errorf("flush_mt_l0 parts %v (§4.1 row 7)", s.parts)
	}
	if s := byName["overwriteandwait.wait"]; !slices.Equal(s.parts, []part{partFlush, partLevelStats, partWait}) {
		t.Errorf("overwriteandwait.wait parts %v (§4.1 row 11)", s.parts)
	}
	for _, n := range []string{"revrangewhilewriting", "fwdrangewhilewriting", "readwhilewriting"} {
		if s := byName[n]; !s.writer || s.dur != p.Duration || s.threads != 3 {
			t.Errorf("%s: %+v", n, s)
		}
	}
}

// baseOf returns a planned step's stepBase.
func baseOf(t *testing.T, s workload.Step) *stepBase {
	t.Helper()
	switch x := s.(type) {
	case *fillStep:
		return &x.stepBase
	case *readStep:
		return &x.stepBase
	case *writeStep:
		return &x.stepBase
	case *shapeStep:
		return &x.stepBase
	}
	t.Fatalf("%s: step of type %T", s.Name(), s)
	return nil
}

// A step's options: the run's, fillseq_disable_wal's (§4.1 row 1), or without bloom filters.
func TestStepOptions(t *testing.T) {
	_, p := workloadtest.MustResolve[*Params](t, New())
	for _, s := range workloadtest.Plan(t, New()) {
		o := baseOf(t, s).options()
		if s.Name() == "fillseq_disable_wal" {
			want := p.KV
			want.VectorMemtable, want.DisableWAL, want.MinLevelToCompress = true, true, 0
			if o != want {
				t.Errorf("fillseq_disable_wal options %+v", o)
			}
		} else if o != p.KV {
			t.Errorf("%s: options %+v, want the run's", s.Name(), o)
		}
	}
	for _, s := range workloadtest.Plan(t, New(), "--sequence", "shape", "--bloom-bits", "12") {
		o := baseOf(t, s).options()
		if want := map[bool]int{true: 0, false: 12}[strings.HasSuffix(s.Name(), ".nobloom")]; o.BloomBitsPerKey != want {
			t.Errorf("%s: %d bloom bits, want %d", s.Name(), o.BloomBitsPerKey, want)
		}
	}
}
