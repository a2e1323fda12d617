package hwstat

import (
	"strings"
	"testing"
	"time"
)

func TestDelta(t *testing.T) {
	t0 := time.Unix(1000, 0)
	base := Sample{
		Time:            t0,
		CPU:             CPUTimes{UserSec: 100, SystemSec: 50, IdleSec: 800, IOWaitSec: 10},
		ContextSwitches: 1000,
		Devices:         []string{"vda"},
		Disk:            DiskCounters{ReadsCompleted: 10, SectorsRead: 100, WritesCompleted: 20, SectorsWritten: 200},
		Procs: map[int]ProcSample{
			1: {PID: 1, StartTicks: 5, CPUSec: 3, RSSBytes: 1000, IOKnown: true, ReadBytes: 10, WriteBytes: 20,
				ThreadCPUSec: map[int]float64{1: 2.5, 11: 0.25, 12: 0.125}}, // thread 12 exits
			2: {PID: 2, StartTicks: 6, CPUSec: 7, RSSBytes: 500},                               // exits
			3: {PID: 3, StartTicks: 7, CPUSec: 9, RSSBytes: 100, IOKnown: true},                // pid reused
			4: {PID: 4, StartTicks: 8, CPUSec: 1, RSSBytes: 100, IOKnown: true, ReadBytes: 10}, // io becomes unreadable
		},
	}
	for _, tc := range []struct {
		name    string
		cur     Sample
		check   func(t *testing.T, d Interval)
		wantErr string
	}{
		{
			name: "rates and processes",
			cur: Sample{
				Time:            t0.Add(2 * time.Second),
				CPU:             CPUTimes{UserSec: 106, NiceSec: 1, SystemSec: 52, IdleSec: 810, IOWaitSec: 11},
				ContextSwitches: 3000,
				Devices:         []string{"vda"},
				Disk:            DiskCounters{ReadsCompleted: 14, SectorsRead: 108, WritesCompleted: 60, SectorsWritten: 1200},
				Procs: map[int]ProcSample{
					1: {PID: 1, StartTicks: 5, CPUSec: 4.5, RSSBytes: 800, IOKnown: true, ReadBytes: 4106, WriteBytes: 20,
						ThreadCPUSec: map[int]float64{1: 3.5, 11: 0.75, 13: 9}}, // thread 13 is new
					3: {PID: 3, StartTicks: 99, CPUSec: 0.25, RSSBytes: 50},
					4: {PID: 4, StartTicks: 8, CPUSec: 2, RSSBytes: 300},
					5: {PID: 5, StartTicks: 100, CPUSec: 0.5, RSSBytes: 70, IOKnown: true, WriteBytes: 8},
				},
			},
			check: func(t *testing.T, d Interval) {
				want := CPUTimes{UserSec: 6, NiceSec: 1, SystemSec: 2, IdleSec: 10, IOWaitSec: 1}
				if d.IntervalSec != 2 || d.CPU != want || d.CPU.ElapsedSec != 0 { // CPUs online not known
					t.Errorf("interval %v CPU %+v, want 2 %+v", d.IntervalSec, d.CPU, want)
				}
				if !near(d.CPUBusyPct, 45) { // (6+1+2)/20
					t.Errorf("busy = %v, want 45", d.CPUBusyPct)
				}
				if d.ContextSwitches != 2000 || d.ContextSwitchesPerSec != 1000 {
					t.Errorf("ctxt %d %v", d.ContextSwitches, d.ContextSwitchesPerSec)
				}
				if d.ReadOps != 4 || d.ReadOpsPerSec != 2 || d.ReadBytes != 8*512 || d.ReadBytesPerSec != 2048 ||
					d.WriteOps != 40 || d.WriteOpsPerSec != 20 || d.WriteBytes != 1000*512 || d.WriteBytesPerSec != 256000 {
					t.Errorf("io %+v", d)
				}
				// Threads in both samples only: 1 s + 0.5 s.
				if got := d.Procs[1].ThreadsCPUSec; !near(got, 1.5) || d.Procs[4].ThreadsCPUSec != 0 {
					t.Errorf("threads' CPU = %v, %v; want 1.5, 0", got, d.Procs[4].ThreadsCPUSec)
				}
				p := d.Procs
				if len(p) != 5 {
					t.Fatalf("procs %v", p)
				}
				if g := p[1]; !near(g.CPUSec, 1.5) || g.RSSBytes != 800 || g.PeakRSSBytes != 1000 || !g.IOKnown ||
					g.ReadBytes != 4096 || g.WriteBytes != 0 || g.Appeared || g.Exited {
					t.Errorf("pid 1 %+v", g)
				}
				if g := p[2]; !g.Exited || g.CPUSec != 0 || g.RSSBytes != 0 || g.PeakRSSBytes != 500 {
					t.Errorf("exited pid 2 %+v", g)
				}
				if g := p[3]; !g.Appeared || g.CPUSec != 0.25 || g.PeakRSSBytes != 50 || g.IOKnown {
					t.Errorf("reused pid 3 %+v", g)
				}
				if g := p[4]; g.IOKnown || g.ReadBytes != 0 || g.CPUSec != 1 || g.PeakRSSBytes != 300 {
					t.Errorf("pid 4 without io %+v", g)
				}
				if g := p[5]; !g.Appeared || g.CPUSec != 0.5 || !g.IOKnown || g.WriteBytes != 8 {
					t.Errorf("new pid 5 %+v", g)
				}
			},
		},
		{
			name: "counters going backwards are zero, not negative",
			cur: Sample{
				Time: t0.Add(time.Second), CPU: CPUTimes{UserSec: 99, SystemSec: 60, IdleSec: 800, IOWaitSec: 10},
				ContextSwitches: 5, Devices: []string{"vda"}, Disk: DiskCounters{ReadsCompleted: 11},
				Procs: map[int]ProcSample{1: {PID: 1, StartTicks: 5, CPUSec: 2, IOKnown: true}},
			},
			check: func(t *testing.T, d Interval) {
				if d.CPU.UserSec != 0 || d.CPU.SystemSec != 10 || d.ContextSwitches != 0 || d.ReadOps != 1 ||
					d.ReadBytes != 0 || d.WriteOps != 0 || d.Procs[1].CPUSec != 0 || d.Procs[1].ReadBytes != 0 {
					t.Errorf("%+v", d)
				}
				if d.CPUBusyPct != 100 { // only system time moved
					t.Errorf("busy %v", d.CPUBusyPct)
				}
			},
		},
		{name: "not later", cur: Sample{Time: t0, Devices: []string{"vda"}}, wantErr: "not after"},
		{name: "devices changed", cur: Sample{Time: t0.Add(time.Second), Devices: []string{"vdb"}}, wantErr: "devices changed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Delta(base, tc.cur)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, d)
		})
	}
}

// TestDeltaElapsed: with the CPUs online known in both samples, the interval has its
// elapsed CPU time; with every process's CPU summed in both, busy is their difference;
// shares are of the elapsed time.
func TestDeltaElapsed(t *testing.T) {
	t0 := time.Unix(1000, 0)
	prev := Sample{Time: t0, CPUs: 2, Tasks: 90, TasksCPUSec: 5000, KernelCPUSec: 300,
		CPU: CPUTimes{UserSec: 100, SystemSec: 50, IdleSec: 800, IOWaitSec: 10, StealSec: 1}}
	cur := Sample{Time: t0.Add(10 * time.Second), CPUs: 2, Tasks: 91, TasksCPUSec: 5011, KernelCPUSec: 300.5,
		// The ticks saw 6+2+1 = 9 s busy; the processes used 11 s.
		CPU: CPUTimes{UserSec: 106, SystemSec: 52, SoftIRQSec: 1, IdleSec: 808, IOWaitSec: 10.5, StealSec: 1.5}}
	d, err := Delta(prev, cur)
	if err != nil {
		t.Fatal(err)
	}
	if !near(d.CPU.ElapsedSec, 20) || !near(d.CPU.TasksSec, 11) || !near(d.CPU.BusySec(), 11) || !near(d.CPU.TickBusySec(), 9) || !near(d.CPUBusyPct, 55) {
		t.Errorf("elapsed %v tasks %v busy %v ticks %v busy%% %v; want 20 11 11 9 55", d.CPU.ElapsedSec, d.CPU.TasksSec, d.CPU.BusySec(), d.CPU.TickBusySec(), d.CPUBusyPct)
	}
	if !near(d.CPU.KernelTasksSec, 0.5) {
		t.Errorf("kernel threads %v s, want 0.5", d.CPU.KernelTasksSec)
	}
	cur.CPUs, cur.Tasks = 3, 0 // a CPU came online, processes not summed: ticks' busy of the ticks' total
	if d, err = Delta(prev, cur); err != nil || d.CPU.ElapsedSec != 0 || d.CPU.TasksSec != 0 || d.CPU.KernelTasksSec != 0 || !near(d.CPU.BusySec(), 9) || !near(d.CPUBusyPct, 50) {
		t.Errorf("CPUs changed: %+v busy %v %%, %v", d.CPU, d.CPUBusyPct, err)
	}
	cur.Tasks, cur.TasksCPUSec = 80, 4990 // a process nobody waited for took its CPU along
	if d, err = Delta(prev, cur); err != nil || d.CPU.TasksSec != 0 {
		t.Errorf("processes' CPU went down: %v, %v; want 0", d.CPU.TasksSec, err)
	}
}

func TestCPUTimesAdd(t *testing.T) {
	a := CPUTimes{UserSec: 1, IdleSec: 2, ElapsedSec: 4, TasksSec: 1.5, KernelTasksSec: 0.25, TasksSlackSec: 0.125}
	b := CPUTimes{SystemSec: 1, IdleSec: 1, StealSec: 0.5, ElapsedSec: 4, TasksSec: 1.25, TasksSlackSec: 0.0625}
	if got := a.Add(b); got != (CPUTimes{UserSec: 1, SystemSec: 1, IdleSec: 3, StealSec: 0.5, ElapsedSec: 8, TasksSec: 2.75, KernelTasksSec: 0.25, TasksSlackSec: 0.1875}) {
		t.Errorf("a+b = %+v", got)
	}
	if got := (CPUTimes{}).Add(a); got != a {
		t.Errorf("0+a = %+v", got)
	}
	if got := a.Add(CPUTimes{UserSec: 1}); got.ElapsedSec != 0 || got.TasksSec != 0 || got.KernelTasksSec != 0 || got.TasksSlackSec != 0 || got.BusySec() != 2 || got.SpanSec() != 4 {
		t.Errorf("a + a span of unknown elapsed and tasks time = %+v: both must be unknown", got)
	}
}

// TestGroupDelta: a group's CPU and IO over an interval count processes that exited (through
// their parent's waited-for-children counters) exactly once.
func TestGroupDelta(t *testing.T) {
	all := func(int) bool { return true }
	pm := func(cpu, children float64, wb uint64) ProcSample {
		return ProcSample{PID: 100, StartTicks: 1, CPUSec: cpu, ChildrenCPUSec: children, IOKnown: true, WriteBytes: wb}
	}
	backend := func(pid int, start uint64, cpu float64, wb uint64) ProcSample {
		return ProcSample{PID: pid, PPID: 100, StartTicks: start, CPUSec: cpu, IOKnown: true, WriteBytes: wb}
	}
	procs := func(ps ...ProcSample) map[int]ProcSample {
		m := map[int]ProcSample{}
		for _, p := range ps {
			m[p.PID] = p
		}
		return m
	}
	for _, tc := range []struct {
		name      string
		prev, cur map[int]ProcSample
		member    func(int) bool
		cpu       float64
		write     uint64
		ioKnown   bool
		processes int
	}{
		{name: "both alive", prev: procs(pm(1, 10, 100), backend(200, 5, 3, 50)), cur: procs(pm(1.5, 10, 100), backend(200, 5, 4, 80)),
			member: all, cpu: 1.5, write: 30, ioKnown: true, processes: 2},
		// The backend had 3 s at prev and 5 s when it exited; the postmaster's children's
		// CPU and its IO took over its whole life (5 s, 90 bytes): 2 s and 40 bytes are new.
		{name: "exited and waited for", prev: procs(pm(1, 10, 100), backend(200, 5, 3, 50)), cur: procs(pm(1, 15, 190)),
			member: all, cpu: 2, write: 40, ioKnown: true, processes: 2},
		// Born after prev and gone before cur: only the parent's counters show it.
		{name: "born and gone within", prev: procs(pm(1, 10, 100)), cur: procs(pm(1, 10.75, 160)),
			member: all, cpu: 0.75, write: 60, ioKnown: true, processes: 1},
		// pid 200 exited (4 s at the end, 3 s at prev) and was reused by a new backend with 0.5 s.
		{name: "pid reused", prev: procs(pm(1, 10, 100), backend(200, 5, 3, 0)), cur: procs(pm(1, 14, 100), backend(200, 9, 0.5, 0)),
			member: all, cpu: 1.5, ioKnown: true, processes: 2},
		{name: "new process", prev: procs(pm(1, 10, 100)), cur: procs(pm(1, 10, 100), backend(300, 9, 0.25, 8)),
			member: all, cpu: 0.25, write: 8, ioKnown: true, processes: 2},
		{name: "non-members left out", prev: procs(pm(1, 10, 100), backend(200, 5, 3, 50)), cur: procs(pm(2, 10, 100), backend(200, 5, 9, 90)),
			member: func(pid int) bool { return pid == 100 }, cpu: 1, ioKnown: true, processes: 1},
		{name: "io unreadable", prev: procs(pm(1, 10, 100), ProcSample{PID: 200, StartTicks: 5, CPUSec: 1}),
			cur: procs(pm(1, 10, 100), ProcSample{PID: 200, StartTicks: 5, CPUSec: 2}), member: all, cpu: 1, processes: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := GroupDelta(Sample{Procs: tc.prev}, Sample{Procs: tc.cur}, tc.member)
			if !near(g.CPUSec, tc.cpu) || g.WriteBytes != tc.write || g.IOKnown != tc.ioKnown || g.Processes != tc.processes {
				t.Errorf("got %+v; want cpu %v write %d io %v processes %d", g, tc.cpu, tc.write, tc.ioKnown, tc.processes)
			}
		})
	}

	// Threads measured in nanoseconds raise a process's CPU above its 10 ms ticks, never lower it.
	prev := Sample{Procs: map[int]ProcSample{7: {PID: 7, StartTicks: 1, CPUSec: 1, ThreadCPUSec: map[int]float64{7: 0.5, 8: 0.5}}}}
	cur := Sample{Procs: map[int]ProcSample{7: {PID: 7, StartTicks: 1, CPUSec: 1.01, ThreadCPUSec: map[int]float64{7: 0.51, 8: 0.505, 9: 3}}}}
	if g := GroupDelta(prev, cur, all); !near(g.CPUSec, 0.015) {
		t.Errorf("threads above ticks: %v, want 0.015", g.CPUSec)
	}
	cur.Procs[7] = ProcSample{PID: 7, StartTicks: 1, CPUSec: 1.5, ThreadCPUSec: map[int]float64{7: 0.6, 8: 0.6}}
	if g := GroupDelta(prev, cur, all); !near(g.CPUSec, 0.5) {
		t.Errorf("threads below ticks: %v, want 0.5", g.CPUSec)
	}
	// Cancelled writes (a file truncated before writeback) are taken off.
	prev = Sample{Procs: map[int]ProcSample{1: {PID: 1, IOKnown: true, WriteBytes: 100, CancelledWriteBytes: 10}}}
	cur = Sample{Procs: map[int]ProcSample{1: {PID: 1, IOKnown: true, WriteBytes: 300, CancelledWriteBytes: 60}}}
	if g := GroupDelta(prev, cur, all); g.WriteBytes != 150 {
		t.Errorf("net writes %d, want 150", g.WriteBytes)
	}
}
