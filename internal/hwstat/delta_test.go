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
				if d.IntervalSec != 2 || d.CPU != want {
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
