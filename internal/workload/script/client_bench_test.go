package script

import (
	"context"
	"path/filepath"
	"runtime/metrics"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	dbmetrics "github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/workload"
	"github.com/dbperf/dbperf/internal/workload/workloadtest"
)

// BenchmarkClient measures what dbperf's script client costs per transaction on a
// managed PostgreSQL 15 (pgbench -i at scale 1, one client) for pgbench's built-in
// scripts, the ones the side-by-side with pgbench compares (scripts/pgbench_sidebyside.py):
// tpcb-like (four \set, seven statements), select-only (one \set, one statement) and
// tpcb-like in one pipeline. The run step runs through the runner's worker loop as in a
// run (its latency recording, yields and GOMAXPROCS included); b.N transactions are
// measured after 100 unmeasured ones, from the first measured transaction to the last:
//
//   - ns/op: wall time per transaction, the server's work included;
//   - cpu-µs/op: dbperf's own CPU (user+system, getrusage), the figure the side-by-side
//     compares with pgbench's; user-µs/op its user part, dbperf's own code (the rest is
//     the kernel's: the socket's system calls and the context switches; the kernel splits
//     the two by its ticks' samples, so the split means something over a second or more
//     of CPU: select-only's 5,000 transactions are too few);
//   - ctxsw/op: dbperf's context switches (voluntary and involuntary) per transaction;
//   - allocs/op and B/op: heap allocations and bytes per transaction (runtime/metrics,
//     replacing the framework's counts, which would include the setup).
//
// It is skipped when PostgreSQL 15 is not installed (make test installs it).
func BenchmarkClient(b *testing.B) {
	h := workloadtest.Managed(b, "postgres", filepath.Join("..", "..", "..", "profiles"))
	steps := workloadtest.Plan(b, New(), "--pgbench-init", "--scale-factor", "1", "-b", "select-only", "--time", "1")
	if res := runStepOn(h, steps[0]); res.Status != dbmetrics.StatusOK {
		b.Fatalf("pgbench -i: %s %s", res.Status, res.Error)
	}
	dir := b.TempDir()
	for _, sc := range []struct{ name, flag, arg string }{
		{"tpcb-like", "-b", "tpcb-like"},
		{"select-only", "-b", "select-only"},
		{"tpcb-pipelined", "-f", write(b, dir, "tpcb-pipelined.sql", pipelinedTPCB)},
	} {
		b.Run(sc.name, func(b *testing.B) {
			steps := workloadtest.Plan(b, New(), "--scale-factor", "1", sc.flag, sc.arg, "--time", "1")
			m := &benchStep{Step: steps[len(steps)-1], warm: 100, limit: 100 + b.N}
			b.ResetTimer()
			res := runStepOn(h, m)
			b.StopTimer()
			if res.Status != dbmetrics.StatusOK || m.end.wall.IsZero() {
				b.Fatalf("%s: %s %s, %d of %d transactions", sc.name, res.Status, res.Error, m.n, m.limit)
			}
			n := float64(b.N)
			b.ReportMetric(float64(m.end.wall.Sub(m.start.wall))/n, "ns/op")
			b.ReportMetric((m.end.cpuUS-m.start.cpuUS)/n, "cpu-µs/op")
			b.ReportMetric((m.end.userUS-m.start.userUS)/n, "user-µs/op")
			b.ReportMetric(float64(m.end.ctxsw-m.start.ctxsw)/n, "ctxsw/op")
			b.ReportMetric(float64(m.end.allocs-m.start.allocs)/n, "allocs/op")
			b.ReportMetric(float64(m.end.bytes-m.start.bytes)/n, "B/op")
		})
	}
}

// benchStep is a run step whose one worker ends it after limit transactions, the counters
// read before transaction warm+1 and after the last.
type benchStep struct {
	workload.Step
	workload.Worker
	warm, limit, n int
	start, end     usage
}

// Verify skips the audit.
func (s *benchStep) Verify(context.Context, engine.Handle) (string, error) { return "", nil }

// Load is the step's with its first worker metered, until done instead of timed.
func (s *benchStep) Load(ctx context.Context, h engine.Handle) (workload.Load, error) {
	l, err := s.Step.Load(ctx, h)
	if err != nil {
		return l, err
	}
	s.Worker = l.Groups[0].Workers[0]
	l.Groups[0].Workers, l.Groups[0].UntilDone, l.Duration = []workload.Worker{s}, true, 0
	return l, nil
}

// Op runs the worker's transaction, or ends the step after limit.
func (s *benchStep) Op(ctx context.Context) (int64, error) {
	switch s.n {
	case s.warm:
		s.start = readUsage()
	case s.limit:
		s.end = readUsage()
		return 0, workload.ErrDone
	}
	s.n++
	return s.Worker.Op(ctx)
}

// usage is a reading of the counters BenchmarkClient reports.
type usage struct {
	wall   time.Time
	cpuUS  float64
	userUS float64
	ctxsw  int64
	allocs uint64
	bytes  uint64
}

func readUsage() usage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return usage{wall: time.Now(), cpuUS: float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e3, ctxsw: ru.Nvcsw + ru.Nivcsw,
		userUS: float64(ru.Utime.Nano()) / 1e3,
		allocs: s[0].Value.Uint64(), bytes: s[1].Value.Uint64()}
}

// BenchmarkSetAndBind is the client's own work in a tpcb-like transaction without the
// server: its four \set expressions (random over :scale) evaluated and its seven SQL
// commands' variables bound (what TestNoAllocs checks allocates nothing).
func BenchmarkSetAndBind(b *testing.B) {
	_, text, _ := builtin("tpcb-like")
	prog := compileTexts(b, text)
	var retries atomic.Int64
	c := newClient(prog, 0, clientSeeds{fn: 1, scale: 10}, &retries)
	cmds := prog.Scripts[0].cmds
	b.ReportAllocs()
	for b.Loop() {
		for i := range cmds {
			cmd := &cmds[i]
			switch cmd.kind {
			case cSet:
				v, err := c.e.eval(cmd.expr)
				if err != nil {
					b.Fatal(err)
				}
				c.vars[cmd.slot] = v
			case cSQL:
				if err := c.bind(cmd); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}
