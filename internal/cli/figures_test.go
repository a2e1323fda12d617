package cli

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/mariadb"
	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/server"
	mariadbserver "github.com/dbperf/dbperf/internal/server/mariadb"
	"github.com/dbperf/dbperf/internal/session"
	"github.com/dbperf/dbperf/internal/workload"
)

// busyWorker runs one CPU-heavy statement per op on its session.
type busyWorker struct{ s engine.Session }

func (w *busyWorker) Init(_ context.Context, s engine.Session) error { w.s = s; return nil }
func (w *busyWorker) Ready(context.Context) error                    { return nil }
func (w *busyWorker) Op(ctx context.Context) (int64, error) {
	return w.s.Exec(ctx, "DO BENCHMARK(2000000, MD5('dbperf'))")
}
func (w *busyWorker) Close() error { return nil }

type busyStep struct{}

func (busyStep) Name() string                                 { return "busy" }
func (busyStep) Group() string                                { return "" }
func (busyStep) Prepare(context.Context, engine.Handle) error { return nil }
func (busyStep) Load(context.Context, engine.Handle) (workload.Load, error) {
	return workload.Load{Kind: "read-write", Primary: "busy", Duration: 2 * time.Second,
		Groups: []workload.Group{{Label: "busy", Role: "query", Unit: workload.UnitOps, Workers: []workload.Worker{&busyWorker{}}}}}, nil
}
func (busyStep) Verify(context.Context, engine.Handle) (string, error) { return "", nil }

type quietObserver struct{}

func (quietObserver) StepStarted(string, workload.Load) {}
func (quietObserver) Interval(string, metrics.Interval) {}

// processCPU is the test's own reading of a process's CPU: utime+stime+cutime+cstime.
func processCPU(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	var sec float64
	for _, i := range []int{11, 12, 13, 14} {
		v, _ := strconv.ParseFloat(f[i], 64)
		sec += v / 100
	}
	return sec
}

// TestDSNMariaDBWithoutPerformanceSchema is issue 9's acceptance for a server dbperf did
// not start: a MariaDB with performance_schema=OFF (so no connection names its thread)
// reached by --dsn is found from the socket it listens on; a step's server CPU is the
// test's own reading of /proc/<mariadbd>/stat; per-connection CPU is absent with the
// reason; and `dbperf run --dsn` reports server CPU in every step.
func TestDSNMariaDBWithoutPerformanceSchema(t *testing.T) {
	needServer(t, "mariadb")
	ctx := context.Background()
	tmp := serverWorkdir(t)
	profiles := filepath.Join(tmp, "profiles")
	def, err := os.ReadFile("../../profiles/mariadb/default.cnf")
	if err != nil {
		t.Fatal(err)
	}
	off := strings.Replace(string(def), "performance_schema=ON", "performance_schema=OFF", 1)
	if off == string(def) {
		t.Fatal("the default MariaDB profile does not set performance_schema=ON any more")
	}
	if err := os.MkdirAll(filepath.Join(profiles, "mariadb"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profiles, "mariadb", "noperf.cnf"), []byte(off), 0o644); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	in, err := mariadbserver.Start(sctx, server.Options{WorkDir: tmp, Profile: "noperf", ProfilesDir: profiles, StorageEngine: "innodb"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })

	h, err := mariadb.New("innodb").Open(ctx, engine.Target{DSN: in.DSN})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	smp, err := hwstat.New()
	if err != nil {
		t.Fatal(err)
	}
	// Found from the unix socket of the DSN, and from the TCP port for a TCP DSN.
	tcp, err := mariadb.New("innodb").Open(ctx, engine.Target{DSN: in.TCPDSN})
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	var ht runner.HWTargets
	for _, tc := range []struct {
		h     engine.Handle
		where string
	}{{tcp, "listening on tcp 127.0.0.1:"}, {h, "listening on unix " + in.Socket}} {
		env := map[string]string{}
		ht, _ = session.HWTargets(ctx, engine.Meta{Name: "mariadb", Kind: engine.KindSQL}, &session.Target{Handle: tc.h}, engine.Info{}, smp, env)
		if ht.ServerPID != in.PID() || ht.Remote || !strings.Contains(env["server_processes"], tc.where) {
			t.Fatalf("server found: pid %d (mariadbd is %d), env %v, want %q", ht.ServerPID, in.PID(), env, tc.where)
		}
	}

	r := &runner.Runner{Handle: h, Interval: 500 * time.Millisecond, Sampler: smp, HW: ht}
	before := processCPU(t, in.PID())
	res := r.Run(ctx, busyStep{}, quietObserver{})
	own := processCPU(t, in.PID()) - before
	if res.Status != metrics.StatusOK || res.HW == nil || !res.HW.Server.Known {
		t.Fatalf("step %s %s: HW %+v", res.Status, res.Error, res.HW)
	}
	t.Logf("server CPU %.2fs, the test's reading %.2fs; conn %v; note %q", res.HW.Server.CPUSec, own, res.ConnCPU, res.Note)
	if own < 0.5 || math.Abs(res.HW.Server.CPUSec-own) > 0.1*own+0.05 {
		t.Errorf("server CPU %.2fs, the test's /proc reading %.2fs", res.HW.Server.CPUSec, own)
	}
	if len(res.ConnCPU) != 0 || !strings.Contains(res.Note, "per-connection CPU incomplete") || !strings.Contains(res.Note, "performance_schema is off") {
		t.Errorf("per-connection CPU must be absent with the reason: %v, note %q", res.ConnCPU, res.Note)
	}

	results := filepath.Join(tmp, "r.db")
	code, _, stderr := runCLI(t, nil, "run", "insertbench", "--engine", "mariadb", "--dsn", in.DSN, "--scale", "tiny",
		"--steps", "l.i0,l.x,cleanup", "--quiet", "--results", results)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	run := reportJSON(t, results).Runs[0]
	if !strings.HasPrefix(run.Env["server_processes"], fmt.Sprintf("local server (--dsn): pid %d ", in.PID())) {
		t.Errorf("env: %v", run.Env)
	}
	for _, st := range run.Steps {
		server, _ := st.HW["server"].(map[string]any)
		cpu, ok := server["cpu_sec"].(float64)
		_, perOp := st.HW["server_cpupq"].(float64)
		if st.Status != "ok" || !ok || cpu <= 0 || !perOp {
			t.Errorf("%s (%s): server CPU %v, server_cpupq %v; absent %v", st.Name, st.Status, server["cpu_sec"], st.HW["server_cpupq"], st.HW["absent"])
		}
		if len(st.ConnCPU) != 0 || !strings.Contains(st.Note, "performance_schema is off") {
			t.Errorf("%s: conn_cpu %v must be absent, and the note say why: %q", st.Name, st.ConnCPU, st.Note)
		}
	}
}
