package metrics

import "math"

// Noise metrics: what else the machine did while a step was measured, so a step measured
// on a busy shared or virtual machine says so. Stored per step in StepResult.Metrics with
// the HW-efficiency metrics, computed once when the step ends (StepResult.Noise) from the
// step's HW. They are percentages of the machine's CPU capacity over the timed load:
// CPUTimes.SpanSec, its wall seconds × the CPUs online.
const (
	// MetricOtherCPUPct is the CPU time of the processes that were neither dbperf nor the
	// server (for an embedded engine the server is dbperf itself) during the timed load:
	// every process's CPU (CPUTimes.TasksSec, exited processes included) less the kernel
	// threads' (CPUTimes.KernelTasksSec), the server's and dbperf's own, never below 0, as a
	// percentage of the CPU capacity. Kernel threads are left out because most of their
	// work is the step's own IO (writeback, the journal: ~3% of 2 CPUs in an insert loop on
	// SQLite, against ~0.2% idle). Absent when the machine's processes could not be read,
	// when a server on this machine could not be seen (its CPU would count as other), and
	// for a remote server (the machine seen is not the server's).
	//
	// It never exceeds 100 less dbperf's and the server's share: every process's CPU is
	// read in 10 ms units per process, one process after the other, so it can come out
	// above the CPUs' time by up to its reading's error (CPUTimes.TasksSlackSec), and what
	// is above is that error and taken off. Above by more, no reading error explains it —
	// a sample that missed or double-counted a process — and the figure is absent (the
	// runner notes it), not cut to fit: it would hide the broken reading, which cpupq
	// shares. It is absent too when that error could put it (with steal_pct) on either
	// side of NoisyOtherCPUPct, as in a step of a few tens of milliseconds, whose every
	// process's CPU moves by whole 10 ms units.
	MetricOtherCPUPct = "other_cpu_pct"
	// MetricStealPct is /proc/stat's steal time over the timed load — the time the
	// hypervisor ran something else while a virtual CPU wanted to run — as a percentage of
	// the CPU capacity; 0 on bare metal. Absent when the machine was not sampled and for a
	// remote server.
	MetricStealPct = "steal_pct"
)

// NoisyOtherCPUPct is the threshold of a noisy step: a step whose other_cpu_pct +
// steal_pct exceeds it was measured on a busy machine; reports flag it and widen the
// comparison's interval.
const NoisyOtherCPUPct = 10.0

// NoiseMetricNames lists the noise metrics (MetricOtherCPUPct, MetricStealPct) in report
// order. They describe the machine during a step, not the engine's work per op, so they
// are not in MetricNames.
func NoiseMetricNames() []string { return []string{MetricOtherCPUPct, MetricStealPct} }

// Noise computes the noise metrics of a finished step from its HW; a figure whose inputs
// were not measured is left out (see the metric names), never 0.
func (r StepResult) Noise() map[string]float64 {
	out := map[string]float64{}
	hw := r.HW
	if hw == nil || hw.Remote {
		return out
	}
	span := hw.CPU.SpanSec()
	if span <= 0 {
		return out
	}
	set := func(name string, v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[name] = v
		}
	}
	set(MetricStealPct, 100*hw.CPU.StealSec/span)
	// BusySec falls back to /proc/stat's timer ticks when the processes were not read;
	// those miss work shorter than a tick, so they cannot be set against processes' CPU.
	// A duet's (HW.Shared) other CPU would hold the other point's server and client.
	if hw.CPU.TasksSec <= 0 || !hw.Client.Known || !(hw.Embedded || hw.Server.Known) || hw.Shared {
		return out
	}
	if hw.CPU.TasksSec > span+hw.CPU.TasksSlackSec {
		return out // more CPU than the CPUs had: a broken reading, not a figure
	}
	own := hw.Client.CPUSec
	if hw.Server.Known && !hw.Embedded {
		own += hw.Server.CPUSec
	}
	// Within its error of the span, what is above the span is that error.
	other := 100 * max(min(hw.CPU.TasksSec-hw.CPU.KernelTasksSec, span)-own, 0) / span
	if slack := 100 * hw.CPU.TasksSlackSec / span; math.Abs(other+out[MetricStealPct]-NoisyOtherCPUPct) < slack {
		return out // too coarse to tell a noisy step from a quiet one
	}
	set(MetricOtherCPUPct, other)
	return out
}

// Noisy says whether a step's noise metrics exceed NoisyOtherCPUPct; known is false when
// neither was measured.
func Noisy(m map[string]float64) (noisy, known bool) {
	other, okO := m[MetricOtherCPUPct]
	steal, okS := m[MetricStealPct]
	return other+steal > NoisyOtherCPUPct, okO || okS
}
