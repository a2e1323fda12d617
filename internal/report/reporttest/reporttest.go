// Package reporttest holds the stored runs and reports the tests of package report and
// of its renderers share: a fixture of two runs covering every status, SLA verdict, note
// and HW figure, configs of repeated runs to compare, benchstat and history series.
package reporttest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/changepoint"
	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/store"
)

// Start is when the fixtures' runs start.
var Start = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// Sec is s seconds.
func Sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Lat is a latency with a p99.99 halfway between p99.9 and the max, except for ops whose
// max is under 9 ms (the queries): those read like runs stored before p99.99 was kept,
// so the goldens show both a p99.99 and its absence.
func Lat(p50, p90, p99, p999, mx int64) metrics.Latency {
	l := metrics.Latency{P50: p50, P90: p90, P99: p99, P999: p999, Max: mx}
	if mx >= 9000 {
		l.P9999 = (p999 + mx) / 2
	}
	return l
}

// RowsLabel is an insert or delete label; target > 0 makes it a rate-limited background writer.
func RowsLabel(name string, rows int64, target float64) metrics.LabelStats {
	l := metrics.LabelStats{
		Label: name, Role: name, Unit: metrics.UnitRows,
		Statements: rows / 50, Events: rows / 50, Rows: rows,
		Service: Lat(900, 1500, 2100, 4800, 9000),
	}
	if target > 0 {
		l.TargetPerSec, l.Background, l.HasResponse = target, true, true
		l.Late, l.Missed = 3, 1
		l.Response = Lat(950, 1700, 3200, 8000, 12500)
	}
	return l
}

// QueryLabel is the point-query label: stmts statements of 10 rows each, 2 errors.
func QueryLabel(stmts int64) metrics.LabelStats {
	return metrics.LabelStats{
		Label: "point-query", Role: "query", Unit: metrics.UnitOps,
		Statements: stmts, Events: stmts, Rows: stmts * 10, Errors: 2,
		Service: Lat(150, 260, 410, 1200, 5300),
	}
}

// RWIntervals are 1 s intervals, the last one tail seconds long when tail > 0: per interval
// query statements and insert and delete rows (rate-limited to target); a negative count
// leaves the label out of that interval.
func RWIntervals(target, tail float64, counts ...[3]int64) []metrics.Interval {
	var ivs []metrics.Interval
	for i, c := range counts {
		end := Sec(float64(i + 1))
		if i == len(counts)-1 && tail > 0 {
			end = Sec(float64(i) + tail)
		}
		iv := metrics.Interval{Seq: i, Start: Sec(float64(i)), End: end, ClientCPUSec: 0.11}
		if c[0] >= 0 {
			iv.Labels = append(iv.Labels, QueryLabel(c[0]))
		}
		if c[1] >= 0 {
			iv.Labels = append(iv.Labels, RowsLabel("insert", c[1], target))
		}
		if c[2] >= 0 {
			iv.Labels = append(iv.Labels, RowsLabel("delete", c[2], target))
		}
		ivs = append(ivs, iv)
	}
	return ivs
}

// HW is what a managed server's step sampled: cpu busy seconds, device IO, server
// and client processes.
func HW(busy, serverCPU, clientCPU float64, writeKB uint64) *metrics.HW {
	return &metrics.HW{
		CPU:             hwstat.CPUTimes{UserSec: busy * 0.7, SystemSec: busy * 0.3, IdleSec: 16 - busy, IOWaitSec: 0.5},
		ContextSwitches: 20000,
		Devices:         []string{"nvme0n1"},
		ReadOps:         40, ReadBytes: 40 * 4096, WriteOps: 900, WriteBytes: writeKB * 1024,
		Server: metrics.ProcHW{Known: true, Processes: 8, CPUSec: serverCPU, PeakMemBytes: 3 << 29,
			IOKnown: true, ReadBytes: 8192, WriteBytes: writeKB * 1024},
		Client: metrics.ProcHW{Known: true, Processes: 1, CPUSec: clientCPU, PeakMemBytes: 40 << 20, IOKnown: true},
	}
}

// WithHW adds sampled HW, per-connection CPU and the database size to a step result and
// derives its metrics as the runner does.
func WithHW(r metrics.StepResult, hw *metrics.HW, conn ...metrics.ConnCPU) metrics.StepResult {
	r.HW, r.ConnCPU = hw, conn
	r.DBSizeBytes, r.DBSizeKnown = 3<<29+12345, true
	r.Metrics = r.Efficiency()
	return r
}

// WithMetrics derives the metrics of a step whose HW was not sampled.
func WithMetrics(r metrics.StepResult) metrics.StepResult {
	r.Metrics = r.Efficiency()
	return r
}

// IBGroups are the Insert Benchmark's step groups as it stores them with a run.
func IBGroups() []store.StepGroup {
	return []store.StepGroup{{Name: "write", Title: "write (l.*)"}, {Name: "range", Title: "range (qr*)"}, {Name: "point", Title: "point (qp*)"}}
}

// Runs is two stored runs: a failed run with a load step, a cleanup step with a note,
// a read-write step whose delete misses its SLA, and a failed step; and an interrupted
// run read back from a dead process (no label, no params, step without totals).
func Runs() []store.Run {
	load := store.Step{ID: 1, Seq: 1, Group: "write",
		Result: WithHW(metrics.StepResult{
			Name: "l.i0", Status: metrics.StatusOK, StartedAt: Start.Add(time.Second),
			Seconds: 2, Kind: "load", Primary: "insert",
			Labels:       []metrics.LabelStats{RowsLabel("insert", 100000, 0)},
			Audit:        metrics.Audit{Status: "ok", Detail: "pi1: 100000 rows = 100000 inserted - 0 deleted"},
			ClientCPUSec: 0.8,
		}, HW(2.6, 1.5, 0.8, 51200), metrics.ConnCPU{Role: "insert", Sessions: 1, CPUSec: 1.25}),
		Intervals: []metrics.Interval{
			{Seq: 0, Start: 0, End: Sec(1), Labels: []metrics.LabelStats{RowsLabel("insert", 48000, 0)}, ClientCPUSec: 0.39,
				HW: HW(1.2, 0.7, 0.39, 20480)},
			{Seq: 1, Start: Sec(1), End: Sec(2), Labels: []metrics.LabelStats{RowsLabel("insert", 52000, 0)}, ClientCPUSec: 0.41,
				HW: HW(1.4, 0.8, 0.41, 30720)},
		},
	}
	cleanup := store.Step{ID: 2, Seq: 2,
		Result: metrics.StepResult{
			Name: "cleanup", Status: metrics.StatusOK, StartedAt: Start.Add(4 * time.Second),
			Seconds: 0.4, Kind: "maintenance",
			Note: "PRAGMA wal_checkpoint(TRUNCATE) and ANALYZE took 0.4 s",
		},
	}
	// insert: 510 rows in 5.3 s = 96.2/s ≥ 95 (ok); every full interval at 100/s, the
	// 0.3 s tail (10 rows = 33/s) is excluded. delete: 460 rows = 86.8/s (failed); 3 of
	// the 5 full intervals are below 95/s.
	qp100 := store.Step{ID: 3, Seq: 3, Group: "point",
		Result: WithHW(metrics.StepResult{
			Name: "qp100", Status: metrics.StatusOK, StartedAt: Start.Add(5 * time.Second),
			Seconds: 5.3, Kind: "read-write", Primary: "point-query",
			Labels: []metrics.LabelStats{
				QueryLabel(26500),
				RowsLabel("insert", 510, 100),
				RowsLabel("delete", 460, 100),
			},
			Audit:        metrics.Audit{Status: "ok"},
			ClientCPUSec: 0.53,
		}, HW(6.1, 4.4, 0.53, 2048),
			metrics.ConnCPU{Role: "query", Sessions: 1, CPUSec: 3.1},
			metrics.ConnCPU{Role: "insert", Sessions: 1, CPUSec: 0.12},
			metrics.ConnCPU{Role: "delete", Sessions: 1, CPUSec: 0.9}),
		Intervals: RWIntervals(100, 0.3,
			[3]int64{5000, 100, 100}, [3]int64{5000, 100, 90}, [3]int64{5000, 100, 80},
			[3]int64{5000, 100, 100}, [3]int64{5000, 100, 85}, [3]int64{1500, 10, 5}),
	}
	qp500 := store.Step{ID: 4, Seq: 4, Group: "point",
		Result: WithMetrics(metrics.StepResult{
			Name: "qp500", Status: metrics.StatusFailed, Error: "delete: ERROR: canceling statement due to statement timeout (SQLSTATE 57014)",
			StartedAt: Start.Add(11 * time.Second), Seconds: 1.5, Kind: "read-write", Primary: "point-query",
			Labels: []metrics.LabelStats{
				QueryLabel(7000),
				RowsLabel("insert", 700, 500),
				RowsLabel("delete", 650, 500),
			},
			ClientCPUSec: 0.2,
		}),
		Intervals: RWIntervals(500, 0.5, [3]int64{5000, 500, 480}, [3]int64{2000, 200, -1}),
	}

	run7 := store.Run{
		ID: 7,
		RunMeta: store.RunMeta{
			Workload: "insertbench", WorkloadVersion: 3,
			Engine: "postgres", EngineVersion: "16.4",
			EngineSettings: map[string]string{"shared_buffers": "16384", "dbperf.managed": "true", "dbperf.profile": "default"},
			Label:          "baseline", Seed: 42,
			Params: map[string]any{"scale": "tiny", "clients": json.Number("1"), "rows": json.Number("100000"), "delete": true},
			Env: map[string]string{"cpu_model": "AMD EPYC 7B13", "cores": "8", "kernel": "6.8.0-45-generic",
				"server_processes": "managed server: pid 4242 and its children", "io_devices": "nvme0n1"},
			StartedAt: Start, StepGroups: IBGroups(),
		},
		Status:     store.RunFailed,
		FinishedAt: Start.Add(2 * time.Minute),
		Steps:      []store.Step{load, cleanup, qp100, qp500},
	}
	run8 := store.Run{
		ID: 8,
		RunMeta: store.RunMeta{
			Workload: "insertbench", WorkloadVersion: 3, Engine: "sqlite", EngineVersion: "3.46.1",
			Seed: 1, StartedAt: Start.Add(time.Hour),
		},
		Status: store.RunInterrupted,
		Steps: []store.Step{{ID: 5, Seq: 1,
			Result: metrics.StepResult{Name: "l.i0", Status: metrics.StatusInterrupted, Seconds: 1},
			Intervals: []metrics.Interval{
				{Seq: 0, Start: 0, End: Sec(1), Labels: []metrics.LabelStats{RowsLabel("insert", 40000, 0)}, ClientCPUSec: 0.3},
			},
		}},
	}
	return []store.Run{run7, run8}
}

// RepeatRun is a stored run of a config whose speed is factor× the fixture's: an l.i0
// load and a qp100 read-write step (its delete writer at deleteRate of 100/s) with HW
// figures; jitter varies the repeats.
func RepeatRun(id int64, label string, factor, jitter, deleteRate float64) store.Run {
	f := factor * (1 + jitter)
	load := WithHW(metrics.StepResult{
		Name: "l.i0", Status: metrics.StatusOK, StartedAt: Start, Seconds: 2 / f, Kind: "load", Primary: "insert",
		Labels: []metrics.LabelStats{RowsLabel("insert", 100000, 0)}, Audit: metrics.Audit{Status: "ok"}, ClientCPUSec: 0.8,
	}, HW(2.6/f, 1.5/f, 0.8, 51200), metrics.ConnCPU{Role: "insert", Sessions: 1, CPUSec: 1.25 / f})
	qp := WithHW(metrics.StepResult{
		Name: "qp100", Status: metrics.StatusOK, StartedAt: Start, Seconds: 5, Kind: "read-write", Primary: "point-query",
		Labels: []metrics.LabelStats{QueryLabel(int64(25000 * f)), RowsLabel("insert", 500, 100), RowsLabel("delete", int64(5*deleteRate), 100)},
		Audit:  metrics.Audit{Status: "ok"}, ClientCPUSec: 0.5,
	}, HW(6, 4.4, 0.5, 2048),
		metrics.ConnCPU{Role: "query", Sessions: 1, CPUSec: 3.1}, metrics.ConnCPU{Role: "insert", Sessions: 1, CPUSec: 0.1})
	var ivs []metrics.Interval
	for i := range 5 {
		iv := RWIntervals(100, 0, [3]int64{int64(5000 * f), 100, int64(deleteRate)})[0]
		iv.Seq, iv.Start, iv.End = i, Sec(float64(i)), Sec(float64(i+1))
		iv.Labels[0].Service.P99 = int64(400 + 30*i)
		iv.HW = HW(1.2, 0.9, 0.1, 400)
		ivs = append(ivs, iv)
	}
	return store.Run{ID: id,
		RunMeta: store.RunMeta{Workload: "insertbench", WorkloadVersion: 3, Engine: "postgres", EngineVersion: "16.4",
			Label: label, Seed: 1, StartedAt: Start.Add(time.Duration(id) * time.Minute), StepGroups: IBGroups(),
			Env: map[string]string{"server_processes": "managed server: pid 4242 and its children", "io_devices": "nvme0n1"}},
		Status: store.RunOK, FinishedAt: Start.Add(time.Duration(id)*time.Minute + 30*time.Second),
		Steps: []store.Step{
			{ID: id*10 + 1, Seq: 0, Group: "write", Result: load, Intervals: []metrics.Interval{
				{Seq: 0, Start: 0, End: Sec(2 / f), Labels: []metrics.LabelStats{RowsLabel("insert", 100000, 0)}, ClientCPUSec: 0.8}}},
			{ID: id*10 + 2, Seq: 1, Group: "point", Result: qp, Intervals: ivs},
		},
	}
}

// CompareFixture: config a (base, 4 repeats), config b (4 repeats, ~20% faster, its
// delete writer misses the SLA) and one run of another workload (steps are the union).
func CompareFixture() (report.Report, []report.Group) {
	jit := []float64{-0.01, 0, 0.012, 0.004}
	var runs []store.Run
	a, b := report.Group{Name: "a"}, report.Group{Name: "b"}
	for i, j := range jit {
		ra := RepeatRun(int64(1+i), "a", 1, j, 100)
		rb := RepeatRun(int64(11+i), "b", 1.2, -j, 90)
		runs = append(runs, ra, rb)
		a.RunIDs, b.RunIDs = append(a.RunIDs, ra.ID), append(b.RunIDs, rb.ID)
	}
	other := RepeatRun(21, "", 0.9, 0, 100)
	other.Workload = "sysbench"
	other.Steps[1].Result.Name = "point-select"
	other.Steps = append(other.Steps, store.Step{ID: 299, Seq: 2, Result: metrics.StepResult{Name: "cleanup",
		Status: metrics.StatusOK, Seconds: 10, Kind: "cleanup", Primary: "cleanup",
		Labels: []metrics.LabelStats{{Label: "cleanup", Role: "cleanup", Unit: metrics.UnitOps, Statements: 1}}}})
	runs = append(runs, other)
	rep := report.Build(runs)
	rep.Location = time.UTC
	return rep, []report.Group{a, b, {Name: "run 21", RunIDs: []int64{21}}}
}

// Compared is CompareFixture compared against config a, the report holding the comparison.
func Compared() (report.Report, report.Comparison) {
	rep, groups := CompareFixture()
	c := report.Compare(rep, groups, 0)
	rep.Comparison = &c
	return rep, c
}

// CellAt is the cell of table (by ID) in the row whose head is head, in column; t fails
// without one.
func CellAt(t testing.TB, c report.Comparison, table string, head []string, column string) report.Cell {
	t.Helper()
	var tb *report.Table
	for i := range c.Tables {
		if c.Tables[i].ID == table {
			tb = &c.Tables[i]
		}
	}
	if tb == nil {
		t.Fatalf("no table %s", table)
	}
	col := -1
	for i, name := range tb.Columns {
		if name == column {
			col = i
		}
	}
	for _, r := range tb.Rows {
		if strings.Join(r.Head, "/") == strings.Join(head, "/") && col >= 0 {
			return r.Cells[col]
		}
	}
	t.Fatalf("table %s has no cell %v / %s", table, head, column)
	return report.Cell{}
}

// BenchFigures are one run's figures: l.i0's rows/s, qp100's queries/s, its p99 (µs) and
// server CPU µs per query.
type BenchFigures struct {
	Load, Query, P99, ServerCPU float64
}

// BenchRun is a finished run of config label with an l.i0 load, a cleanup and a qp100
// read-write step; trial "" stores no sweep trial, else the run is that trial of sweep s.
func BenchRun(id int64, label, trial string, f BenchFigures) report.RunReport {
	params := map[string]any{"scale": "tiny", "clients": json.Number("1")}
	if trial != "" {
		params[store.ParamSweep], params[store.ParamTrial] = "s", trial
	}
	op := func(label, role string, unit metrics.Unit, rate float64, p99 int64) report.Op {
		n := int64(rate * 10)
		return report.Op{LabelStats: metrics.LabelStats{Label: label, Role: role, Unit: unit, Statements: n, Events: n, Rows: n,
			Service: metrics.Latency{P50: p99 / 2, P90: p99 * 3 / 4, P99: p99, P999: p99 * 2, Max: p99 * 3}}, Count: n, PerSec: rate}
	}
	return report.RunReport{ID: id, Workload: "insertbench", WorkloadVersion: 3, Engine: "postgres", Label: label, Status: "ok",
		Params: params, StepGroups: IBGroups(),
		Steps: []report.StepReport{
			{Seq: 1, Name: "l.i0", Group: "write", Status: metrics.StatusOK, Seconds: 10, Kind: "load", Primary: "insert",
				Ops: []report.Op{op("insert", "insert", metrics.UnitRows, f.Load, 900)},
				HW:  report.HWReport{Metrics: map[string]float64{metrics.MetricServerCPUPerOp: 12}}},
			{Seq: 2, Name: "cleanup", Status: metrics.StatusOK, Seconds: 1, Kind: "cleanup", Primary: "cleanup",
				Ops: []report.Op{op("cleanup", "cleanup", metrics.UnitOps, 1, 1_000_000)}},
			{Seq: 3, Name: "qp100", Group: "point", Status: metrics.StatusOK, Seconds: 10, Kind: "read-write", Primary: "point-query",
				Ops: []report.Op{op("point-query", "query", metrics.UnitOps, f.Query, int64(f.P99))},
				HW:  report.HWReport{Metrics: map[string]float64{metrics.MetricServerCPUPerOp: f.ServerCPU}}},
		}}
}

// BenchFixture is configs of runs built from figures: configs[i] holds each run's
// figures; paired stores them as trials b1/s1, b2/s1, … of one sweep.
func BenchFixture(names []string, configs [][]BenchFigures, paired bool) (report.Report, []report.Group) {
	var rep report.Report
	var groups []report.Group
	id := int64(1)
	for ci, runs := range configs {
		g := report.Group{Name: names[ci]}
		for i, f := range runs {
			trial := ""
			if paired {
				trial = fmt.Sprintf("b%d/s1", i+1)
			}
			rep.Runs = append(rep.Runs, BenchRun(id, names[ci], trial, f))
			g.RunIDs = append(g.RunIDs, id)
			id++
		}
		groups = append(groups, g)
	}
	return rep, groups
}

// Jittered is n runs' figures around f: every figure × (1 + j·jit[i]) for its own j.
func Jittered(f BenchFigures, n int, load, query, p99, cpu float64) []BenchFigures {
	jit := []float64{-0.01, 0.004, 0.012, -0.006, 0, 0.008, -0.003, 0.002}
	out := make([]BenchFigures, n)
	for i := range n {
		j := jit[i%len(jit)]
		out[i] = BenchFigures{Load: f.Load * (1 + load*j), Query: f.Query * (1 + query*j),
			P99: f.P99 * (1 + p99*j), ServerCPU: f.ServerCPU * (1 + cpu*j)}
	}
	return out
}

// HistoryRun is a finished run whose l.i0 inserts at rate rows/s and costs cpupq µs/row.
func HistoryRun(id int64, host, version string, rate, cpupq float64) report.RunReport {
	st := store.Step{ID: id * 10, Seq: 0, Group: "write", Result: metrics.StepResult{
		Name: "l.i0", Status: metrics.StatusOK, Seconds: 10, Kind: "load", Primary: "insert",
		Labels:  []metrics.LabelStats{RowsLabel("insert", int64(rate*10), 0)},
		Metrics: map[string]float64{"cpupq": cpupq},
	}}
	r := store.Run{ID: id, Status: store.RunOK, Steps: []store.Step{st},
		RunMeta: store.RunMeta{Workload: "insertbench", WorkloadVersion: 1, Engine: "postgres", EngineVersion: version,
			Params:    map[string]any{"scale": "tiny", "profile": "nightly", "clients": json.Number("1"), "steps": []any{"l.i0"}},
			Env:       map[string]string{"hostname": host, "cpu_model": "cpu", "cores": "2"},
			StartedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(id) * time.Hour)}}
	return report.Build([]store.Run{r}).Runs[0]
}

// Detect are the default change-point options with a fixed seed.
func Detect() changepoint.Options {
	o := changepoint.DefaultOptions()
	o.Seed = 1
	return o
}

// ChangeSeries are two series of 16 runs (hosts a and b): a's throughput drops by 35% at
// its 9th run and its CPU per row rises; b is steady. a's first run has a build id.
func ChangeSeries() []report.RunReport {
	rng := rand.New(rand.NewPCG(1, 2))
	var runs []report.RunReport
	for i := range 16 {
		rate, cpu := 1000.0, 20.0
		if i >= 8 {
			rate, cpu = 650, 28
		}
		noise := 1 + (rng.Float64()-0.5)*0.04
		runs = append(runs, HistoryRun(int64(i+1), "a", "15.4", rate*noise, cpu*noise))
		runs = append(runs, HistoryRun(int64(100+i), "b", "15.4", 1000*noise, 20*noise))
	}
	runs[0].Env["build_id"] = "nightly-1"
	return runs
}

// ThreadFixture: configs a and b, 4 runs each, each run a test at two thread counts (its
// steps renamed x.t1 and x.t2, as sysbench --threads 1,2 names them); b is 2× a.
func ThreadFixture() (report.Report, []report.Group) {
	var runs []store.Run
	var groups []report.Group
	for gi, name := range []string{"a", "b"} {
		g := report.Group{Name: name}
		for i, j := range []float64{-0.01, 0, 0.012, 0.004} {
			r := RepeatRun(int64(10*gi+i+1), name, 1+float64(gi), j, 100)
			r.Steps[0].Result.Name, r.Steps[1].Result.Name = "x.t1", "x.t2"
			runs = append(runs, r)
			g.RunIDs = append(g.RunIDs, r.ID)
		}
		groups = append(groups, g)
	}
	return report.Build(runs), groups
}

// SysbenchSteps are the 41 steps of a sysbench suite's whole sequence as a run names
// them (its tests at each range, the warm-ups, the load and the cleanups).
func SysbenchSteps() []string {
	return []string{"load", "point-query.warm", "cleanup.load", "scan.warmpre", "point-query.pre",
		"range-notcovered-si.pre", "update-inlist", "update-index", "update-nonindex", "update-one", "update-zipf",
		"write-only", "read-write.range=10", "read-write.range=100", "cleanup.read-write", "scan.warm", "scan",
		"read-only.range=10", "read-only.range=100", "read-only.range=10000", "read-only-simple", "read-only-sum",
		"read-only-order", "read-only-distinct", "read-only-count", "point-query", "random-points.range=10",
		"random-points.range=100", "random-points.range=1000", "hot-points", "points-covered-pk",
		"points-notcovered-pk", "range-covered-pk", "range-notcovered-pk", "points-covered-si.warm",
		"points-covered-si", "points-notcovered-si", "range-covered-si", "range-notcovered-si", "delete", "insert"}
}

// sysbenchGroup is a sysbench step's group, as the workload declares it.
func sysbenchGroup(step string) string {
	switch {
	case strings.HasPrefix(step, "cleanup"):
		return ""
	case step == "load":
		return "load"
	case strings.Contains(step, ".warm") || strings.HasSuffix(step, ".pre"):
		return "warm-up"
	case strings.HasPrefix(step, "update") || strings.HasPrefix(step, "write") || strings.HasPrefix(step, "read-write") ||
		step == "delete" || step == "insert":
		return "write"
	case strings.HasPrefix(step, "read-only"):
		return "agg"
	case strings.HasPrefix(step, "range") || strings.HasPrefix(step, "scan"):
		return "range"
	}
	return "point"
}

// ManyStepsRun is a finished sysbench run of config label over steps whose speed is
// factor× a base (every third step a further 10% when factor ≠ 1), jitter varying the
// repeats: each step a 2 s read-write step of queries and a rate-limited insert writer,
// with HW figures, two connection roles and two 1 s intervals.
func ManyStepsRun(id int64, label string, steps []string, factor, jitter float64) store.Run {
	r := store.Run{ID: id,
		RunMeta: store.RunMeta{Workload: "sysbench", WorkloadVersion: 1, Engine: "mariadb", EngineVersion: "11.4.4",
			Label: label, Seed: 1, StartedAt: Start.Add(time.Duration(id) * time.Hour),
			StepGroups: []store.StepGroup{{Name: "point", Title: "point queries"}, {Name: "range", Title: "range queries without aggregation"},
				{Name: "agg", Title: "range queries with aggregation"}, {Name: "write", Title: "writes"}, {Name: "load", Title: "load"},
				{Name: "warm-up", Title: "warm-up (.warm, .pre, .warmpre)"}},
			Env: map[string]string{"server_processes": "managed server: pid 4242 and its children", "io_devices": "nvme0n1"}},
		Status: store.RunOK, FinishedAt: Start.Add(time.Duration(id)*time.Hour + 30*time.Minute),
	}
	for i, name := range steps {
		f := factor * (1 + jitter*float64(1+i%3))
		if factor != 1 && i%3 == 0 {
			f *= 1.1
		}
		res := WithHW(metrics.StepResult{
			Name: name, Status: metrics.StatusOK, StartedAt: Start.Add(time.Duration(i) * 3 * time.Second),
			Seconds: 2, Kind: "read-write", Primary: "point-query",
			Labels: []metrics.LabelStats{QueryLabel(int64(20000 * f * float64(1+i%5))), RowsLabel("insert", 200, 100)},
			Audit:  metrics.Audit{Status: "ok"}, ClientCPUSec: 0.4,
		}, HW(1.6/f, 1.1/f, 0.4, 1024),
			metrics.ConnCPU{Role: "query", Sessions: 1, CPUSec: 1.0 / f}, metrics.ConnCPU{Role: "insert", Sessions: 1, CPUSec: 0.05})
		st := store.Step{ID: id*100 + int64(i), Seq: i, Group: sysbenchGroup(name), Result: res}
		for s := range 2 {
			st.Intervals = append(st.Intervals, RWIntervals(100, 0, [3]int64{int64(10000 * f * float64(1+i%5)), 100, -1})[0])
			st.Intervals[s].Seq, st.Intervals[s].Start, st.Intervals[s].End = s, Sec(float64(s)), Sec(float64(s+1))
		}
		r.Steps = append(r.Steps, st)
	}
	return r
}

// ManyStepsRuns are the runs of configs a (base) and b (faster on every third step),
// 4 each, of a sysbench suite of steps (SysbenchSteps: a 41-step comparison).
func ManyStepsRuns(steps []string) []store.Run {
	var runs []store.Run
	for gi, name := range []string{"a", "b"} {
		for i, j := range []float64{-0.01, 0, 0.012, 0.004} {
			runs = append(runs, ManyStepsRun(int64(10*gi+i+1), name, steps, 1+0.02*float64(gi), j))
		}
	}
	return runs
}

// ManyStepsFixture is ManyStepsRuns as a report and its configs a and b.
func ManyStepsFixture(steps []string) (report.Report, []report.Group) {
	runs := ManyStepsRuns(steps)
	groups := []report.Group{{Name: "a"}, {Name: "b"}}
	for i, r := range runs {
		groups[i/4].RunIDs = append(groups[i/4].RunIDs, r.ID)
	}
	rep := report.Build(runs)
	rep.Location = time.UTC
	return rep, groups
}

// Save stores runs in st as a run would (their steps, intervals and results), each
// under a new id, and returns the ids.
func Save(ctx context.Context, st *store.Store, runs ...store.Run) ([]int64, error) {
	var ids []int64
	for _, r := range runs {
		id, err := st.BeginRun(ctx, r.RunMeta)
		if err != nil {
			return nil, fmt.Errorf("reporttest: save run %d: %w", r.ID, err)
		}
		for _, s := range r.Steps {
			sid, err := st.BeginStep(ctx, id, s.Seq, s.Result.Name, s.Group, s.Result.StartedAt)
			if err == nil {
				err = st.AppendIntervals(ctx, sid, s.Intervals)
			}
			if err == nil {
				err = st.FinishStep(ctx, sid, s.Result)
			}
			if err != nil {
				return nil, fmt.Errorf("reporttest: save run %d, step %s: %w", r.ID, s.Result.Name, err)
			}
		}
		if err := st.FinishRun(ctx, id, r.Status, r.FinishedAt); err != nil {
			return nil, fmt.Errorf("reporttest: save run %d: %w", r.ID, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// TPCCGroups are TPROC-C's step groups as a run stores them, with its figures per
// minute (NOPM: new-order; TPM: the five committed transaction types).
func TPCCGroups() []store.StepGroup {
	return []store.StepGroup{{Name: "run", Title: "transactions (new orders/s: NOPM ÷ 60)", PerMinute: []store.PerMinute{
		{Name: "NOPM", Title: "committed new orders per minute (HammerDB's)", Labels: []string{"new-order"}},
		{Name: "TPM", Title: "committed transactions per minute, the five types (HammerDB's)",
			Labels: []string{"new-order", "payment", "order-status", "delivery", "stock-level"}},
	}}}
}

// TPCCRun is a run of TPROC-C's run step, 10 s, trial "b<block>/s1" of sweep s: per
// second newOrders new-order transactions, as many payments, a tenth as many of each
// other type and a hundredth rolled back on purpose.
func TPCCRun(id int64, label string, block int, newOrders int64) store.Run {
	label1 := func(name string, n int64) metrics.LabelStats {
		return metrics.LabelStats{Label: name, Role: "transaction", Unit: metrics.UnitOps, Statements: 10 * n, Events: 10 * n,
			Rows: 10 * n, Service: Lat(900, 1500, 2100, 4800, 9000)}
	}
	res := metrics.StepResult{Name: "run", Status: metrics.StatusOK, StartedAt: Start, Seconds: 10, Kind: "write", Primary: "new-order",
		Labels: []metrics.LabelStats{label1("new-order", newOrders), label1("payment", newOrders), label1("order-status", newOrders/10),
			label1("delivery", newOrders/10), label1("stock-level", newOrders/10), label1("new-order-rollback", newOrders/100)},
		Audit: metrics.Audit{Status: "ok"}, ClientCPUSec: 0.5}
	return store.Run{ID: id,
		RunMeta: store.RunMeta{Workload: "tproc-c", WorkloadVersion: 1, Engine: "postgres", EngineVersion: "15.18",
			Label: label, Seed: 1, StartedAt: Start.Add(time.Duration(id) * time.Minute), StepGroups: TPCCGroups(),
			Params: map[string]any{store.ParamSweep: "s", store.ParamTrial: fmt.Sprintf("b%d/s1", block)}},
		Status: store.RunOK, FinishedAt: Start.Add(time.Duration(id)*time.Minute + 30*time.Second),
		Steps: []store.Step{{ID: id * 10, Seq: 0, Group: "run", Result: res}},
	}
}
