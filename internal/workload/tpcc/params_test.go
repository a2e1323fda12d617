package tpcc

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/workload/workloadtest"
)

func TestParams(t *testing.T) {
	t.Parallel()
	workloadtest.Validation[*Params](t, New(), []workloadtest.Case{
		{Name: "ok", Args: []string{"--warehouses", "4", "--clients", "4", "--time", "60"}},
		{Name: "bad", Args: []string{"--warehouses", "0", "--loaders", "-1", "--warmup", "-1"},
			Want: []string{"--warehouses must be a whole number from 1 to 100000, got 0", "--loaders must be ≥ 1", "--warmup must be a number of seconds ≥ 0"}},
		{Name: "steps", Args: []string{"--steps", "run,payment"},
			Want: []string{`--steps: unknown step "payment": tproc-c has load,index,warmup,run`, "--steps run,payment needs the tables the load step creates"}},
	})
	cfg, p := workloadtest.MustResolve[*Params](t, New(), "--warehouses", "3", "--clients", "2")
	if p.items != 100_000 || p.customers != 3_000 || p.Warehouses != 3 || p.loaders(cfg) != 2 {
		t.Errorf("defaults: %d items, %d customers, %d warehouses, %d loaders", p.items, p.customers, p.Warehouses, p.loaders(cfg))
	}
	steps, err := New().Plan(cfg, p)
	if err != nil || strings.Join(workloadtest.Names(steps), ",") != "load,index,warmup,run" {
		t.Fatalf("plan: %v, %v", workloadtest.Names(steps), err)
	}
}

// The mix is 45/43/4/4/4, and NURand's run-time C_LAST differs from the load's as
// clause 2.1.6.1 requires.
func TestMixAndConstants(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	var n [nKinds]int
	const draws = 200_000
	for range draws {
		n[pick(r)]++
	}
	for k, want := range []float64{0.45, 0.43, 0.04, 0.04, 0.04} {
		if got := float64(n[k]) / draws; got < want-0.005 || got > want+0.005 {
			t.Errorf("%s: %.3f of the mix, want %.2f", txLabels[k], got, want)
		}
	}
	for seed := range int64(50) {
		c := constants(seed)
		if d := abs(c.lastRun - c.lastLoad); d < 65 || d > 119 || d == 96 || d == 112 {
			t.Errorf("seed %d: C_LAST %d at load, %d at run", seed, c.lastLoad, c.lastRun)
		}
	}
	if lastName(371) != "PRICALLYOUGHT" || lastName(0) != "BARBARBAR" {
		t.Errorf("last names %s %s", lastName(371), lastName(0))
	}
	if s := string(appendMoney(nil, -1005)); s != "-10.05" {
		t.Errorf("money %s", s)
	}
	if s := string(appendFrac(nil, 305)); s != "0.0305" {
		t.Errorf("fraction %s", s)
	}
}
