package runner

import (
	"bufio"
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
	"github.com/dbperf/dbperf/internal/engine/postgres"
	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/server"
	pgserver "github.com/dbperf/dbperf/internal/server/postgres"
	"github.com/dbperf/dbperf/internal/workload"
)

// The test's own reading of /proc, written apart from hwstat so that it checks hwstat's
// and the runner's arithmetic rather than repeating it.

// procReading is a process tree's CPU seconds — each process's utime+stime and the
// utime+stime of the children it waited for — and its IO bytes (which the kernel sums
// with waited-for children's), and which pids the tree had.
type procReading struct {
	cpuSec     float64
	writeBytes int64 // write_bytes − cancelled_write_bytes
	pids       map[int]bool
	ioReadAll  bool
	// allCPUSec is the same CPU sum over every process of the machine.
	allCPUSec float64
}

// cpuOf is utime+stime+cutime+cstime (fields 14–17) of a split stat line.
func cpuOf(f []string) float64 {
	var sec float64
	for _, i := range []int{11, 12, 13, 14} {
		v, _ := strconv.ParseFloat(f[i], 64)
		sec += v / 100
	}
	return sec
}

// readStat splits /proc/PID/stat after the command name: field 3 (state) is f[0].
func readStat(pid int) ([]string, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(s[i+2:]), true
}

// reapMark is root's count of its waited-for children's minor faults and CPU ticks
// (fields 11, 16, 17), which change whenever it waits for a child.
func reapMark(root int) string {
	f, ok := readStat(root)
	if !ok {
		return ""
	}
	return f[8] + " " + f[13] + " " + f[14]
}

// readTree reads the process tree under root: every process whose chain of parents leads
// to root. It reads again when root waited for a child meanwhile (the child could be
// missed, or counted twice).
func readTree(t *testing.T, root int) procReading {
	t.Helper()
	for {
		before := reapMark(root)
		r := readTreeOnce(t, root)
		if reapMark(root) == before {
			return r
		}
	}
}

func readTreeOnce(t *testing.T, root int) procReading {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	stats := map[int][]string{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, ok := readStat(pid); ok {
			stats[pid] = f
		}
	}
	in := func(pid int) bool {
		for range 64 {
			if pid == root {
				return true
			}
			f, ok := stats[pid]
			if !ok {
				return false
			}
			pid, _ = strconv.Atoi(f[1]) // ppid
		}
		return false
	}
	r := procReading{pids: map[int]bool{}, ioReadAll: true}
	for pid, f := range stats {
		r.allCPUSec += cpuOf(f)
		if !in(pid) {
			continue
		}
		r.pids[pid] = true
		r.cpuSec += cpuOf(f)
		io, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
		if err != nil {
			r.ioReadAll = false
			continue
		}
		for _, line := range strings.Split(string(io), "\n") {
			k, v, _ := strings.Cut(line, ": ")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "write_bytes":
				r.writeBytes += n
			case "cancelled_write_bytes":
				r.writeBytes -= n
			}
		}
	}
	return r
}

// selfCPU is this process's utime+stime.
func selfCPU(t *testing.T) float64 {
	f, ok := readStat(os.Getpid())
	if !ok {
		t.Fatal("cannot read /proc/self/stat")
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100
}

// machineReading is /proc/stat's idle, iowait and steal seconds, its busy ticks, the CPUs
// online, and when it was read: shown beside the processes' CPU, which the ticks miss.
type machineReading struct {
	at                        time.Time
	idle, iowait, steal, busy float64
	cpus                      int
}

func readMachine(t *testing.T) machineReading {
	t.Helper()
	m := machineReading{at: time.Now()}
	f, err := os.Open("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		switch {
		case len(fs) > 8 && fs[0] == "cpu":
			v := make([]float64, 8)
			for i := range v {
				v[i], _ = strconv.ParseFloat(fs[i+1], 64)
				v[i] /= 100
			}
			m.busy = v[0] + v[1] + v[2] + v[5] + v[6]
			m.idle, m.iowait, m.steal = v[3], v[4], v[7]
		case strings.HasPrefix(fs[0], "cpu"):
			m.cpus++
		}
	}
	return m
}

// startPostgres starts a managed PostgreSQL for a test and opens a handle on it.
func startPostgres(t *testing.T) (*server.Instance, engine.SQL) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a database server")
	}
	if _, err := os.Stat("/usr/lib/postgresql/15/bin/postgres"); err != nil {
		t.Skipf("postgres not installed (make test installs it): %v", err)
	}
	dir, err := os.MkdirTemp("", "dbperf-runner-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // a managed PostgreSQL runs unprivileged
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	in, err := pgserver.Start(ctx, server.Options{WorkDir: dir, Profile: "default",
		ProfilesDir: filepath.Join("..", "..", "profiles")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	h, err := postgres.New().Open(ctx, engine.Target{DSN: in.DSN})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return in, h.(engine.SQL)
}

// cleanupWorker asks the engine for its cleanup once, as the Insert Benchmark's cleanup
// step does: the engine opens connections of its own.
type cleanupWorker struct {
	h      engine.SQL
	tables []string
	done   bool
	// init runs when the worker's session is open, just before the step's first sample.
	init func()
}

func (w *cleanupWorker) Init(context.Context, engine.Session) error {
	if w.init != nil {
		w.init()
	}
	return nil
}
func (w *cleanupWorker) Ready(context.Context) error { return nil }
func (w *cleanupWorker) Op(ctx context.Context) (int64, error) {
	if w.done {
		return 0, workload.ErrDone
	}
	w.done = true
	_, err := w.h.(engine.Maintainer).ReduceDebt(ctx, w.tables)
	return 0, err
}
func (w *cleanupWorker) Close() error { return nil }

// transient says whether a PostgreSQL process comes and goes: a client backend, a
// parallel worker, an autovacuum worker (the auxiliary processes live as long as the
// postmaster).
func transient(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false // gone
	}
	cmd := string(b)
	if cmd == "" {
		return true // exiting, or exited and not yet waited for
	}
	for _, s := range []string{"127.0.0.1(", "[local]", "parallel worker", "autovacuum worker"} {
		if strings.Contains(cmd, s) {
			return true
		}
	}
	return false
}

// waitIdle waits until the server has no client backend nor worker left (the cleanup's
// backends have exited and been waited for, so the test's reading holds their whole CPU)
// and reads its tree; all but keep, which may stay.
func waitIdle(t *testing.T, root int, keep map[int]bool) procReading {
	t.Helper()
	var r procReading
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		r = readTree(t, root)
		busy := !r.ioReadAll // a process exited while the tree was read
		for pid := range r.pids {
			if !keep[pid] && transient(pid) {
				busy = true
			}
		}
		if !busy {
			return r
		}
	}
	t.Fatalf("the server's backends did not exit: %v", r.pids)
	return r
}

// TestFiguresAddUpOnPostgres checks the step figures of issue 9 against the test's own
// /proc readings on a managed PostgreSQL:
//   - a query loop (a client and a server passing work back and forth, where timer ticks
//     miss busy time): the machine's busy CPU is the test's reading of every process's
//     CPU, and is not below dbperf's and the server's; the server's CPU is the test's;
//   - the cleanup step, whose VACUUM connections exit within it: the server's CPU and
//     writes are the test's reading of the postmaster's tree (the postmaster's
//     waited-for-children counters hold the exited backends'), and conn_cpu.cleanup
//     counts those connections.
func TestFiguresAddUpOnPostgres(t *testing.T) {
	in, h := startPostgres(t)
	ctx := context.Background()
	smp, err := hwstat.New()
	if err != nil {
		t.Fatal(err)
	}
	devs, _ := smp.Devices(in.DataDir)
	r := &Runner{Handle: h, Interval: 500 * time.Millisecond, Sampler: smp,
		HW: HWTargets{ServerPID: in.PID(), Devices: devs}}
	root := in.PID()

	t.Run("query loop", func(t *testing.T) {
		step := &noopStep{load: workload.Load{Kind: "read-write", Primary: "query", Duration: 3 * time.Second,
			Groups: []workload.Group{{Label: "query", Role: "query", Unit: workload.UnitOps,
				Workers: []workload.Worker{&queryWorker{sql: "SELECT 1"}}}}}}
		m0, s0, c0 := readMachine(t), readTree(t, root), selfCPU(t)
		res := r.Run(ctx, step, &collector{})
		m1, s1, c1 := readMachine(t), readTree(t, root), selfCPU(t)
		if res.Status != metrics.StatusOK || res.HW == nil || !res.HW.Server.Known || res.HW.CPU.ElapsedSec <= 0 {
			t.Fatalf("step %s %s: HW %+v", res.Status, res.Error, res.HW)
		}
		hw := res.HW
		wall := m1.at.Sub(m0.at).Seconds()
		ownAll := s1.allCPUSec - s0.allCPUSec
		ownProcs := (c1 - c0) + (s1.cpuSec - s0.cpuSec)
		ticks := m1.busy - m0.busy
		notIdle := wall*float64(m1.cpus) - (m1.idle - m0.idle) - (m1.iowait - m0.iowait)
		t.Logf("step: busy %.2fs (ticks %.2fs), client %.2fs + server %.2fs; test: every process %.2fs, dbperf and server %.2fs, ticks %.2fs, not idle %.2fs (steal %.2fs) over %.2fs; note %q",
			hw.CPU.BusySec(), hw.CPU.TickBusySec(), hw.Client.CPUSec, hw.Server.CPUSec,
			ownAll, ownProcs, ticks, notIdle, m1.steal-m0.steal, wall, res.Note)
		if procs := hw.Client.CPUSec + hw.Server.CPUSec; hw.CPU.BusySec() < procs-0.05 || strings.Contains(res.Note, "machine busy CPU") {
			t.Errorf("machine busy %.2fs below client + server %.2fs (note %q)", hw.CPU.BusySec(), procs, res.Note)
		}
		// The test's span holds the step's and a little more (sessions opening and
		// closing), on a machine others may use too.
		if d := ownAll - hw.CPU.BusySec(); d < -0.05 || d > 0.1*ownAll+0.2 {
			t.Errorf("machine busy: step %.2fs, the test's reading of every process %.2fs", hw.CPU.BusySec(), ownAll)
		}
		// Per-process times are tick samples scaled to the exact runtime: on a saturated
		// machine their sum can pass the CPUs' not-idle time by a little.
		if ownAll < ownProcs-0.05 || ownAll > notIdle*1.03+0.1 {
			t.Errorf("the test's own readings: every process %.2fs, dbperf and the server %.2fs, CPUs not idle %.2fs", ownAll, ownProcs, notIdle)
		}
		if own := s1.cpuSec - s0.cpuSec; math.Abs(own-hw.Server.CPUSec) > 0.1*own+0.05 {
			t.Errorf("server CPU: step %.2fs, the test's reading %.2fs", hw.Server.CPUSec, own)
		}
	})

	t.Run("cleanup", func(t *testing.T) {
		tables := []string{"fa", "fb"}
		setup, err := h.NewSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range tables {
			for _, q := range []string{
				"CREATE TABLE " + tb + " (id bigserial PRIMARY KEY, a int, b text, c int) WITH (autovacuum_enabled = off)",
				"INSERT INTO " + tb + " (a, b, c) SELECT i, md5(i::text), i % 1000 FROM generate_series(1, 400000) i",
				"CREATE INDEX ON " + tb + " (a, c)",
				"CREATE INDEX ON " + tb + " (b)",
				"DELETE FROM " + tb + " WHERE id % 3 = 0",
			} {
				st, err := setup.Prepare(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := st.Exec(ctx, nil); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				st.Close()
			}
		}
		setup.Close()
		waitIdle(t, root, nil)
		var before procReading
		w := &cleanupWorker{h: h, tables: tables, init: func() {
			// The worker's own (idle) session is open: its backend stays.
			before = waitIdle(t, root, readTree(t, root).pids)
		}}
		step := &noopStep{load: workload.Load{Kind: "cleanup", Primary: "cleanup",
			Groups: []workload.Group{{Label: "cleanup", Role: "cleanup", Unit: workload.UnitOps, UntilDone: true,
				Workers: []workload.Worker{w}}}}}
		res := r.Run(ctx, step, &collector{})
		if res.Status != metrics.StatusOK || res.HW == nil || !res.HW.Server.Known {
			t.Fatalf("step %s %s: HW %+v", res.Status, res.Error, res.HW)
		}
		after := waitIdle(t, root, nil)
		own := after.cpuSec - before.cpuSec
		ownWrite := after.writeBytes - before.writeBytes
		conn := map[string]metrics.ConnCPU{}
		for _, c := range res.ConnCPU {
			conn[c.Role] = c
		}
		t.Logf("cleanup %.2fs: server CPU %.2fs, test %.2fs; server writes %d, test %d; conn %+v; note %q",
			res.Seconds, res.HW.Server.CPUSec, own, res.HW.Server.WriteBytes, ownWrite, res.ConnCPU, res.Note)
		if own < 0.2 {
			t.Fatalf("the cleanup used only %.2fs of CPU: too little to compare", own)
		}
		if math.Abs(res.HW.Server.CPUSec-own) > 0.15*own {
			t.Errorf("cleanup server CPU %.2fs, the test's /proc reading %.2fs: more than 15%% apart", res.HW.Server.CPUSec, own)
		}
		if !res.HW.Server.IOKnown || !before.ioReadAll || !after.ioReadAll || math.Abs(float64(res.HW.Server.WriteBytes)-float64(ownWrite)) > 0.15*float64(ownWrite)+(1<<20) {
			t.Errorf("cleanup server writes %d (known %v), the test's /proc reading %d", res.HW.Server.WriteBytes, res.HW.Server.IOKnown, ownWrite)
		}
		// The worker's own (idle) session, the cleanup's main connection and one per table.
		c := conn["cleanup"]
		if c.Sessions != 2+len(tables) || c.CPUSec < 0.3*own || c.CPUSec > res.HW.Server.CPUSec+1e-9 {
			t.Errorf("conn_cpu.cleanup %+v: want %d sessions, CPU ≥ 30%% of the server's %.2fs and within it", c, 2+len(tables), own)
		}
	})
}
