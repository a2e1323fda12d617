package sysbench

import (
	"slices"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/workload/workloadtest"
)

func TestValidation(t *testing.T) {
	workloadtest.Validation[*Params](t, New(), []workloadtest.Case{
		{Name: "unknown test", Args: []string{"--tests", "point-query,point-querie"},
			Want: []string{`--tests: unknown test "point-querie": sysbench has point-query.warm,scan.warmpre,point-query.pre,`}},
		{Name: "test twice", Args: []string{"--tests", "scan,scan"},
			Want: []string{"--tests: scan is listed twice"}},
		{Name: "unknown step names the valid ones", Args: []string{"--steps", "load,read-only"},
			Want: []string{`--steps: unknown step "read-only": with these --threads and --range-size, sysbench has load,point-query.warm,cleanup.load,`}},
		{Name: "step names follow the thread counts", Args: []string{"--steps", "load,point-query", "--threads", "1,2"},
			Want: []string{`--steps: unknown step "point-query": with these --threads and --range-size, sysbench has load,point-query.warm.t1,point-query.warm.t2,`}},
		{Name: "both selections", Args: []string{"--tests", "scan", "--steps", "load"},
			Want: []string{"--tests and --steps both given: --tests picks tests (with the load), --steps exact step names; give one"}},
		{Name: "fresh database without the load", Args: []string{"--steps", "point-query"},
			Want: []string{"--steps point-query needs the tables the load step creates: add load to --steps, or pass --workdir DIR"}},
		{Name: "a kept database may skip the load", Args: []string{"--steps", "point-query"}, Cfg: config.Run{WorkDir: "/kept"}},
		{Name: "threads and clients", Args: []string{"--threads", "4", "--clients", "4"},
			Want: []string{"--threads and --clients both given: --clients 4 is --threads 4; give one"}},
		{Name: "bad thread counts", Args: []string{"--threads", "0,2,2"},
			Want: []string{"--threads: every thread count must be at least 1, got 0", "--threads: 2 is listed twice"}},
		{Name: "sizes, times, rate, range", Args: []string{"--tables", "0", "--table-size", "0", "--read-time", "0", "--write-time", "-1",
			"--cleanup-wait", "-2", "--range-size", "0", "--rate", "-5"},
			Want: []string{"--tables must be at least 1, got 0",
				"--table-size must be within 1..1073741823 (ids and k are 32-bit INTEGERs), got 0",
				"--read-time must be a positive number of seconds, got 0",
				"--write-time must be a positive number of seconds, got -1",
				"--cleanup-wait must not be negative, got -2",
				"--range-size must be at least 1 (leave it out for the catalogue's ranges)",
				"--rate must be a number of events per second ≥ 0 (0: as fast as they can), got -5"}},
		{Name: "unknown scale", Args: []string{"--scale", "huge"},
			Want: []string{`--scale: unknown scale "huge": use one of tiny, small, medium, large`}},
	})
}

func TestResolve(t *testing.T) {
	cfg, p := workloadtest.MustResolve[*Params](t, New(), "--scale", "small", "--time", "7", "--write-time", "3", "--threads", "2,8", "--rate", "100", "--prepared=false")
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
	_, p = workloadtest.MustResolve[*Params](t, New(), "--scale", "large")
	if p.Tables != 8 || p.TableSize != 10_000_000 || p.ReadTime != 600*time.Second || p.WriteTime != 900*time.Second ||
		p.CleanupWait != 140*time.Second || p.ReportInterval() != 5*time.Second || !p.Prepared || !slices.Equal(p.Threads, []int{1}) {
		t.Errorf("large: %+v", p)
	}
	if got := p.Stored(); got["table_size"] != int64(10_000_000) || got["scan_warm_time_sec"] != 60.0 || got["zipf_exp"] != 0.8 {
		t.Errorf("stored: %v", got)
	}
}
