package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/mariadb"
	"github.com/dbperf/dbperf/internal/engine/postgres"
	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/server"
	mariadbserver "github.com/dbperf/dbperf/internal/server/mariadb"
	pgserver "github.com/dbperf/dbperf/internal/server/postgres"
	"github.com/dbperf/dbperf/internal/workload"
)

// queryWorker runs one statement per op on its own session.
type queryWorker struct {
	sql  string
	stmt engine.Stmt
}

func (w *queryWorker) Init(ctx context.Context, s engine.Session) (err error) {
	w.stmt, err = s.Prepare(ctx, w.sql)
	return err
}
func (w *queryWorker) Ready(context.Context) error { return nil }
func (w *queryWorker) Op(ctx context.Context) (int64, error) {
	return w.stmt.Query(ctx, nil)
}
func (w *queryWorker) Close() error { return w.stmt.Close() }

// idleWorker holds a session open and never runs an op.
type idleWorker struct{}

func (idleWorker) Init(context.Context, engine.Session) error { return nil }
func (idleWorker) Ready(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}
func (idleWorker) Op(context.Context) (int64, error) { return 0, workload.ErrDone }
func (idleWorker) Close() error                      { return nil }

type noopStep struct{ load workload.Load }

func (s *noopStep) Name() string                                               { return "conn-cpu" }
func (s *noopStep) Group() string                                              { return "" }
func (s *noopStep) Prepare(context.Context, engine.Handle) error               { return nil }
func (s *noopStep) Load(context.Context, engine.Handle) (workload.Load, error) { return s.load, nil }
func (s *noopStep) Verify(context.Context, engine.Handle) (string, error)      { return "", nil }

// TestConnCPUOnRealServers: on a managed PostgreSQL (a backend process per session) and
// MariaDB (a thread per session), the session running a CPU-heavy query shows far more
// server-side CPU than an idle session, the roles' sum stays within the server's total
// CPU for the step, and the step's HW figures and metrics are there.
func TestConnCPUOnRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts database servers")
	}
	for _, tc := range []struct {
		name, bin, heavy, storage string
		start                     func(context.Context, server.Options) (*server.Instance, error)
		eng                       engine.Engine
	}{
		{"postgres", "/usr/lib/postgresql/15/bin/postgres", "SELECT count(*) FROM generate_series(1, 3000000)", "",
			pgserver.Start, postgres.New()},
		{"mariadb", "/usr/sbin/mariadbd", "SELECT BENCHMARK(3000000, MD5('dbperf'))", "innodb",
			mariadbserver.Start, mariadb.New(mariadb.InnoDB)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat(tc.bin); err != nil {
				t.Skipf("%s not installed (make test installs it): %v", tc.name, err)
			}
			ctx := context.Background()
			dir, err := os.MkdirTemp("", "dbperf-runner-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			if err := os.Chmod(dir, 0o755); err != nil { // a managed PostgreSQL runs unprivileged
				t.Fatal(err)
			}
			sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			in, err := tc.start(sctx, server.Options{WorkDir: dir, Profile: "default",
				ProfilesDir: filepath.Join("..", "..", "profiles"), StorageEngine: tc.storage})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = in.Stop(context.Background()) })
			h, err := tc.eng.Open(ctx, engine.Target{DSN: in.DSN})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			smp, err := hwstat.New()
			if err != nil {
				t.Fatal(err)
			}
			devs, _ := smp.Devices(in.DataDir) // none on tmpfs: IO is then absent, not zero
			r := &Runner{Handle: h, Interval: 500 * time.Millisecond, Sampler: smp,
				HW: HWTargets{ServerPID: in.PID(), Devices: devs}}
			step := &noopStep{load: workload.Load{Kind: "read-write", Primary: "busy", Duration: 2 * time.Second,
				Groups: []workload.Group{
					{Label: "busy", Role: "busy", Unit: workload.UnitOps, Workers: []workload.Worker{&queryWorker{sql: tc.heavy}}},
					{Label: "idle", Role: "idle", Unit: workload.UnitOps, Workers: []workload.Worker{idleWorker{}}},
				}}}
			c := &collector{}
			res := r.Run(ctx, step, c)
			if res.Status != metrics.StatusOK {
				t.Fatalf("step %s: %s", res.Status, res.Error)
			}
			conn := map[string]float64{}
			for _, cc := range res.ConnCPU {
				if cc.Sessions != 1 {
					t.Errorf("%s: %d sessions measured, want 1", cc.Role, cc.Sessions)
				}
				conn[cc.Role] = cc.CPUSec
			}
			t.Logf("conn CPU %v, server %.2fs (%d processes), client %.2fs, note %q",
				conn, res.HW.Server.CPUSec, res.HW.Server.Processes, res.ClientCPUSec, res.Note)
			if _, ok := conn["idle"]; !ok || conn["busy"] < 0.5 || conn["busy"] < 10*conn["idle"] {
				t.Errorf("busy session %.2fs, idle %.2fs: want busy ≥ 0.5 s and ≥ 10× idle", conn["busy"], conn["idle"])
			}
			if res.HW == nil || !res.HW.Server.Known {
				t.Fatalf("server HW not measured: %+v", res.HW)
			}
			if sum := conn["busy"] + conn["idle"]; sum > res.HW.Server.CPUSec+1e-9 {
				t.Errorf("connections %.3fs > server total %.3fs", sum, res.HW.Server.CPUSec)
			}
			if res.HW.Server.PeakMemBytes == 0 || res.HW.CPU.BusySec() < conn["busy"]-0.05 {
				t.Errorf("server memory %d, machine busy %.2fs", res.HW.Server.PeakMemBytes, res.HW.CPU.BusySec())
			}
			for _, m := range []string{metrics.MetricCPUPerOp, metrics.MetricServerCPUPerOp, metrics.MetricClientCPUPerOp,
				metrics.MetricRSSGB, metrics.MetricDBGB, metrics.MetricMaxOpSec} {
				// The client waits on a few long server-side queries: its own CPU can be
				// under the kernel's accounting tick and read 0 (seen in CI), so
				// client_cpupq must be present, not positive.
				if v, ok := res.Metrics[m]; !ok || v < 0 || v == 0 && m != metrics.MetricClientCPUPerOp {
					t.Errorf("metric %s = %v, %v", m, v, ok)
				}
			}
			var ivServer float64
			for _, iv := range c.intervals {
				if iv.HW == nil || !iv.HW.Server.Known {
					t.Fatalf("interval %d without server HW", iv.Seq)
				}
				ivServer += iv.HW.Server.CPUSec
			}
			if d := ivServer - res.HW.Server.CPUSec; d > 1e-6 || d < -1e-6 {
				t.Errorf("intervals' server CPU %.6f ≠ step's %.6f", ivServer, res.HW.Server.CPUSec)
			}
		})
	}
}
