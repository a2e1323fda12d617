package runner

import (
	"strings"
	"testing"

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
