package hwstat

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func fixtureSampler(t *testing.T) *Sampler {
	t.Helper()
	s, err := NewAt("testdata/proc", "testdata/sys")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDevicesFixture(t *testing.T) {
	s := fixtureSampler(t)
	for _, tc := range []struct {
		dir     string
		want    []string
		wantErr string
	}{
		{dir: "/home/bench/data", want: []string{"vda"}},                   // partition vda1 -> vda
		{dir: "/var/lib/postgresqlX/data", want: []string{"vda"}},          // prefix only at a path boundary
		{dir: "/var/lib/postgresql/16/main", want: []string{"vdb", "vdc"}}, // dm-0 -> slaves vdb, vdc1 -> vdc
		{dir: "/var/lib/postgresql", want: []string{"vdb", "vdc"}},         // the mount point itself
		{dir: "/var/lib/postgresql/tmp/x", wantErr: "not a block device"},  // tmpfs, 0:40
	} {
		got, err := s.Devices(tc.dir)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Devices(%q) err = %v, want %q", tc.dir, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Devices(%q) = %v, %v; want %v", tc.dir, got, err, tc.want)
		}
	}
}

func TestSampleFixture(t *testing.T) {
	s := fixtureSampler(t)
	smp, err := s.Sample(Request{PIDs: []int{100, 4242, 99999}, ThreadsOf: []int{4242}, Devices: []string{"vdc", "vda", "vdb"}})
	if err != nil {
		t.Fatal(err)
	}
	wantCPU := CPUTimes{UserSec: 1796.17, NiceSec: 0.12, SystemSec: 648.66, IdleSec: 12573.03,
		IOWaitSec: 90.12, IRQSec: 0.03, SoftIRQSec: 254.87, StealSec: 1.27}
	if !cpuClose(smp.CPU, wantCPU) {
		t.Errorf("CPU = %+v, want %+v", smp.CPU, wantCPU)
	}
	if smp.ContextSwitches != 98765432 {
		t.Errorf("ctxt = %d", smp.ContextSwitches)
	}
	if !slices.Equal(smp.Devices, []string{"vda", "vdb", "vdc"}) {
		t.Errorf("Devices = %v", smp.Devices)
	}
	// vda (20 fields) + vdb (18) + vdc (14); never vda1/vdc1/dm-0.
	want := DiskCounters{ReadsCompleted: 5000 + 100 + 300, SectorsRead: 80000 + 2000 + 6000,
		WritesCompleted: 7000 + 200 + 400, SectorsWritten: 160000 + 4000 + 8000}
	if smp.Disk != want {
		t.Errorf("Disk = %+v, want %+v", smp.Disk, want)
	}
	if _, ok := smp.Procs[99999]; ok || len(smp.Procs) != 2 {
		t.Errorf("Procs = %v; a missing pid must be left out", smp.Procs)
	}
	page := uint64(os.Getpagesize())
	pg := smp.Procs[4242]
	if pg.Comm != "postgres: bench ib 127.0.0.1(5432) idle" || !near(pg.CPUSec, 18.01) ||
		pg.RSSBytes != 4096*page || pg.StartTicks != 5000 {
		t.Errorf("4242 = %+v", pg)
	}
	if pg.IOKnown || pg.ReadBytes != 0 || pg.WriteBytes != 0 {
		t.Errorf("4242 has no io file but IO = %v %d %d", pg.IOKnown, pg.ReadBytes, pg.WriteBytes)
	}
	if len(pg.ThreadCPUSec) != 2 || !near(pg.ThreadCPUSec[4242], 17) || !near(pg.ThreadCPUSec[4250], 1.012345678) {
		t.Errorf("threads = %v", pg.ThreadCPUSec)
	}
	pm := smp.Procs[100]
	if !pm.IOKnown || pm.ReadBytes != 8192 || pm.WriteBytes != 65536 || pm.CancelledWriteBytes != 4096 ||
		pm.NetWriteBytes() != 61440 || !near(pm.CPUSec, 7.5) || !near(pm.ChildrenCPUSec, 0.5) || pm.PPID != 1 {
		t.Errorf("100 = %+v", pm)
	}
	if smp.CPUs != 2 || pg.PPID != 100 {
		t.Errorf("CPUs online %d, ppid of 4242 %d; want 2, 100", smp.CPUs, pg.PPID)
	}
	if pm.ThreadCPUSec != nil {
		t.Errorf("threads of 100 read without being asked: %v", pm.ThreadCPUSec)
	}
	if pm.RSSAnonBytes != 1024<<10 || pm.RSSFileBytes != 2048<<10 || pm.RSSShmemBytes != 5120<<10 {
		t.Errorf("100 memory = anon %d file %d shmem %d", pm.RSSAnonBytes, pm.RSSFileBytes, pm.RSSShmemBytes)
	}
	// Anonymous memory adds up; shared buffers (shmem) and the binary (file) count once.
	if got, want := ServerMemoryBytes(smp.Procs), uint64(1024+2048+2048+12288)<<10; got != want {
		t.Errorf("ServerMemoryBytes = %d, want %d", got, want)
	}
	if got := ServerMemoryBytes(map[int]ProcSample{1: {RSSAnonBytes: 5, RSSFileBytes: 7, RSSShmemBytes: 11}}); got != 23 {
		t.Errorf("one process: ServerMemoryBytes = %d, want its RSS 23", got)
	}

	// The tree of 100 found in the same reading, and every process's CPU (own and
	// waited-for children's): 100 8 s, 4242 18.01 s, 4243 0.3 s, 5000 and 777 0.02 s each,
	// and the kernel threads kthreadd (2) 0.07 s and a kworker (35) 1 s.
	all, err := s.Sample(Request{TreeOf: 100, AllTasks: true})
	if err != nil {
		t.Fatal(err)
	}
	// (4243 and 5000 have no status file here: read as gone.)
	if want := []int{100, 4242, 4243, 5000}; !slices.Equal(all.Tree, want) || len(all.Procs) != 2 {
		t.Errorf("tree %v, procs %d; want %v", all.Tree, len(all.Procs), want)
	}
	if all.Tasks != 7 || !near(all.TasksCPUSec, 8+18.01+0.3+0.02+0.02+0.07+1) || !near(all.KernelCPUSec, 0.07+1) {
		t.Errorf("all tasks: %d, %v s, kernel threads %v s", all.Tasks, all.TasksCPUSec, all.KernelCPUSec)
	}
	if none, err := s.Sample(Request{TreeOf: 12345}); err != nil || none.Tree != nil || len(none.Procs) != 0 {
		t.Errorf("tree of a missing process: %v %v, %v", none.Tree, none.Procs, err)
	}

	if _, err := s.Sample(Request{Devices: []string{"sdz"}}); err == nil || !strings.Contains(err.Error(), "sdz") {
		t.Errorf("unknown device: err = %v", err)
	}
}

func TestProcessTreeFixture(t *testing.T) {
	s := fixtureSampler(t)
	got, err := s.ProcessTree(100)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{100, 4242, 4243, 5000}; !slices.Equal(got, want) {
		t.Errorf("tree = %v, want %v", got, want)
	}
	if _, err := s.ProcessTree(12345); err == nil {
		t.Error("tree of a missing pid: no error")
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func cpuClose(a, b CPUTimes) bool {
	return near(a.UserSec, b.UserSec) && near(a.NiceSec, b.NiceSec) && near(a.SystemSec, b.SystemSec) &&
		near(a.IdleSec, b.IdleSec) && near(a.IOWaitSec, b.IOWaitSec) && near(a.IRQSec, b.IRQSec) &&
		near(a.SoftIRQSec, b.SoftIRQSec) && near(a.StealSec, b.StealSec)
}

// TestRealProc runs against this machine's /proc.
func TestRealProc(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	a, err := s.Sample(Request{PIDs: []int{self}, ThreadsOf: []int{self}, AllTasks: true})
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := 0; i < 300_000_000; i++ {
		x += i ^ (x >> 3)
	}
	time.Sleep(10 * time.Millisecond)
	b, err := s.Sample(Request{PIDs: []int{self}, ThreadsOf: []int{self}, AllTasks: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err := Delta(a, b)
	if err != nil {
		t.Fatal(err)
	}
	// Every process's CPU holds this one's, and fits in the time the CPUs were not idle
	// (10 ms per process read; steal may overlap idle, so it is not taken off).
	if own, c := d.Procs[self].CPUSec, d.CPU; c.TasksSec < own-0.02 || c.TasksSec > c.ElapsedSec-c.IdleSec-c.IOWaitSec+0.3 || b.Tasks < 2 {
		t.Errorf("all processes' CPU %.3fs (%d processes), this one's %.3fs, elapsed %.3fs, idle %.3fs", c.TasksSec, b.Tasks, own, c.ElapsedSec, c.IdleSec)
	}
	// This process is no kernel thread: the kernel threads' CPU is within the others'.
	if c := d.CPU; c.KernelTasksSec < 0 || c.KernelTasksSec > c.TasksSec-d.Procs[self].CPUSec+0.02 {
		t.Errorf("kernel threads' CPU %.3fs of every process's %.3fs, this one's %.3fs", c.KernelTasksSec, c.TasksSec, d.Procs[self].CPUSec)
	}
	if pd := d.Procs[self]; pd.CPUSec <= 0 || pd.Appeared || pd.RSSBytes == 0 || len(b.Procs[self].ThreadCPUSec) == 0 {
		t.Errorf("self over a busy loop (x=%d): %+v, threads %v", x, pd, b.Procs[self].ThreadCPUSec)
	}
	// Busy is every process's CPU, read in 10 ms ticks per process: on a saturated machine
	// it can pass the CPUs' time by as much as above.
	if d.CPU.UserSec+d.CPU.SystemSec <= 0 || d.CPUBusyPct <= 0 || d.CPUBusyPct > 100*(1+0.3/d.CPU.SpanSec()) {
		t.Errorf("system CPU over a busy loop: %+v busy %.1f%%", d.CPU, d.CPUBusyPct)
	}

	cmd := exec.Command("sh", "-c", "sleep 1 & sleep 1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait() //nolint:errcheck
	var sleeps int
	for deadline := time.Now().Add(900 * time.Millisecond); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		tree, err := s.ProcessTree(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		smp, err := s.Sample(Request{PIDs: tree})
		if err != nil {
			t.Fatal(err)
		}
		sleeps = 0
		for _, p := range smp.Procs {
			if p.Comm == "sleep" {
				sleeps++
			}
		}
		if sleeps == 2 {
			break
		}
	}
	if sleeps != 2 {
		t.Errorf("tree of sh -c 'sleep 1 & sleep 1' has %d sleeps, want 2", sleeps)
	}
}

func TestRealDevices(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	devs, err := s.Devices(t.TempDir())
	if err != nil {
		t.Skipf("temp dir not on a block device here: %v", err)
	}
	if _, err := s.Sample(Request{Devices: devs}); err != nil {
		t.Errorf("Sample on %v: %v", devs, err)
	}
}

// TestRealThreadsAndServerRoot: a thread id leads to its process, and ServerRoot climbs
// through parents of the same command (postmaster → backend), stopping at another command.
func TestRealThreadsAndServerRoot(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var checked int
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.Tgid(tid); err != nil || got != self {
			t.Errorf("Tgid(%d) = %d, %v; want %d", tid, got, err, self)
		}
		checked++
	}
	if checked < 2 {
		t.Errorf("only %d threads checked; a Go test process has several", checked)
	}

	// sh (outer) → sh (subshell) → sleep: the subshell's root is the outer sh, not the test.
	cmd := exec.Command("sh", "-c", "(sleep 3; true) & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	outer := cmd.Process.Pid
	var sub int
	for deadline := time.Now().Add(2 * time.Second); sub == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		tree, err := s.ProcessTree(outer)
		if err != nil {
			t.Fatal(err)
		}
		smp, err := s.Sample(Request{PIDs: tree})
		if err != nil {
			t.Fatal(err)
		}
		for pid, p := range smp.Procs {
			// The subshell is the outer sh's child; its own child is "sh" too until it
			// has exec'd sleep.
			if pid != outer && p.Comm == "sh" && p.PPID == outer {
				sub = pid
			}
		}
	}
	if sub == 0 {
		t.Fatal("no subshell appeared")
	}
	if root, err := s.ServerRoot(sub); err != nil || root != outer {
		t.Errorf("ServerRoot(subshell %d) = %d, %v; want the outer sh %d", sub, root, err, outer)
	}
	if root, err := s.ServerRoot(self); err != nil || root != self {
		t.Errorf("ServerRoot(self) = %d, %v; want %d (the parent runs another command)", root, err, self)
	}
	if _, err := s.ServerRoot(1 << 30); err == nil {
		t.Error("ServerRoot of a missing id: no error")
	}
}
