package insertbench

import (
	"context"
	"os"
	"path/filepath"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/mariadb"
	"github.com/dbperf/dbperf/internal/engine/postgres"
	"github.com/dbperf/dbperf/internal/engine/sqlite"
	"github.com/dbperf/dbperf/internal/hwstat"
	dbmetrics "github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/server"
	mariadbserver "github.com/dbperf/dbperf/internal/server/mariadb"
	pgserver "github.com/dbperf/dbperf/internal/server/postgres"
	"github.com/dbperf/dbperf/internal/workload"
)

// BenchmarkClient measures what dbperf's client costs per operation against real engines:
// the Insert Benchmark's actors (multi-row insert as in l.i0, delete as in l.i1, range query
// as in qr*, point query as in qp*) run through the runner's worker loop, exactly as in a
// run, on a managed PostgreSQL and MariaDB (InnoDB, MyRocks) server and on embedded SQLite.
// Besides ns/op (wall time per operation, server work included) it reports, counted from
// the first to the last measured operation only (setup, loading and the audit excluded):
//
//   - cpu-µs/op: dbperf's own CPU (user+system, getrusage) per operation. For SQLite the
//     engine runs inside dbperf, so this includes the engine's work.
//   - srv-cpu-µs/op: the server's CPU (every process of the managed server, /proc) per
//     operation, for scale: the client should cost far less than the server it measures.
//   - allocs/op: heap allocations per operation (runtime/metrics), replacing the
//     framework's count, which would include the setup.
//   - ctxsw/op: dbperf's voluntary+involuntary context switches per operation.
//
// Engines whose binaries are missing are skipped; `make test` installs them.
func BenchmarkClient(b *testing.B) {
	for _, e := range benchEngines() {
		b.Run(e.name, func(b *testing.B) {
			bs := e.open(b)
			b.Run("insert", bs.benchInsert)
			b.Run("delete", bs.benchDelete)
			b.Run("insert+delete", bs.benchInsertDelete)
			b.Run("range-query", func(b *testing.B) { bs.benchQuery(b, false) })
			b.Run("point-query", func(b *testing.B) { bs.benchQuery(b, true) })
		})
	}
}

type benchEngine struct {
	name string
	open func(b testing.TB) *benchSetup
}

func benchEngines() []benchEngine {
	return []benchEngine{
		{"sqlite", func(b testing.TB) *benchSetup {
			h, err := sqlite.New().Open(context.Background(), engine.Target{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = h.Close() })
			return &benchSetup{h: h.(engine.SQL)}
		}},
		{"postgres", func(b testing.TB) *benchSetup {
			return benchServer(b, "/usr/lib/postgresql/15/bin/postgres", pgserver.Start, server.Options{}, postgres.New())
		}},
		{"mariadb-innodb", func(b testing.TB) *benchSetup {
			return benchServer(b, "/usr/sbin/mariadbd", mariadbserver.Start,
				server.Options{StorageEngine: mariadb.InnoDB}, mariadb.New(mariadb.InnoDB))
		}},
		{"mariadb-rocksdb", func(b testing.TB) *benchSetup {
			if _, err := os.Stat("/usr/lib/mysql/plugin/ha_rocksdb.so"); err != nil {
				b.Skip("MyRocks plugin not installed (apt-get install mariadb-plugin-rocksdb)")
			}
			return benchServer(b, "/usr/sbin/mariadbd", mariadbserver.Start,
				server.Options{StorageEngine: mariadb.RocksDB}, mariadb.New(mariadb.RocksDB))
		}},
	}
}

// benchServer starts a managed server for the benchmark and opens the engine on it.
func benchServer(b testing.TB, bin string, start func(context.Context, server.Options) (*server.Instance, error),
	o server.Options, e engine.Engine) *benchSetup {
	b.Helper()
	if _, err := os.Stat(bin); err != nil {
		b.Skipf("%s not installed (make test installs it)", bin)
	}
	dir, err := os.MkdirTemp("", "dbperf-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755) // reachable by PostgreSQL's user when run as root
	o.WorkDir, o.ProfilesDir = dir, filepath.Join("..", "..", "..", "profiles")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	in, err := start(ctx, o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = in.Stop(context.Background()) })
	h, err := e.Open(ctx, engine.Target{DSN: in.DSN})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close() })
	return &benchSetup{h: h.(engine.SQL), serverPID: in.PID()}
}

// benchSetup is one engine under benchmark.
type benchSetup struct {
	h         engine.SQL
	serverPID int
	// queryPlan is the plan whose table holds the query benchmarks' rows and secondary
	// indexes (nil: not loaded, or changed since by another benchmark).
	queryPlan *plan
}

// plan is a one-client plan with rows rows for l.i0.
func (bs *benchSetup) plan(b *testing.B, rows int64) *plan {
	b.Helper()
	cfg := testConfig(b, 1)
	cfg.InsertBench.Rows = rows
	steps, err := planOf(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return steps[0].(*writeStep).p
}

// load creates the table with rows rows (l.i0) and, with index, the secondary indexes (l.x).
func (bs *benchSetup) load(b *testing.B, rows int64, index bool) *plan {
	b.Helper()
	p := bs.plan(b, rows)
	r := &runner.Runner{Handle: bs.h, Interval: time.Hour}
	steps := []workload.Step{&writeStep{stepBase: stepBase{StepBase: workload.NewStepBase(stepLoad, ""), p: p}, create: true, rpc: 1000, quota: rows}}
	if index {
		steps = append(steps, &indexStep{stepBase: stepBase{StepBase: workload.NewStepBase(stepIndex, ""), p: p}})
	}
	for _, s := range steps {
		if res := r.Run(context.Background(), s, nopObserver{}); res.Status != dbmetrics.StatusOK {
			b.Fatalf("load %s: %s %s", s.Name(), res.Status, res.Error)
		}
	}
	return p
}

// benchInsert: l.i0's insert actor, 100 rows per statement, into a table with its primary
// key only.
func (bs *benchSetup) benchInsert(b *testing.B) {
	p := bs.plan(b, int64(b.N)*rpcLoad)
	st := &writeStep{stepBase: stepBase{StepBase: workload.NewStepBase(stepLoad, ""), p: p}, create: true, rpc: rpcLoad, quota: int64(b.N) * rpcLoad}
	bs.queryPlan = nil
	bs.measure(b, st, nil)
}

// benchInsertDelete: l.i1 as it runs, its insert actor (50 rows per statement) and its
// delete actor (as many rows, from the head of the table) working concurrently on a table
// with its secondary indexes; an operation is one insert statement with the delete
// statement that goes with it (the CPU of both actors is counted).
func (bs *benchSetup) benchInsertDelete(b *testing.B) {
	bs.queryPlan = nil
	p := bs.load(b, 50_000, true)
	st := &writeStep{stepBase: stepBase{StepBase: workload.NewStepBase(stepWrite1, ""), p: p}, deletes: true, rpc: rpcWrite1, quota: int64(b.N) * rpcWrite1}
	bs.measureAll(b, st, nil, true)
}

// benchDelete: l.i1's delete actor, 50 rows per statement from the head of the table, on a
// table with its secondary indexes; the inserter is not run (it is taken as far ahead).
func (bs *benchSetup) benchDelete(b *testing.B) {
	bs.queryPlan = nil
	p := bs.load(b, int64(b.N)*rpcWrite1+1000, true)
	pr, err := newPair(true, false)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pr.actorClosed) // the inserter's share: the deleter's Close is the other
	pr.insRows.Store(1 << 40)
	st := &customStep{name: stepWrite1, label: labelDelete, unit: workload.UnitRows, worker: func() workload.Worker {
		return newDeleter(p, stepWrite1, p.clients[0], pr, bs.h.Dialect(), rpcWrite1, 0)
	}}
	bs.measure(b, st, nil)
}

// benchQuery: qr*'s range-query actor or qp*'s point-query actor (10 rows each) on a
// table of 200,000 rows with its secondary indexes.
func (bs *benchSetup) benchQuery(b *testing.B, point bool) {
	if bs.queryPlan == nil {
		bs.queryPlan = bs.load(b, 200_000, true)
	}
	p := bs.queryPlan
	name, label := "qr100", labelRangeQuery
	if point {
		name, label = "qp100", labelPointQuery
	}
	st := &customStep{name: name, label: label, unit: workload.UnitOps, worker: func() workload.Worker {
		return newQuerier(p, name, p.clients[0], bs.h.Dialect(), point)
	}}
	bs.measure(b, st, nil)
}

// measure runs step's load through the runner with the chosen worker metered: it returns
// ErrDone after b.N operations, and the counters are read at its first and last operation.
// The step's other groups are dropped.
func (bs *benchSetup) measure(b *testing.B, st workload.Step, pick func(workload.Load) workload.Worker) {
	bs.measureAll(b, st, pick, false)
}

// measureAll is measure; with others, the step's other groups run too (and are waited for).
func (bs *benchSetup) measureAll(b *testing.B, st workload.Step, pick func(workload.Load) workload.Worker, others bool) {
	b.Helper()
	m := &meter{limit: b.N, serverPID: bs.serverPID}
	if bs.serverPID != 0 {
		s, err := hwstat.New()
		if err != nil {
			b.Fatal(err)
		}
		m.sampler = s
	}
	ms := &meteredStep{Step: st, m: m, pick: pick, others: others}
	r := &runner.Runner{Handle: bs.h, Interval: time.Hour}
	b.ResetTimer()
	res := r.Run(context.Background(), ms, nopObserver{})
	b.StopTimer()
	if res.Status != dbmetrics.StatusOK {
		b.Fatalf("%s: %s %s", st.Name(), res.Status, res.Error)
	}
	if m.n != b.N || m.end.wall.IsZero() {
		b.Fatalf("%s: %d of %d operations measured", st.Name(), m.n, b.N)
	}
	n := float64(b.N)
	d := m.end.sub(m.start)
	b.ReportMetric(float64(d.wall)/n, "ns/op")
	b.ReportMetric(d.cpuUS/n, "cpu-µs/op")
	b.ReportMetric(float64(d.allocs)/n, "allocs/op")
	b.ReportMetric(float64(d.ctxsw)/n, "ctxsw/op")
	if bs.serverPID != 0 && d.serverOK {
		b.ReportMetric(d.serverUS/n, "srv-cpu-µs/op")
	}
}

type nopObserver struct{}

func (nopObserver) StepStarted(string, workload.Load)   {}
func (nopObserver) Interval(string, dbmetrics.Interval) {}

// customStep is a step of one closed-loop worker built by worker().
type customStep struct {
	name, label string
	unit        workload.Unit
	worker      func() workload.Worker
}

func (s *customStep) Name() string                                 { return s.name }
func (s *customStep) Group() string                                { return "" }
func (s *customStep) Prepare(context.Context, engine.Handle) error { return nil }
func (s *customStep) Verify(context.Context, engine.Handle) (string, error) {
	return "", nil
}
func (s *customStep) Load(context.Context, engine.Handle) (workload.Load, error) {
	return workload.Load{Kind: kindReadWrite, Primary: s.label, Groups: []workload.Group{{
		Label: s.label, Role: s.label, Unit: s.unit, Workers: []workload.Worker{s.worker()}, UntilDone: true,
	}}}, nil
}

// meteredStep wraps a step's load: the picked worker (default: the first) is metered and
// ends the step after the meter's limit; the other groups are dropped.
type meteredStep struct {
	workload.Step
	m      *meter
	pick   func(workload.Load) workload.Worker
	others bool // keep the other groups
}

// Verify skips the audit: the metered worker stopped short of its quota.
func (s *meteredStep) Verify(context.Context, engine.Handle) (string, error) { return "", nil }

func (s *meteredStep) Load(ctx context.Context, h engine.Handle) (workload.Load, error) {
	l, err := s.Step.Load(ctx, h)
	if err != nil {
		return l, err
	}
	w := l.Groups[0].Workers[0]
	if s.pick != nil {
		w = s.pick(l)
	}
	gi := 0
	for i, g := range l.Groups {
		if len(g.Workers) > 0 && g.Workers[0] == w {
			gi = i
		}
	}
	s.m.Worker = w
	g := l.Groups[gi]
	g.Workers, g.UntilDone, g.Rate = []workload.Worker{s.m}, true, 0
	if s.others {
		l.Groups[gi] = g
	} else {
		l.Groups = []workload.Group{g}
	}
	l.Duration = 0
	return l, nil
}

// meter counts a worker's operations and reads the counters at the first and the last.
type meter struct {
	workload.Worker
	limit, n   int
	serverPID  int
	sampler    *hwstat.Sampler
	start, end usage
}

func (m *meter) Op(ctx context.Context) (int64, error) {
	if m.n == 0 {
		m.start = m.read()
	}
	if m.n == m.limit {
		m.end = m.read()
		return 0, workload.ErrDone
	}
	m.n++
	return m.Worker.Op(ctx)
}

// usage is a reading of the counters a benchmark reports.
type usage struct {
	wall     time.Time
	cpuUS    float64
	ctxsw    int64
	allocs   uint64
	serverUS float64
	serverOK bool
}

func (u usage) sub(o usage) (d struct {
	wall     time.Duration
	cpuUS    float64
	ctxsw    int64
	allocs   uint64
	serverUS float64
	serverOK bool
}) {
	d.wall = u.wall.Sub(o.wall)
	d.cpuUS = u.cpuUS - o.cpuUS
	d.ctxsw = u.ctxsw - o.ctxsw
	d.allocs = u.allocs - o.allocs
	d.serverUS, d.serverOK = u.serverUS-o.serverUS, u.serverOK && o.serverOK
	return d
}

func (m *meter) read() usage {
	var u usage
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	u.cpuUS = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e3
	u.ctxsw = ru.Nvcsw + ru.Nivcsw
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	u.allocs = s[0].Value.Uint64()
	if m.sampler != nil {
		if tree, err := m.sampler.ProcessTree(m.serverPID); err == nil {
			if smp, err := m.sampler.Sample(hwstat.Request{PIDs: tree}); err == nil {
				for _, p := range smp.Procs {
					u.serverUS += p.CPUSec * 1e6
				}
				u.serverOK = true
			}
		}
	}
	u.wall = time.Now()
	return u
}
