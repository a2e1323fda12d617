package hwstat

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/prometheus/procfs/blockdevice"
)

// SectorBytes is the unit of the sector counts in /proc/diskstats: always 512 bytes,
// whatever the device's real sector size.
const SectorBytes = 512

// CPUTimes is CPU time by kind in seconds, summed over all CPUs (the "cpu" line of
// /proc/stat, converted from USER_HZ ticks).
type CPUTimes struct {
	UserSec    float64
	NiceSec    float64
	SystemSec  float64
	IdleSec    float64
	IOWaitSec  float64
	IRQSec     float64
	SoftIRQSec float64
	StealSec   float64
}

// TotalSec is the sum of all kinds.
func (c CPUTimes) TotalSec() float64 {
	return c.UserSec + c.NiceSec + c.SystemSec + c.IdleSec + c.IOWaitSec + c.IRQSec + c.SoftIRQSec + c.StealSec
}

// BusySec is user+nice+system+irq+softirq: what vmstat reports as us+sy (the reference's
// cpups, spec §2.2); idle, iowait and steal are not busy.
func (c CPUTimes) BusySec() float64 {
	return c.UserSec + c.NiceSec + c.SystemSec + c.IRQSec + c.SoftIRQSec
}

// DiskCounters are cumulative /proc/diskstats counters of one device (or a sum of devices).
type DiskCounters struct {
	ReadsCompleted  uint64
	SectorsRead     uint64
	WritesCompleted uint64
	SectorsWritten  uint64
}

func (d DiskCounters) add(o DiskCounters) DiskCounters {
	return DiskCounters{
		ReadsCompleted:  d.ReadsCompleted + o.ReadsCompleted,
		SectorsRead:     d.SectorsRead + o.SectorsRead,
		WritesCompleted: d.WritesCompleted + o.WritesCompleted,
		SectorsWritten:  d.SectorsWritten + o.SectorsWritten,
	}
}

// ProcSample is one process's cumulative counters.
type ProcSample struct {
	PID  int
	Comm string
	// StartTicks is the start time in ticks since boot; a different value for the same PID
	// means the PID was reused.
	StartTicks uint64
	// CPUSec is utime+stime of the process (all its threads), excluding waited-for children.
	CPUSec   float64
	RSSBytes uint64
	// IOKnown says whether /proc/PID/io was readable (it needs the same user or
	// CAP_SYS_PTRACE); when false ReadBytes and WriteBytes are absent, not zero.
	IOKnown    bool
	ReadBytes  uint64
	WriteBytes uint64
	// ThreadCPUSec is utime+stime per thread id, from /proc/PID/task/TID/stat. Threads
	// that exit between listing and reading are left out.
	ThreadCPUSec map[int]float64
}

// Sample is one reading of the cumulative counters. On its own it means nothing (counters
// are since boot); use Delta between two samples.
type Sample struct {
	Time            time.Time
	CPU             CPUTimes
	ContextSwitches uint64
	// Devices are the disk names whose counters are summed into Disk.
	Devices []string
	Disk    DiskCounters
	// Procs holds the requested processes that existed at sample time, by PID.
	Procs map[int]ProcSample
}

// Sample reads /proc/stat, /proc/diskstats for devices (names from Devices; none to skip
// IO) and, for each pid, its stat, io and threads. A pid that no longer exists is left out
// of Procs rather than failing the sample (backends come and go).
func (s *Sampler) Sample(pids []int, devices []string) (Sample, error) {
	out := Sample{Time: s.now(), Procs: make(map[int]ProcSample, len(pids))}
	st, err := s.fs.Stat()
	if err != nil {
		return Sample{}, fmt.Errorf("hwstat: read %s/stat: %w", s.procRoot, err)
	}
	c := st.CPUTotal
	out.CPU = CPUTimes{
		UserSec: c.User, NiceSec: c.Nice, SystemSec: c.System, IdleSec: c.Idle,
		IOWaitSec: c.Iowait, IRQSec: c.IRQ, SoftIRQSec: c.SoftIRQ, StealSec: c.Steal,
	}
	out.ContextSwitches = st.ContextSwitches

	if len(devices) > 0 {
		out.Devices = append([]string(nil), devices...)
		sort.Strings(out.Devices)
		byName, err := s.diskstats()
		if err != nil {
			return Sample{}, err
		}
		for _, d := range out.Devices {
			dc, ok := byName[d]
			if !ok {
				return Sample{}, fmt.Errorf("hwstat: device %q not in %s/diskstats", d, s.procRoot)
			}
			out.Disk = out.Disk.add(dc)
		}
	}

	for _, pid := range pids {
		ps, err := s.proc(pid)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return Sample{}, err
		}
		out.Procs[pid] = ps
	}
	return out, nil
}

// diskstats reads /proc/diskstats by exact device name. procfs's blockdevice parser
// accepts the 14-, 18- and 20-field layouts (kernel < 4.18, 4.18+, 5.5+).
func (s *Sampler) diskstats() (map[string]DiskCounters, error) {
	bfs, err := blockdevice.NewFS(s.procRoot, s.sysRoot)
	if err != nil {
		return nil, fmt.Errorf("hwstat: open %s, %s: %w", s.procRoot, s.sysRoot, err)
	}
	stats, err := bfs.ProcDiskstats()
	if err != nil {
		return nil, fmt.Errorf("hwstat: read %s/diskstats: %w", s.procRoot, err)
	}
	out := make(map[string]DiskCounters, len(stats))
	for _, d := range stats {
		out[d.DeviceName] = DiskCounters{
			ReadsCompleted:  d.ReadIOs,
			SectorsRead:     d.ReadSectors,
			WritesCompleted: d.WriteIOs,
			SectorsWritten:  d.WriteSectors,
		}
	}
	return out, nil
}

// proc reads one process. procfs's stat parser takes comm between the first "(" and the
// last ")", so comms with spaces and parentheses parse. An error wrapping os.ErrNotExist
// means the process is gone.
func (s *Sampler) proc(pid int) (ProcSample, error) {
	p, err := s.fs.Proc(pid)
	if err != nil {
		return ProcSample{}, fmt.Errorf("hwstat: process %d: %w", pid, err)
	}
	st, err := p.Stat()
	if err != nil {
		return ProcSample{}, fmt.Errorf("hwstat: read %s/%d/stat: %w", s.procRoot, pid, err)
	}
	ps := ProcSample{
		PID:        pid,
		Comm:       st.Comm,
		StartTicks: st.Starttime,
		CPUSec:     st.CPUTime(),
		RSSBytes:   uint64(max(st.ResidentMemory(), 0)),
	}
	if pio, err := p.IO(); err == nil {
		ps.IOKnown, ps.ReadBytes, ps.WriteBytes = true, pio.ReadBytes, pio.WriteBytes
	}
	threads, err := s.threadCPU(pid)
	if err != nil {
		return ProcSample{}, err
	}
	ps.ThreadCPUSec = threads
	return ps, nil
}

// threadCPU reads utime+stime of every thread of pid.
func (s *Sampler) threadCPU(pid int) (map[int]float64, error) {
	ts, err := s.fs.AllThreads(pid)
	if err != nil {
		return nil, fmt.Errorf("hwstat: list threads of %d: %w", pid, err)
	}
	out := make(map[int]float64, len(ts))
	for _, t := range ts {
		st, err := t.Stat()
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("hwstat: read %s/%d/task/%d/stat: %w", s.procRoot, pid, t.PID, err)
		}
		out[t.PID] = st.CPUTime()
	}
	return out, nil
}

// ProcessTree returns root and all its descendants (e.g. a Postgres postmaster and every
// backend), sorted, from the ppid field of every /proc/PID/stat. Processes that exit while
// /proc is scanned are skipped. Returns an error if root does not exist.
func (s *Sampler) ProcessTree(root int) ([]int, error) {
	procs, err := s.fs.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("hwstat: list %s: %w", s.procRoot, err)
	}
	children := map[int][]int{}
	found := false
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			continue // exited while scanning, or not readable
		}
		if p.PID == root {
			found = true
		}
		children[st.PPID] = append(children[st.PPID], p.PID)
	}
	if !found {
		return nil, fmt.Errorf("hwstat: process %d: %w", root, os.ErrNotExist)
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	sort.Ints(out)
	return out, nil
}
