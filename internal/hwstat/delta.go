package hwstat

import (
	"fmt"
	"slices"
)

// Interval is what happened between two samples: differences of the cumulative counters and
// their rates per second of wall time. Counters that went backwards (a counter reset) count
// as 0, never negative.
type Interval struct {
	IntervalSec float64
	// CPU is CPU seconds consumed by kind over the interval, summed over all CPUs.
	CPU CPUTimes
	// CPUBusyPct is CPU.BusySec as a percentage of CPU.SpanSec: the processes' CPU as a
	// share of all CPUs' time (what vmstat's us+sy, the reference's cpups, spec §2.2,
	// estimates from timer ticks).
	CPUBusyPct            float64
	ContextSwitches       uint64
	ContextSwitchesPerSec float64
	// Devices are the disks the IO figures cover (empty: IO not sampled).
	Devices          []string
	ReadOps          uint64
	ReadOpsPerSec    float64
	ReadBytes        uint64
	ReadBytesPerSec  float64
	WriteOps         uint64
	WriteOpsPerSec   float64
	WriteBytes       uint64
	WriteBytesPerSec float64
	// Procs has an entry for every PID in either sample.
	Procs map[int]ProcDelta
}

// ProcDelta is one process over an interval.
type ProcDelta struct {
	PID  int
	Comm string
	// CPUSec is CPU time used in the interval. For a process that appeared (or whose PID
	// was reused) it is all its CPU time so far; for one that exited it is 0 — its CPU after
	// the previous sample is lost, never negative.
	CPUSec float64
	// ThreadsCPUSec is the CPU its threads used in the interval, summed over the threads
	// in both samples (when both sampled threads; else 0). With nanosecond thread times it
	// can exceed CPUSec, which comes in 10 ms ticks.
	ThreadsCPUSec float64
	// RSSBytes is the latest RSS (0 if exited); PeakRSSBytes the larger of both samples.
	RSSBytes     uint64
	PeakRSSBytes uint64
	// IOKnown is false if either sample lacked /proc/PID/io; then the IO bytes are absent.
	// WriteBytes is net of cancelled writes (ProcSample.NetWriteBytes).
	IOKnown    bool
	ReadBytes  uint64
	WriteBytes uint64
	// Appeared: not in prev (or a different process under the same PID); Exited: not in cur.
	Appeared bool
	Exited   bool
}

// Delta computes cur minus prev. prev is the baseline: the first sample of a step is only
// ever used as prev, never reported by itself. It fails if cur is not later than prev or
// the samples cover different devices.
func Delta(prev, cur Sample) (Interval, error) {
	sec := cur.Time.Sub(prev.Time).Seconds()
	if sec <= 0 {
		return Interval{}, fmt.Errorf("hwstat: delta: sample at %v is not after %v", cur.Time, prev.Time)
	}
	if !slices.Equal(prev.Devices, cur.Devices) {
		return Interval{}, fmt.Errorf("hwstat: delta: devices changed from %v to %v", prev.Devices, cur.Devices)
	}
	d := Interval{
		IntervalSec: sec,
		CPU: CPUTimes{
			UserSec:    subF(cur.CPU.UserSec, prev.CPU.UserSec),
			NiceSec:    subF(cur.CPU.NiceSec, prev.CPU.NiceSec),
			SystemSec:  subF(cur.CPU.SystemSec, prev.CPU.SystemSec),
			IdleSec:    subF(cur.CPU.IdleSec, prev.CPU.IdleSec),
			IOWaitSec:  subF(cur.CPU.IOWaitSec, prev.CPU.IOWaitSec),
			IRQSec:     subF(cur.CPU.IRQSec, prev.CPU.IRQSec),
			SoftIRQSec: subF(cur.CPU.SoftIRQSec, prev.CPU.SoftIRQSec),
			StealSec:   subF(cur.CPU.StealSec, prev.CPU.StealSec),
		},
		ContextSwitches: subU(cur.ContextSwitches, prev.ContextSwitches),
		Devices:         slices.Clone(cur.Devices),
		ReadOps:         subU(cur.Disk.ReadsCompleted, prev.Disk.ReadsCompleted),
		ReadBytes:       subU(cur.Disk.SectorsRead, prev.Disk.SectorsRead) * SectorBytes,
		WriteOps:        subU(cur.Disk.WritesCompleted, prev.Disk.WritesCompleted),
		WriteBytes:      subU(cur.Disk.SectorsWritten, prev.Disk.SectorsWritten) * SectorBytes,
		Procs:           make(map[int]ProcDelta, len(cur.Procs)),
	}
	if cur.CPUs > 0 && cur.CPUs == prev.CPUs {
		d.CPU.ElapsedSec = sec * float64(cur.CPUs)
	}
	if t, ok := TasksDelta(prev, cur); ok {
		d.CPU.TasksSec, d.CPU.KernelTasksSec, d.CPU.TasksSlackSec = t.TasksSec, t.KernelTasksSec, t.TasksSlackSec
	}
	if t := d.CPU.SpanSec(); t > 0 {
		d.CPUBusyPct = 100 * d.CPU.BusySec() / t
	}
	d.ContextSwitchesPerSec = float64(d.ContextSwitches) / sec
	d.ReadOpsPerSec = float64(d.ReadOps) / sec
	d.ReadBytesPerSec = float64(d.ReadBytes) / sec
	d.WriteOpsPerSec = float64(d.WriteOps) / sec
	d.WriteBytesPerSec = float64(d.WriteBytes) / sec

	for pid, c := range cur.Procs {
		p, had := prev.Procs[pid]
		if had && p.StartTicks != c.StartTicks {
			had = false // PID reused by a new process
		}
		pd := ProcDelta{PID: pid, Comm: c.Comm, RSSBytes: c.RSSBytes, PeakRSSBytes: c.RSSBytes}
		if !had {
			pd.Appeared = true
			pd.CPUSec = c.CPUSec
			pd.IOKnown, pd.ReadBytes, pd.WriteBytes = c.IOKnown, c.ReadBytes, c.NetWriteBytes()
		} else {
			pd.CPUSec = subF(c.CPUSec, p.CPUSec)
			pd.PeakRSSBytes = max(p.RSSBytes, c.RSSBytes)
			for tid, sec := range c.ThreadCPUSec {
				if was, ok := p.ThreadCPUSec[tid]; ok {
					pd.ThreadsCPUSec += subF(sec, was)
				}
			}
			if p.IOKnown && c.IOKnown {
				pd.IOKnown = true
				pd.ReadBytes = subU(c.ReadBytes, p.ReadBytes)
				pd.WriteBytes = subU(c.NetWriteBytes(), p.NetWriteBytes())
			}
		}
		d.Procs[pid] = pd
	}
	for pid, p := range prev.Procs {
		if _, ok := d.Procs[pid]; ok {
			continue
		}
		d.Procs[pid] = ProcDelta{PID: pid, Comm: p.Comm, PeakRSSBytes: p.RSSBytes, Exited: true}
	}
	return d, nil
}

// TasksDelta is every process's CPU between two samples that read it (Request.AllTasks),
// in a CPUTimes of which only TasksSec, KernelTasksSec and TasksSlackSec are set; ok is
// false when either sample lacks it or cur is not later than prev.
//
// TasksSec is the difference of the samples' sums over the processes present: an exited
// process's CPU has moved into its parent's. What a process took along that nobody waited
// for (a parent ignoring SIGCHLD) is lost; a difference below 0 counts as 0.
//
// TasksSlackSec bounds how far TasksSec can be above the CPU the processes used between
// the samples' times. A process's utime and stime (and its waited-for children's cutime
// and cstime) are each whole 10 ms units, cut down from nanoseconds, so a difference of
// two readings can be up to 20 ms above what it measures for each process whose own
// counters moved, 20 ms more when its children's did, and as much again for each process
// that was gone from cur (its last reading, which is subtracted, was up to that much
// below the CPU its parent's counters took over). And cur's processes are read in the
// ScanSec after its Time, while the CPUs work on.
func TasksDelta(prev, cur Sample) (CPUTimes, bool) {
	if prev.Tasks <= 0 || cur.Tasks <= 0 || !cur.Time.After(prev.Time) {
		return CPUTimes{}, false
	}
	var c CPUTimes
	c.TasksSec = subF(cur.TasksCPUSec, prev.TasksCPUSec)
	c.KernelTasksSec = min(subF(cur.KernelCPUSec, prev.KernelCPUSec), c.TasksSec)
	const unit = 2.0 / userHZ // two counters, each cut down to a 10 ms unit
	var units float64
	if prev.tasks != nil && cur.tasks != nil {
		for pid, p := range prev.tasks {
			q, ok := cur.tasks[pid]
			if !ok || q.mark.start != p.mark.start {
				units += unit
				if p.children() > 0 {
					units += unit
				}
				continue
			}
			if q.own != p.own {
				units += unit
			}
			if q.children() != p.children() {
				units += unit
			}
		}
		// A process that appeared is read below what it used: it adds nothing.
	}
	c.TasksSlackSec = units + cur.ScanSec*float64(max(cur.CPUs, 1))
	return c, true
}

// subU is cur-prev, or 0 if the counter went backwards.
func subU(cur, prev uint64) uint64 {
	if cur < prev {
		return 0
	}
	return cur - prev
}

// subF is cur-prev, or 0 if the counter went backwards.
func subF(cur, prev float64) float64 {
	if cur < prev {
		return 0
	}
	return cur - prev
}
