package report

import (
	"github.com/dbperf/dbperf/internal/metrics"
)

// Env keys a run stores to say what HW sampling could see (session/hw.go).
const (
	envServerProcesses = "server_processes"
	envIODevices       = "io_devices"
	envIODevicesNote   = "io_devices_note"
)

// HWReport is a step's HW-efficiency figures and what they were computed from.
type HWReport struct {
	// Metrics are the stored HW-efficiency metrics by name (metrics.MetricNames).
	Metrics map[string]float64
	// Absent says, for each metric of metrics.MetricNames that is missing, why.
	Absent map[string]string
	// HW is what was sampled over the step (nil when nothing was).
	HW *metrics.HW
	// ConnCPU is the server-side CPU of the step's sessions by role.
	ConnCPU     []metrics.ConnCPU
	DBSizeBytes int64
	DBSizeKnown bool
}

// IntervalHW is the machine, server and client over one interval, as rates.
type IntervalHW struct {
	// CPU percentages are of all CPUs' time (100 = every core busy): busy is what was
	// neither idle, iowait nor steal (hwstat.CPUTimes.BusySec); user, system and iowait
	// are /proc/stat's timer-tick counts.
	CPUBusyPct, CPUUserPct, CPUSystemPct, CPUIOWaitPct float64
	ContextSwitchesPerSec                              float64
	// IOKnown: the device rates were measured.
	IOKnown                                                    bool
	ReadOpsPerSec, ReadKBPerSec, WriteOpsPerSec, WriteKBPerSec float64
	// ServerKnown: the server's CPU was measured; ServerCPUPct is of all CPUs.
	ServerKnown  bool
	ServerCPUSec float64
	ServerCPUPct float64
}

func buildHW(r metrics.StepResult, env map[string]string) HWReport {
	h := HWReport{Metrics: r.Metrics, HW: r.HW, ConnCPU: r.ConnCPU, DBSizeBytes: r.DBSizeBytes, DBSizeKnown: r.DBSizeKnown,
		Absent: map[string]string{}}
	for _, name := range metrics.MetricNames() {
		if _, ok := r.Metrics[name]; !ok {
			h.Absent[name] = absentReason(name, r, env)
		}
	}
	return h
}

// absentReason says why a metric is missing from a step.
func absentReason(name string, r metrics.StepResult, env map[string]string) string {
	if r.Status == metrics.StatusSkipped {
		return "step not run"
	}
	noOps := r.PrimaryCount() == 0
	switch name {
	case metrics.MetricMaxOpSec:
		return "no primary op completed"
	case metrics.MetricDBGB:
		return "database size not read (step did not finish, or the engine could not tell)"
	case metrics.MetricClientCPUPerOp:
		if noOps {
			return "no primary op completed"
		}
	}
	if r.HW == nil {
		if len(r.Labels) > 0 && r.Status == metrics.StatusOK && r.Metrics == nil {
			return "not sampled (stored by a dbperf without HW sampling)"
		}
		return "not sampled"
	}
	switch name {
	case metrics.MetricCPUPerOp, metrics.MetricCSPerOp:
		if r.HW.Remote {
			return "the server is on another machine: this machine's CPU is not the benchmark's"
		}
	case metrics.MetricServerCPUPerOp, metrics.MetricRSSGB:
		if r.HW.Embedded {
			return "embedded engine: its CPU is in client_cpupq"
		}
		if !r.HW.Server.Known {
			if why := env[envServerProcesses]; why != "" {
				return "server processes " + why
			}
			return "server processes not visible"
		}
	case metrics.MetricReadsPerOp, metrics.MetricReadKBPerOp, metrics.MetricWritesPerRow, metrics.MetricWriteKBPerRow:
		if !r.HW.IOKnown() {
			if why := env[envIODevicesNote]; why != "" {
				return "device IO " + why
			}
			return "device IO not sampled"
		}
		if name == metrics.MetricWritesPerRow || name == metrics.MetricWriteKBPerRow {
			return "the step inserts no rows"
		}
	}
	if noOps {
		return "no primary op completed"
	}
	return "not measured"
}

func buildIntervalHW(h *metrics.HW, seconds float64) *IntervalHW {
	if h == nil {
		return nil
	}
	out := &IntervalHW{ServerKnown: h.Server.Known, ServerCPUSec: Finite(h.Server.CPUSec), IOKnown: h.IOKnown()}
	if t := h.CPU.SpanSec(); t > 0 {
		out.CPUBusyPct = Finite(100 * h.CPU.BusySec() / t)
		out.CPUUserPct = Finite(100 * (h.CPU.UserSec + h.CPU.NiceSec) / t)
		out.CPUSystemPct = Finite(100 * h.CPU.SystemSec / t)
		out.CPUIOWaitPct = Finite(100 * h.CPU.IOWaitSec / t)
		if h.Server.Known {
			out.ServerCPUPct = Finite(100 * h.Server.CPUSec / t)
		}
	}
	if seconds > 0 {
		out.ContextSwitchesPerSec = Finite(float64(h.ContextSwitches) / seconds)
		if out.IOKnown {
			out.ReadOpsPerSec = Finite(float64(h.ReadOps) / seconds)
			out.ReadKBPerSec = Finite(float64(h.ReadBytes) / 1024 / seconds)
			out.WriteOpsPerSec = Finite(float64(h.WriteOps) / seconds)
			out.WriteKBPerSec = Finite(float64(h.WriteBytes) / 1024 / seconds)
		}
	}
	return out
}

// HWNotes are the run's one-line explanations of what its HW figures cover: which
// server processes and devices were sampled.
func (r RunReport) HWNotes() []string {
	var notes []string
	if v := r.Env[envServerProcesses]; v != "" {
		notes = append(notes, "server processes: "+v)
	}
	switch {
	case r.Env[envIODevices] != "":
		notes = append(notes, "device IO: "+r.Env[envIODevices])
	case r.Env[envIODevicesNote] != "":
		notes = append(notes, "device IO: "+r.Env[envIODevicesNote])
	}
	return notes
}
