package report

import (
	"encoding/json"
	"time"

	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/store"
)

var fixtureStart = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// lat is a latency with a p99.99 halfway between p99.9 and the max, except for ops whose
// max is under 9 ms (the queries): those read like runs stored before p99.99 was kept,
// so the goldens show both a p99.99 and its absence.
func lat(p50, p90, p99, p999, mx int64) metrics.Latency {
	l := metrics.Latency{P50: p50, P90: p90, P99: p99, P999: p999, Max: mx}
	if mx >= 9000 {
		l.P9999 = (p999 + mx) / 2
	}
	return l
}

// rowsLabel is an insert or delete label; target > 0 makes it a rate-limited background writer.
func rowsLabel(name string, rows int64, target float64) metrics.LabelStats {
	l := metrics.LabelStats{
		Label: name, Role: name, Unit: metrics.UnitRows,
		Statements: rows / 50, Events: rows / 50, Rows: rows,
		Service: lat(900, 1500, 2100, 4800, 9000),
	}
	if target > 0 {
		l.TargetPerSec, l.Background, l.HasResponse = target, true, true
		l.Late, l.Missed = 3, 1
		l.Response = lat(950, 1700, 3200, 8000, 12500)
	}
	return l
}

func queryLabel(stmts int64) metrics.LabelStats {
	return metrics.LabelStats{
		Label: "point-query", Role: "query", Unit: metrics.UnitOps,
		Statements: stmts, Events: stmts, Rows: stmts * 10, Errors: 2,
		Service: lat(150, 260, 410, 1200, 5300),
	}
}

// rwIntervals are 1 s intervals, the last one tail seconds long when tail > 0: per interval
// query statements and insert and delete rows (rate-limited to target); a negative count
// leaves the label out of that interval.
func rwIntervals(target, tail float64, counts ...[3]int64) []metrics.Interval {
	var ivs []metrics.Interval
	for i, c := range counts {
		end := sec(float64(i + 1))
		if i == len(counts)-1 && tail > 0 {
			end = sec(float64(i) + tail)
		}
		iv := metrics.Interval{Seq: i, Start: sec(float64(i)), End: end, ClientCPUSec: 0.11}
		if c[0] >= 0 {
			iv.Labels = append(iv.Labels, queryLabel(c[0]))
		}
		if c[1] >= 0 {
			iv.Labels = append(iv.Labels, rowsLabel("insert", c[1], target))
		}
		if c[2] >= 0 {
			iv.Labels = append(iv.Labels, rowsLabel("delete", c[2], target))
		}
		ivs = append(ivs, iv)
	}
	return ivs
}

// fixtureHW is what a managed server's step sampled: cpu busy seconds, device IO, server
// and client processes.
func fixtureHW(busy, serverCPU, clientCPU float64, writeKB uint64) *metrics.HW {
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

// withHW adds sampled HW, per-connection CPU and the database size to a step result and
// derives its metrics as the runner does.
func withHW(r metrics.StepResult, hw *metrics.HW, conn ...metrics.ConnCPU) metrics.StepResult {
	r.HW, r.ConnCPU = hw, conn
	r.DBSizeBytes, r.DBSizeKnown = 3<<29+12345, true
	r.Metrics = r.Efficiency()
	return r
}

// withMetrics derives the metrics of a step whose HW was not sampled.
func withMetrics(r metrics.StepResult) metrics.StepResult {
	r.Metrics = r.Efficiency()
	return r
}

// fixture is two stored runs: a failed run with a load step, a cleanup step with a note,
// a read-write step whose delete misses its SLA, and a failed step; and an interrupted
// run read back from a dead process (no label, no params, step without totals).
// ibGroups are the Insert Benchmark's step groups as it stores them with a run.
func ibGroups() []store.StepGroup {
	return []store.StepGroup{{Name: "write", Title: "write (l.*)"}, {Name: "range", Title: "range (qr*)"}, {Name: "point", Title: "point (qp*)"}}
}

func fixture() []store.Run {
	load := store.Step{ID: 1, Seq: 1, Group: "write",
		Result: withHW(metrics.StepResult{
			Name: "l.i0", Status: metrics.StatusOK, StartedAt: fixtureStart.Add(time.Second),
			Seconds: 2, Kind: "load", Primary: "insert",
			Labels:       []metrics.LabelStats{rowsLabel("insert", 100000, 0)},
			Audit:        metrics.Audit{Status: "ok", Detail: "pi1: 100000 rows = 100000 inserted - 0 deleted"},
			ClientCPUSec: 0.8,
		}, fixtureHW(2.6, 1.5, 0.8, 51200), metrics.ConnCPU{Role: "insert", Sessions: 1, CPUSec: 1.25}),
		Intervals: []metrics.Interval{
			{Seq: 0, Start: 0, End: sec(1), Labels: []metrics.LabelStats{rowsLabel("insert", 48000, 0)}, ClientCPUSec: 0.39,
				HW: fixtureHW(1.2, 0.7, 0.39, 20480)},
			{Seq: 1, Start: sec(1), End: sec(2), Labels: []metrics.LabelStats{rowsLabel("insert", 52000, 0)}, ClientCPUSec: 0.41,
				HW: fixtureHW(1.4, 0.8, 0.41, 30720)},
		},
	}
	cleanup := store.Step{ID: 2, Seq: 2,
		Result: metrics.StepResult{
			Name: "cleanup", Status: metrics.StatusOK, StartedAt: fixtureStart.Add(4 * time.Second),
			Seconds: 0.4, Kind: "maintenance",
			Note: "PRAGMA wal_checkpoint(TRUNCATE) and ANALYZE took 0.4 s",
		},
	}
	// insert: 510 rows in 5.3 s = 96.2/s ≥ 95 (ok); every full interval at 100/s, the
	// 0.3 s tail (10 rows = 33/s) is excluded. delete: 460 rows = 86.8/s (failed); 3 of
	// the 5 full intervals are below 95/s.
	qp100 := store.Step{ID: 3, Seq: 3, Group: "point",
		Result: withHW(metrics.StepResult{
			Name: "qp100", Status: metrics.StatusOK, StartedAt: fixtureStart.Add(5 * time.Second),
			Seconds: 5.3, Kind: "read-write", Primary: "point-query",
			Labels: []metrics.LabelStats{
				queryLabel(26500),
				rowsLabel("insert", 510, 100),
				rowsLabel("delete", 460, 100),
			},
			Audit:        metrics.Audit{Status: "ok"},
			ClientCPUSec: 0.53,
		}, fixtureHW(6.1, 4.4, 0.53, 2048),
			metrics.ConnCPU{Role: "query", Sessions: 1, CPUSec: 3.1},
			metrics.ConnCPU{Role: "insert", Sessions: 1, CPUSec: 0.12},
			metrics.ConnCPU{Role: "delete", Sessions: 1, CPUSec: 0.9}),
		Intervals: rwIntervals(100, 0.3,
			[3]int64{5000, 100, 100}, [3]int64{5000, 100, 90}, [3]int64{5000, 100, 80},
			[3]int64{5000, 100, 100}, [3]int64{5000, 100, 85}, [3]int64{1500, 10, 5}),
	}
	qp500 := store.Step{ID: 4, Seq: 4, Group: "point",
		Result: withMetrics(metrics.StepResult{
			Name: "qp500", Status: metrics.StatusFailed, Error: "delete: ERROR: canceling statement due to statement timeout (SQLSTATE 57014)",
			StartedAt: fixtureStart.Add(11 * time.Second), Seconds: 1.5, Kind: "read-write", Primary: "point-query",
			Labels: []metrics.LabelStats{
				queryLabel(7000),
				rowsLabel("insert", 700, 500),
				rowsLabel("delete", 650, 500),
			},
			ClientCPUSec: 0.2,
		}),
		Intervals: rwIntervals(500, 0.5, [3]int64{5000, 500, 480}, [3]int64{2000, 200, -1}),
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
			StartedAt: fixtureStart, StepGroups: ibGroups(),
		},
		Status:     store.RunFailed,
		FinishedAt: fixtureStart.Add(2 * time.Minute),
		Steps:      []store.Step{load, cleanup, qp100, qp500},
	}
	run8 := store.Run{
		ID: 8,
		RunMeta: store.RunMeta{
			Workload: "insertbench", WorkloadVersion: 3, Engine: "sqlite", EngineVersion: "3.46.1",
			Seed: 1, StartedAt: fixtureStart.Add(time.Hour),
		},
		Status: store.RunInterrupted,
		Steps: []store.Step{{ID: 5, Seq: 1,
			Result: metrics.StepResult{Name: "l.i0", Status: metrics.StatusInterrupted, Seconds: 1},
			Intervals: []metrics.Interval{
				{Seq: 0, Start: 0, End: sec(1), Labels: []metrics.LabelStats{rowsLabel("insert", 40000, 0)}, ClientCPUSec: 0.3},
			},
		}},
	}
	return []store.Run{run7, run8}
}
