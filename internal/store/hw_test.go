package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/metrics"
)

func testHW(server, io bool) *metrics.HW {
	h := &metrics.HW{
		CPU: hwstat.CPUTimes{UserSec: 1.5, NiceSec: 0.01, SystemSec: 0.5, IdleSec: 2, IOWaitSec: 0.25,
			IRQSec: 0.02, SoftIRQSec: 0.03, StealSec: 0.04, ElapsedSec: 4.6, TasksSec: 2.25},
		ContextSwitches: 12345,
		Client: metrics.ProcHW{Known: true, Processes: 1, CPUSec: 0.7, PeakMemBytes: 50 << 20,
			IOKnown: true, ReadBytes: 0, WriteBytes: 4096},
	}
	if io {
		h.Devices = []string{"vda", "vdb"}
		h.ReadOps, h.ReadBytes, h.WriteOps, h.WriteBytes = 10, 40960, 300, 9<<20
	}
	h.Remote = !server
	if server {
		h.Server = metrics.ProcHW{Known: true, Processes: 9, CPUSec: 3.25, PeakMemBytes: 300 << 20,
			IOKnown: true, ReadBytes: 8192, WriteBytes: 7 << 20}
	}
	return h
}

// TestHWRoundTrip: HW per interval and step, per-connection CPU, metrics and database size
// read back as written; unmeasured parts (no devices, invisible server, unknown size) read
// back as absent, not zero.
func TestHWRoundTrip(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := b.open(t)
			runID, err := s.BeginRun(ctx, testMeta("hw"))
			if err != nil {
				t.Fatal(err)
			}
			for seq, tc := range []struct {
				name        string
				server, io  bool
				size        bool
				conn        []metrics.ConnCPU
				metrics     map[string]float64
				intervalsHW bool
			}{
				{"all measured", true, true, true,
					[]metrics.ConnCPU{{Role: "query", Sessions: 1, CPUSec: 1.25}, {Role: "insert", Sessions: 2, CPUSec: 0.5}},
					map[string]float64{"cpupq": 12.5, "wkbpi": 0.75}, true},
				{"remote server, tmpfs", false, false, false, nil, map[string]float64{"cpupq": 3}, true},
				{"not sampled", false, false, false, nil, nil, false},
			} {
				t.Run(tc.name, func(t *testing.T) {
					res := metrics.StepResult{Name: "qr100", Status: metrics.StatusOK, StartedAt: t0, Seconds: 2,
						Kind: "read-write", Primary: "range-query", ClientCPUSec: 0.7,
						ConnCPU: tc.conn, Metrics: tc.metrics}
					var ivs []metrics.Interval
					for seq := range 2 {
						v := iv(seq)
						if tc.intervalsHW {
							v.HW = testHW(tc.server, tc.io)
							res.HW = testHW(tc.server, tc.io)
						}
						ivs = append(ivs, v)
					}
					if tc.size {
						res.DBSizeBytes, res.DBSizeKnown = 123456789, true
					}
					id, err := s.BeginStep(ctx, runID, seq, res.Name, "", t0)
					if err != nil {
						t.Fatal(err)
					}
					if err := s.AppendIntervals(ctx, id, ivs); err != nil {
						t.Fatal(err)
					}
					// FinishStep twice: the second replaces the first.
					if err := s.FinishStep(ctx, id, res); err != nil {
						t.Fatal(err)
					}
					if err := s.FinishStep(ctx, id, res); err != nil {
						t.Fatal(err)
					}
					var got metrics.StepResult
					var gotIvs []metrics.Interval
					runs, err := s.Results(ctx, []int64{runID})
					if err != nil {
						t.Fatal(err)
					}
					for _, st := range runs[0].Steps {
						if st.ID == id {
							got, gotIvs = st.Result, st.Intervals
						}
					}
					if !reflect.DeepEqual(got.HW, res.HW) {
						t.Errorf("HW = %+v\nwant %+v", got.HW, res.HW)
					}
					if !reflect.DeepEqual(got.ConnCPU, res.ConnCPU) || !reflect.DeepEqual(got.Metrics, res.Metrics) {
						t.Errorf("conn %v metrics %v; want %v %v", got.ConnCPU, got.Metrics, res.ConnCPU, res.Metrics)
					}
					if got.DBSizeKnown != tc.size || got.DBSizeBytes != res.DBSizeBytes {
						t.Errorf("db size %d %v", got.DBSizeBytes, got.DBSizeKnown)
					}
					for i := range ivs {
						if !reflect.DeepEqual(gotIvs[i].HW, ivs[i].HW) {
							t.Errorf("interval %d HW = %+v, want %+v", i, gotIvs[i].HW, ivs[i].HW)
						}
					}
				})
			}
		})
	}
}

// TestMigrateV1: a store written by schema 1 (before HW) opens, is migrated to the newest
// schema, keeps its runs, and its steps read back without HW.
func TestMigrateV1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(migrations()[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO runs (workload, workload_version, engine, engine_version, engine_settings,
		label, seed, params, env, status, started_at, finished_at, pid, pid_start_ticks, boot_id)
		VALUES ('insertbench', 1, 'sqlite', '3', '{}', 'old', 1, '{}', '{}', 'ok', ?, ?, 1, 0, '')`,
		formatTime(t0), formatTime(t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO steps (run_id, seq, name, status, started_at, seconds, kind, primary_label, client_cpu_sec)
		VALUES (1, 0, 'l.i0', 'ok', ?, 2, 'load', 'insert', 0.5)`, formatTime(t0)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenExisting(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v := userVersion(t, path); v != SchemaVersion {
		t.Errorf("user_version = %d after migration, want %d", v, SchemaVersion)
	}
	runs, err := s.Results(ctx, []int64{1})
	if err != nil {
		t.Fatal(err)
	}
	st := runs[0].Steps[0].Result
	if runs[0].Label != "old" || st.Name != "l.i0" || st.ClientCPUSec != 0.5 || st.HW != nil || st.Metrics != nil || st.DBSizeKnown {
		t.Errorf("migrated run: label %q, step %+v", runs[0].Label, st)
	}
}

// TestMigrateV2: HW stored by schema 2 (before the elapsed and the processes' CPU time)
// reads back with both unknown, so busy time is the ticks' as it was measured then.
func TestMigrateV2(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v2.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations()[:2] {
		if _, err := db.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`PRAGMA user_version = 2`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO runs (workload, workload_version, engine, engine_version, engine_settings,
		label, seed, params, env, status, started_at, finished_at, pid, pid_start_ticks, boot_id)
		VALUES ('insertbench', 1, 'postgres', '15', '{}', 'v2', 1, '{}', '{}', 'ok', ?, ?, 1, 0, '')`,
		formatTime(t0), formatTime(t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO steps (run_id, seq, name, status, started_at, seconds, kind, primary_label, client_cpu_sec)
		VALUES (1, 0, 'l.i0', 'ok', ?, 2, 'load', 'insert', 0.5)`, formatTime(t0)); err != nil {
		t.Fatal(err)
	}
	v2Columns := strings.TrimSuffix(hwColumns, ", cpu_elapsed_sec, cpu_tasks_sec")
	args := append([]any{1}, hwArgs(testHW(true, true))...)
	if _, err := db.Exec(`INSERT INTO step_hw (step_id, `+v2Columns+`) VALUES (?, `+strings.TrimSuffix(hwPlaceholders, ", ?, ?")+`)`,
		args[:len(args)-2]...); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenExisting(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Results(ctx, []int64{1})
	if err != nil {
		t.Fatal(err)
	}
	h := runs[0].Steps[0].Result.HW
	if h == nil || h.CPU.ElapsedSec != 0 || h.CPU.TasksSec != 0 || h.CPU.BusySec() != h.CPU.TickBusySec() || h.Server.CPUSec != 3.25 {
		t.Errorf("schema-2 HW read back as %+v", h)
	}
}
