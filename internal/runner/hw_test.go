package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/metrics"
)

// TestMachineBelowProcesses: a step whose machine busy CPU is below dbperf's and the
// server's gets a note saying why; within the 10 ms reading units it gets none.
func TestMachineBelowProcesses(t *testing.T) {
	hw := func(cpu hwstat.CPUTimes, client, server float64, remote bool) metrics.HW {
		return metrics.HW{CPU: cpu, Remote: remote, Client: metrics.ProcHW{Known: true, Processes: 1, CPUSec: client},
			Server: metrics.ProcHW{Known: true, Processes: 7, CPUSec: server}}
	}
	ticks := hwstat.CPUTimes{UserSec: 1.2, SystemSec: 0.5, SoftIRQSec: 0.1, IdleSec: 2, ElapsedSec: 4}
	for _, tc := range []struct {
		name string
		hw   metrics.HW
		want string
	}{
		{"every process's CPU holds them", hw(hwstat.CPUTimes{TasksSec: 2.5, UserSec: 1}, 1, 1.4, false), ""},
		{"within the reading units", hw(hwstat.CPUTimes{TasksSec: 2.35}, 1, 1.4, false), ""},
		{"processes' CPU lost", hw(hwstat.CPUTimes{TasksSec: 2}, 1, 1.4, false), "took their CPU along"},
		{"only ticks", hw(ticks, 1, 1.4, false), "timer ticks"},
		{"remote server", hw(ticks, 1, 0, true), ""},
	} {
		got := machineBelowProcesses(tc.hw)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestMachineAboveCapacity: a step whose processes used more CPU than the CPUs had, beyond
// their reading's error, gets a note saying other_cpu_pct is left out; within it, none.
func TestMachineAboveCapacity(t *testing.T) {
	hw := func(cpu hwstat.CPUTimes, remote bool) metrics.HW {
		return metrics.HW{CPU: cpu, Remote: remote, Embedded: true, Client: metrics.ProcHW{Known: true, Processes: 1, CPUSec: 0.02}}
	}
	for _, tc := range []struct {
		name string
		hw   metrics.HW
		want string
	}{
		{"below the CPUs' time", hw(hwstat.CPUTimes{TasksSec: 1.9, ElapsedSec: 2, TasksSlackSec: 0.1}, false), ""},
		{"above within the reading's error", hw(hwstat.CPUTimes{TasksSec: 2.09, ElapsedSec: 2, TasksSlackSec: 0.1}, false), ""},
		{"above beyond it", hw(hwstat.CPUTimes{TasksSec: 0.21, ElapsedSec: 0.055, TasksSlackSec: 0.05}, false), "missed or double-counted"},
		{"processes not read", hw(hwstat.CPUTimes{UserSec: 3, ElapsedSec: 2}, false), ""},
		{"remote server", hw(hwstat.CPUTimes{TasksSec: 3, ElapsedSec: 2}, true), ""},
	} {
		got := machineAboveCapacity(tc.hw)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if _, ok := (metrics.StepResult{HW: &tc.hw}).Noise()[metrics.MetricOtherCPUPct]; ok == (tc.want != "") && !tc.hw.Remote && tc.hw.CPU.TasksSec > 0 {
			t.Errorf("%s: noted %v, other_cpu_pct present %v", tc.name, got != "", ok)
		}
	}
}

// TestWholeTasks: the step's every-process CPU is its first and last samples' difference,
// whatever its intervals' were (a last interval of a few ms that saw no 10 ms unit move
// has 0, which Add reads as unknown), and so is the bound of its reading's error.
func TestWholeTasks(t *testing.T) {
	t0 := time.Unix(1000, 0)
	first := hwstat.Sample{Time: t0, Tasks: 90, TasksCPUSec: 500, KernelCPUSec: 40}
	last := hwstat.Sample{Time: t0.Add(2 * time.Second), Tasks: 91, TasksCPUSec: 503.5, KernelCPUSec: 40.25, CPUs: 2, ScanSec: 0.004}
	summed := hwstat.CPUTimes{UserSec: 3, IdleSec: 1, ElapsedSec: 4, TasksSec: 3.4}.Add(hwstat.CPUTimes{ElapsedSec: 0.01, IdleSec: 0.01})
	if summed.TasksSec != 0 {
		t.Fatalf("an interval without tasks CPU makes the sum's unknown: %+v", summed)
	}
	got := wholeTasks(summed, first, last)
	if got.TasksSec != 3.5 || got.KernelTasksSec != 0.25 || got.TasksSlackSec != 0.008 || got.UserSec != 3 {
		t.Errorf("wholeTasks = %+v; want tasks 3.5, kernel 0.25, slack 0.008 (the last scan), the kinds kept", got)
	}
	first.Tasks = 0 // not read: left as summed
	if got := wholeTasks(summed, first, last); got != summed {
		t.Errorf("first sample without tasks: %+v, want %+v", got, summed)
	}
}
