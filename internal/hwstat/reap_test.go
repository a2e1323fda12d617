package hwstat

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// fakeProc is a /proc of a few processes whose stat files a test rewrites while Sample
// reads them (Sampler.scanned), to wait for a child at a chosen point of the scan.
type fakeProc struct {
	t     *testing.T
	root  string
	procs map[int]*fakeTask
}

type fakeTask struct {
	ppid                              int
	utime, stime, cutime, cstime, cmf uint64 // ticks; cminflt
	start                             uint64
}

func newFakeProc(t *testing.T) *fakeProc {
	t.Helper()
	f := &fakeProc{t: t, root: t.TempDir(), procs: map[int]*fakeTask{}}
	stat, err := os.ReadFile("testdata/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.root, "stat"), stat, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fakeProc) put(pid int, p *fakeTask) {
	f.t.Helper()
	f.procs[pid] = p
	dir := filepath.Join(f.root, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	line := fmt.Sprintf("%d (p%d) S %d %d %d 0 -1 4194560 100 %d 0 0 %d %d %d %d 20 0 1 0 %d 3133440 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		pid, pid, p.ppid, pid, pid, p.cmf, p.utime, p.stime, p.cutime, p.cstime, p.start)
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// reap is parent waiting for child: the child's directory goes, its CPU (its own and its
// waited-for children's) moves into the parent's waited-for-children counters.
func (f *fakeProc) reap(parent, child int) {
	f.t.Helper()
	c, p := f.procs[child], f.procs[parent]
	if err := os.RemoveAll(filepath.Join(f.root, strconv.Itoa(child))); err != nil {
		f.t.Fatal(err)
	}
	delete(f.procs, child)
	p.cutime += c.utime + c.cutime
	p.cstime += c.stime + c.cstime
	p.cmf += 100
	f.put(parent, p)
}

func (f *fakeProc) sampler() *Sampler {
	f.t.Helper()
	s, err := NewAt(f.root, "testdata/sys")
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// TestSampleReapDuringScan: a child its parent waits for while Sample reads every process
// is counted once in TasksCPUSec — not lost when the parent was read before it waited and
// the child was gone when its turn came, not counted twice when the child was read before
// the parent that waited for it — and when children are waited for like that at every
// attempt, the sum is unknown (Tasks 0) rather than wrong.
func TestSampleReapDuringScan(t *testing.T) {
	for _, tc := range []struct {
		name          string
		parent, child int
		at            int // the process after whose reading the parent waits for the child
	}{
		// Children usually have higher pids than their parents, and /proc lists
		// processes by pid: the parent is read first, then waits, then the child is gone.
		{name: "parent read before it waited, child gone by its turn", parent: 10, child: 20, at: 10},
		// A child reparented to a subreaper started after it: read first, then waited for.
		{name: "child read, then waited for by a parent read after", parent: 30, child: 20, at: 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeProc(t)
			f.put(1, &fakeTask{utime: 50, stime: 50, start: 1})
			f.put(tc.parent, &fakeTask{ppid: 1, utime: 100, stime: 20, start: 100})
			f.put(tc.child, &fakeTask{ppid: tc.parent, utime: 250, stime: 50, start: 200}) // 3 s
			s := f.sampler()
			reaped := false
			s.scanned = func(pid int) {
				if pid == tc.at && !reaped {
					f.reap(tc.parent, tc.child)
					reaped = true
				}
			}
			smp, err := s.Sample(Request{AllTasks: true})
			if err != nil {
				t.Fatal(err)
			}
			if !reaped {
				t.Fatal("the scan never read the process the reap waits for")
			}
			// init 1 s, the parent 1.2 s and the child's 3 s, now in the parent's cutime.
			if want := 1 + 1.2 + 3.0; !near(smp.TasksCPUSec, want) || smp.Tasks != 2 {
				t.Errorf("TasksCPUSec %.2f s over %d processes, want %.2f s over 2", smp.TasksCPUSec, smp.Tasks, want)
			}
		})
	}

	t.Run("the sample's time is its processes'", func(t *testing.T) {
		// A sample read again after a wait is stamped with the reading it holds, not the
		// first: the processes' CPU between two samples is over their times, not the
		// time a retry took more (a short step's other_cpu_pct held the CPU every
		// process used while its last sample was read again, twice).
		f := newFakeProc(t)
		f.put(1, &fakeTask{utime: 50, stime: 50, start: 1})
		f.put(10, &fakeTask{ppid: 1, utime: 100, stime: 20, start: 100})
		f.put(20, &fakeTask{ppid: 10, utime: 300, start: 200})
		s := f.sampler()
		t0 := time.Unix(1000, 0)
		clock := t0
		s.now = func() time.Time { clock = clock.Add(10 * time.Millisecond); return clock }
		s.scanned = func(pid int) {
			if _, ok := f.procs[20]; ok && pid == 10 {
				f.reap(10, 20)
			}
		}
		smp, err := s.Sample(Request{AllTasks: true})
		if err != nil {
			t.Fatal(err)
		}
		// Attempt 1 reads the clock at 10 ms (its start) and 20 ms (its scan's end), the
		// second at 30 ms and 40 ms.
		if got := smp.Time.Sub(t0); got != 30*time.Millisecond || smp.ScanSec != 0.01 || !near(smp.TasksCPUSec, 1+1.2+3) {
			t.Errorf("Time %v after the clock's start, ScanSec %v, TasksCPUSec %.2f; want 30ms, 0.01, 5.20", got, smp.ScanSec, smp.TasksCPUSec)
		}
	})

	t.Run("a child waited for at every attempt", func(t *testing.T) {
		f := newFakeProc(t)
		f.put(1, &fakeTask{utime: 50, stime: 50, start: 1})
		f.put(10, &fakeTask{ppid: 1, utime: 100, stime: 20, start: 100})
		child := 20
		f.put(child, &fakeTask{ppid: 10, utime: 100, start: 200})
		s := f.sampler()
		s.scanned = func(pid int) {
			if pid == 10 {
				f.reap(10, child)
				child++
				f.put(child, &fakeTask{ppid: 10, utime: 100, start: uint64(200 + child)})
			}
		}
		smp, err := s.Sample(Request{AllTasks: true})
		if err != nil {
			t.Fatal(err)
		}
		if smp.Tasks != 0 || smp.TasksCPUSec != 0 || smp.KernelCPUSec != 0 {
			t.Errorf("every attempt inconsistent: %d processes, %.2f s (kernel %.2f s); want unknown (0)", smp.Tasks, smp.TasksCPUSec, smp.KernelCPUSec)
		}
	})

	t.Run("a child nobody waits for", func(t *testing.T) {
		// Gone with its CPU (a parent that ignores SIGCHLD): nothing to read again for.
		f := newFakeProc(t)
		f.put(1, &fakeTask{utime: 50, stime: 50, start: 1})
		f.put(10, &fakeTask{ppid: 1, utime: 100, stime: 20, start: 100})
		f.put(20, &fakeTask{ppid: 10, utime: 300, start: 200})
		s := f.sampler()
		scans := 0
		s.scanned = func(pid int) {
			switch pid {
			case 1:
				scans++
			case 10:
				if _, ok := f.procs[20]; ok {
					_ = os.RemoveAll(filepath.Join(f.root, "20"))
					delete(f.procs, 20)
				}
			}
		}
		smp, err := s.Sample(Request{AllTasks: true})
		if err != nil {
			t.Fatal(err)
		}
		if !near(smp.TasksCPUSec, 2.2) || smp.Tasks != 2 || scans != 1 {
			t.Errorf("TasksCPUSec %.2f s over %d processes in %d scans; want 2.20 s over 2 in 1", smp.TasksCPUSec, smp.Tasks, scans)
		}
	})
}

// TestTasksDeltaSlack: the bound of how far every process's CPU between two samples can be
// above what the processes used is 20 ms per counter pair that moved (a process's own, its
// waited-for children's), the same for a process gone since, with its children's if it had
// any, nothing for one that appeared, and the CPUs' time over the later sample's scan.
func TestTasksDeltaSlack(t *testing.T) {
	f := newFakeProc(t)
	f.put(1, &fakeTask{utime: 50, stime: 50, start: 1})
	f.put(10, &fakeTask{ppid: 1, utime: 100, stime: 20, start: 100})
	f.put(20, &fakeTask{ppid: 10, utime: 250, stime: 50, start: 200})
	f.put(30, &fakeTask{ppid: 1, utime: 50, start: 300})
	s := f.sampler()
	clock := time.Unix(1000, 0)
	s.now = func() time.Time { clock = clock.Add(time.Millisecond); return clock }
	a, err := s.Sample(Request{AllTasks: true})
	if err != nil {
		t.Fatal(err)
	}
	p := f.procs[10]
	p.utime += 10 // 10 runs 0.1 s, waits for 20 (3 s); 30 sleeps; 40 starts and runs 0.1 s
	f.put(10, p)
	f.reap(10, 20)
	f.put(40, &fakeTask{ppid: 1, utime: 10, start: 400})
	clock = clock.Add(time.Second)
	b, err := s.Sample(Request{AllTasks: true})
	if err != nil {
		t.Fatal(err)
	}
	if b.ScanSec != 0.001 {
		t.Fatalf("ScanSec %v, want the clock's 1 ms between Time and the scan's end", b.ScanSec)
	}
	c, ok := TasksDelta(a, b)
	// 10: own and children moved (2 × 20 ms); 20 gone (20 ms); 30, 1 still; 40 new;
	// 2 CPUs × 1 ms of scan.
	if !ok || !near(c.TasksSec, 0.2) || !near(c.TasksSlackSec, 0.06+0.002) {
		t.Errorf("TasksDelta = %+v, %v; want tasks 0.2 s, slack 0.062 s", c, ok)
	}
	if d, err := Delta(a, b); err != nil || d.CPU.TasksSlackSec != c.TasksSlackSec || d.CPU.TasksSec != c.TasksSec {
		t.Errorf("Delta's CPU %+v, %v; want TasksDelta's", d.CPU, err)
	}
	if _, ok := TasksDelta(b, a); ok {
		t.Error("TasksDelta of samples out of order is known")
	}
	// Samples built without their processes (figures from elsewhere): the scan's time only.
	a2 := Sample{Time: a.Time, Tasks: 4, TasksCPUSec: 5.7}
	b2 := Sample{Time: b.Time, Tasks: 4, TasksCPUSec: 5.9, CPUs: 2, ScanSec: 0.01}
	if c, ok := TasksDelta(a2, b2); !ok || !near(c.TasksSlackSec, 0.02) {
		t.Errorf("TasksDelta without processes = %+v, %v; want slack 0.02 s", c, ok)
	}
}
