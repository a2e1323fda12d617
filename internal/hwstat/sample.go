package hwstat

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"
)

// userHZ is the unit of the tick counts in /proc/PID/stat (USER_HZ, 100 on Linux).
const userHZ = 100

// SectorBytes is the unit of the sector counts in /proc/diskstats: always 512 bytes,
// whatever the device's real sector size.
const SectorBytes = 512

// CPUTimes is CPU time by kind in seconds, summed over all CPUs (the "cpu" line of
// /proc/stat, converted from USER_HZ ticks), and two measures of the span that /proc/stat
// lacks: the CPU time it had (ElapsedSec) and the CPU time its processes used (TasksSec).
//
// /proc/stat's busy kinds do not measure the CPU work done, for two reasons seen on a
// tickless (NO_HZ_IDLE) virtual machine. User, nice, system, irq and softirq are counted
// one timer tick (1/HZ s) at a time, for ticks that fire while a CPU is busy; a CPU that
// wakes, works for less than a tick and sleeps again — a client and a server passing
// queries back and forth — is busy between ticks, and that work shows in no field (a
// PostgreSQL qr100 step on 2 CPUs: 17.3 s of busy ticks against 20.8 s of the processes'
// CPU). And steal, the time the hypervisor kept a CPU from running, also accrues while a
// CPU wakes from idle, so it overlaps idle, which is measured as sleep time; and each busy
// tick is shortened by the steal since the last one. With much steal, ElapsedSec − idle −
// iowait − steal falls below the processes' CPU too (0.70 s/s against 0.90 s/s of a query
// loop with 0.33 s/s of steal). The processes' own CPU is measured by the scheduler in
// nanoseconds without steal: BusySec is TasksSec.
type CPUTimes struct {
	UserSec    float64
	NiceSec    float64
	SystemSec  float64
	IdleSec    float64
	IOWaitSec  float64
	IRQSec     float64
	SoftIRQSec float64
	StealSec   float64
	// ElapsedSec is the time all online CPUs had over a span: its wall-clock seconds ×
	// the CPUs online (the cpuN lines of /proc/stat). 0 when unknown: in a single Sample
	// (counters since boot have no span), when the CPUs online changed within the span,
	// and in figures stored before it was measured.
	ElapsedSec float64
	// TasksSec is the CPU time every process and kernel thread of the machine used in the
	// span, as far as /proc shows them (Sample.TasksCPUSec): utime+stime, with processes
	// that exited within the span counted through their parents' waited-for-children
	// counters. Interrupts served while a CPU was idle are in no task. 0 when unknown.
	TasksSec float64
	// KernelTasksSec is the part of TasksSec that kernel threads used (PF_KTHREAD in
	// /proc/PID/stat's flags: writeback, the filesystem's journal, block-IO completion,
	// softirq threads), much of it on behalf of the processes' IO. 0 when unknown, and in
	// figures read from the store, which does not keep it.
	KernelTasksSec float64
	// TasksSlackSec bounds how far TasksSec can be above the CPU the processes used in the
	// span because of how they are read (TasksDelta): in whole 10 ms units, and one after
	// the other after the span's end. 0 when unknown, and in figures read from the store,
	// which does not keep it.
	TasksSlackSec float64
}

// TotalSec is the sum of all kinds: the time the fields account for, which on a tickless
// kernel is less than ElapsedSec.
func (c CPUTimes) TotalSec() float64 {
	return c.UserSec + c.NiceSec + c.SystemSec + c.IdleSec + c.IOWaitSec + c.IRQSec + c.SoftIRQSec + c.StealSec
}

// TickBusySec is user+nice+system+irq+softirq: what vmstat reports as us+sy (the
// reference's cpups, spec §2.2), counted in timer ticks.
func (c CPUTimes) TickBusySec() float64 {
	return c.UserSec + c.NiceSec + c.SystemSec + c.IRQSec + c.SoftIRQSec
}

// BusySec is the machine's CPU work over a span: TasksSec, or TickBusySec when it is
// unknown (figures stored before it was measured).
func (c CPUTimes) BusySec() float64 {
	if c.TasksSec > 0 {
		return c.TasksSec
	}
	return c.TickBusySec()
}

// SpanSec is the denominator of CPU shares: ElapsedSec, or TotalSec when it is unknown.
func (c CPUTimes) SpanSec() float64 {
	if c.ElapsedSec > 0 {
		return c.ElapsedSec
	}
	return c.TotalSec()
}

// Add returns the kind-by-kind sum of c and o (the CPU of two consecutive spans). The
// sum's ElapsedSec and TasksSec (and KernelTasksSec with it) are unknown (0) when either
// span's was; the zero CPUTimes is the identity.
func (c CPUTimes) Add(o CPUTimes) CPUTimes {
	sum := CPUTimes{
		UserSec: c.UserSec + o.UserSec, NiceSec: c.NiceSec + o.NiceSec, SystemSec: c.SystemSec + o.SystemSec,
		IdleSec: c.IdleSec + o.IdleSec, IOWaitSec: c.IOWaitSec + o.IOWaitSec, IRQSec: c.IRQSec + o.IRQSec,
		SoftIRQSec: c.SoftIRQSec + o.SoftIRQSec, StealSec: c.StealSec + o.StealSec,
	}
	switch {
	case c == CPUTimes{}:
		sum.ElapsedSec, sum.TasksSec, sum.KernelTasksSec, sum.TasksSlackSec = o.ElapsedSec, o.TasksSec, o.KernelTasksSec, o.TasksSlackSec
	case o == CPUTimes{}:
		sum.ElapsedSec, sum.TasksSec, sum.KernelTasksSec, sum.TasksSlackSec = c.ElapsedSec, c.TasksSec, c.KernelTasksSec, c.TasksSlackSec
	default:
		if c.ElapsedSec > 0 && o.ElapsedSec > 0 {
			sum.ElapsedSec = c.ElapsedSec + o.ElapsedSec
		}
		if c.TasksSec > 0 && o.TasksSec > 0 {
			sum.TasksSec = c.TasksSec + o.TasksSec
			sum.KernelTasksSec = c.KernelTasksSec + o.KernelTasksSec
			sum.TasksSlackSec = c.TasksSlackSec + o.TasksSlackSec
		}
	}
	return sum
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
	PPID int
	Comm string
	// StartTicks is the start time in ticks since boot; a different value for the same PID
	// means the PID was reused.
	StartTicks uint64
	// CPUSec is utime+stime of the process (all its threads), excluding waited-for children.
	CPUSec float64
	// ChildrenCPUSec is cutime+cstime: the CPU of every child the process has waited for,
	// over each child's whole life (and its own waited-for children's). A PostgreSQL
	// backend that exits moves its CPU here, into the postmaster's.
	ChildrenCPUSec float64
	RSSBytes       uint64
	// RSSAnonBytes, RSSFileBytes and RSSShmemBytes split RSSBytes (/proc/PID/status
	// RssAnon, RssFile, RssShmem): private anonymous memory, mapped files, and shared
	// memory such as PostgreSQL's shared buffers, which every backend maps.
	RSSAnonBytes  uint64
	RSSFileBytes  uint64
	RSSShmemBytes uint64
	// IOKnown says whether /proc/PID/io was readable (it needs the same user or
	// CAP_SYS_PTRACE); when false the IO fields are absent, not zero.
	//
	// The kernel adds the IO of a child the process has waited for to the process's own,
	// as it does with CPU into ChildrenCPUSec. ReadBytes is what the process made the
	// storage read, counted when the read was submitted. WriteBytes is counted when a
	// page-cache page or folio becomes dirty — the whole folio, however few bytes were
	// written into it (with large folios, Linux ≥ 6.16 on ext4 and xfs, an 8 KiB write to a
	// clean file range counts up to 2 MiB) — or when a direct write is submitted; it is not
	// what reaches the disk, nor when. CancelledWriteBytes are dirty bytes the process
	// dropped by truncating or deleting files before they were written back.
	IOKnown             bool
	ReadBytes           uint64
	WriteBytes          uint64
	CancelledWriteBytes uint64
	// ThreadCPUSec is CPU seconds per thread id (threadCPU), for the processes of
	// Request.ThreadsOf (nil for the others). Threads that exit between listing and
	// reading are left out.
	ThreadCPUSec map[int]float64
}

// TotalCPUSec is the process's CPU and its waited-for children's.
func (p ProcSample) TotalCPUSec() float64 { return p.CPUSec + p.ChildrenCPUSec }

// NetWriteBytes is WriteBytes less CancelledWriteBytes (never below 0): the kernel's own
// estimate of the writes the process caused (Documentation/filesystems/proc.rst).
func (p ProcSample) NetWriteBytes() uint64 { return subU(p.WriteBytes, p.CancelledWriteBytes) }

// Request says what one Sample reads.
type Request struct {
	// PIDs are the processes whose CPU, memory and IO are read.
	PIDs []int
	// ThreadsOf are processes among PIDs whose per-thread CPU is read too (MariaDB's
	// connection threads live in one mariadbd process).
	ThreadsOf []int
	// Devices are /proc/diskstats names whose counters are summed; none: IO is not read.
	Devices []string
	// TreeOf, when not 0, is a process whose tree — it and all its descendants, found in
	// this sample's reading of /proc — is read with PIDs (Sample.Tree).
	TreeOf int
	// AllTasks: sum the CPU of every process of the machine (Sample.TasksCPUSec).
	AllTasks bool
}

// Sample is one reading of the cumulative counters. On its own it means nothing (counters
// are since boot); use Delta between two samples.
type Sample struct {
	Time time.Time
	CPU  CPUTimes
	// CPUs is the number of CPUs online (cpuN lines of /proc/stat).
	CPUs            int
	ContextSwitches uint64
	// Devices are the disk names whose counters are summed into Disk.
	Devices []string
	Disk    DiskCounters
	// Procs holds the requested processes that existed at sample time, by PID.
	Procs map[int]ProcSample
	// Tree is Request.TreeOf and its descendants, sorted; nil when TreeOf was not asked
	// for or does not exist.
	Tree []int
	// TasksCPUSec is, for Request.AllTasks, the sum over every process /proc lists of its
	// CPU and its waited-for children's (ProcSample.TotalCPUSec); Tasks is how many
	// processes that is. KernelCPUSec is the part of TasksCPUSec of kernel threads
	// (PF_KTHREAD).
	TasksCPUSec  float64
	Tasks        int
	KernelCPUSec float64
	// ScanSec is how long after Time the reading of every process (Request.AllTasks,
	// Request.TreeOf) ended.
	ScanSec float64
	// tasks are the processes TasksCPUSec sums, for TasksDelta's bound of its units.
	tasks map[int]task
}

// reapAttempts bounds how often Sample reads the processes again because one of them
// waited for a child while they were read.
const reapAttempts = 3

// Sample reads /proc/stat, /proc/diskstats for req.Devices and, for each of req.PIDs and
// req.TreeOf's tree, its stat, status and io (and its threads for req.ThreadsOf); with
// req.AllTasks, the stat of every process. A pid that no longer exists is left out of
// Procs rather than failing the sample (backends come and go).
//
// The processes are read one after the other, so a child that exits and is waited for
// while they are read could be seen twice (alive, and in its parent's waited-for-children
// counters) or not at all. Sample reads again, once they are all read, what tells whether
// that happened (afterScan), and reads them all again when it did (up to reapAttempts
// times), so the processes' counters add up; when they still do not, every process's CPU
// is left unknown (Tasks 0). Time and the machine's counters are read at the start of the
// attempt whose processes the sample holds, so the processes are read right after Time
// (ScanSec later at most, for every process's CPU).
func (s *Sampler) Sample(req Request) (Sample, error) {
	scanAll := req.AllTasks || req.TreeOf != 0
	for attempt := 1; ; attempt++ {
		out, err := s.machine(req.Devices)
		if err != nil {
			return Sample{}, err
		}
		// One scan of every process serves as the "before" marks and as the tasks read;
		// afterwards only the processes that can have reaped a child in a way that breaks
		// the sum are read again (the runner samples every second and this is dbperf's
		// own CPU: two full scans cost ~3 ms per sample on the 2-core VM).
		var before map[int]reapMark
		var sc scanned
		if scanAll {
			if sc, err = s.scan(); err != nil {
				return Sample{}, err
			}
			out.ScanSec = s.now().Sub(out.Time).Seconds()
			before = marksOf(sc.tasks)
		} else {
			before = s.reaped(req.PIDs)
		}
		pids := req.PIDs
		if scanAll {
			if req.AllTasks {
				for _, t := range sc.tasks {
					out.TasksCPUSec += t.cpuSec()
					if t.kernel {
						out.KernelCPUSec += t.cpuSec()
					}
				}
				out.Tasks = len(sc.tasks)
				out.tasks = sc.tasks
			}
			if req.TreeOf != 0 {
				out.Tree = treeOf(sc.tasks, req.TreeOf)
				pids = append(slices.Clone(pids), out.Tree...)
			}
		}
		out.Procs = make(map[int]ProcSample, len(pids))
		for _, pid := range pids {
			if _, done := out.Procs[pid]; done {
				continue
			}
			ps, err := s.proc(pid, slices.Contains(req.ThreadsOf, pid))
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return Sample{}, err
			}
			out.Procs[pid] = ps
		}
		var after map[int]reapMark
		settled := true
		if scanAll {
			after, settled = s.afterScan(sc, pids)
		} else {
			after = s.reaped(req.PIDs)
		}
		if settled && !reapedBetween(before, after) {
			return out, nil
		}
		if attempt == reapAttempts {
			// The processes' sum may hold a child twice or not at all: unknown, not wrong.
			out.TasksCPUSec, out.Tasks, out.KernelCPUSec, out.tasks = 0, 0, 0, nil
			return out, nil
		}
	}
}

// machine reads the time, /proc/stat and the devices' counters.
func (s *Sampler) machine(devices []string) (Sample, error) {
	out := Sample{Time: s.now()}
	st, err := s.fs.Stat()
	if err != nil {
		return Sample{}, fmt.Errorf("hwstat: read %s/stat: %w", s.procRoot, err)
	}
	c := st.CPUTotal
	out.CPU = CPUTimes{
		UserSec: c.User, NiceSec: c.Nice, SystemSec: c.System, IdleSec: c.Idle,
		IOWaitSec: c.Iowait, IRQSec: c.IRQ, SoftIRQSec: c.SoftIRQ, StealSec: c.Steal,
	}
	out.CPUs = len(st.CPU)
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
	return out, nil
}

// reapMark is what changes in a process's stat when it waits for a child: the children's
// minor faults (every process has some) and CPU ticks; and the process's start time,
// which tells a reused pid apart.
type reapMark struct {
	start                uint64
	minFlt, uTime, sTime uint64
}

func markOf(st procfs.ProcStat) reapMark {
	return reapMark{start: st.Starttime, minFlt: uint64(st.CMinFlt),
		uTime: uint64(max(st.CUTime, 0)), sTime: uint64(max(st.CSTime, 0))}
}

// reapedBetween says whether a process present in both readings waited for a child in
// between. A process that appeared or exited meanwhile changes nothing by itself: its
// parent's counters tell whether it was waited for.
func reapedBetween(before, after map[int]reapMark) bool {
	for pid, b := range before {
		if a, ok := after[pid]; ok && a.start == b.start && a != b {
			return true
		}
	}
	return false
}

// reaped notes the waited-for-children counters of each of pids that exists.
func (s *Sampler) reaped(pids []int) map[int]reapMark {
	out := make(map[int]reapMark, len(pids))
	for _, pid := range pids {
		if st, err := s.stat(pid); err == nil {
			out[pid] = markOf(st)
		}
	}
	return out
}

// afterScan reads again, once sc and pids were read, what tells whether a process waited
// for a child meanwhile in a way that breaks the scan's sum or the reading of pids (a
// child waited for moves its whole life's CPU into its parent's waited-for-children
// counters):
//
//   - A process that vanished while the scan ran (listed, gone when its turn came) may
//     have been waited for by a parent read before it, and before it waited: then neither
//     holds the child's CPU. The marks of every process read before it are read again.
//   - A process read before its parent may have been waited for by that parent before the
//     parent was read: then both hold its CPU. It must still be there (alive or a zombie
//     nobody waited for yet).
//   - pids are read after the scan, whose marks of them come first: their marks are read
//     again.
//
// It returns the marks read again (for reapedBetween against the scan's) and false when
// a process read before its parent is gone. Every other wait leaves the sum right — a
// child waited for before both readings is its parent's alone, one waited for after both
// is its own — so the other processes are not read again.
func (s *Sampler) afterScan(sc scanned, pids []int) (map[int]reapMark, bool) {
	out := make(map[int]reapMark)
	buf := make([]byte, 1024)
	read := func(pid int) (task, bool) {
		t, ok := readTask(filepath.Join(s.procRoot, strconv.Itoa(pid), "stat"), buf)
		if ok {
			out[pid] = t.mark
		}
		return t, ok
	}
	for _, pid := range sc.order[:sc.beforeVanished] {
		read(pid)
	}
	pos := make(map[int]int, len(sc.order))
	for i, pid := range sc.order {
		pos[pid] = i
	}
	settled := true
	for i, pid := range sc.order {
		if j, ok := pos[sc.tasks[pid].ppid]; !ok || j < i {
			continue
		}
		if _, done := out[pid]; done {
			continue
		}
		if t, ok := read(pid); !ok || t.mark.start != sc.tasks[pid].mark.start {
			settled = false
		}
	}
	for _, pid := range pids {
		if _, done := out[pid]; !done && pid > 0 {
			read(pid)
		}
	}
	return out, settled
}

// task is one process as scan reads it.
type task struct {
	ppid int
	// own is the process's CPU ticks (utime+stime); its waited-for children's are in
	// mark (cutime, cstime).
	own uint64
	// kernel: a kernel thread (PF_KTHREAD).
	kernel bool
	mark   reapMark
}

// cpuSec is the process's CPU and its waited-for children's.
func (t task) cpuSec() float64 { return float64(t.own+t.children()) / userHZ }

// children is the CPU ticks of the process's waited-for children.
func (t task) children() uint64 { return t.mark.uTime + t.mark.sTime }

// scanned is one reading of every process.
type scanned struct {
	tasks map[int]task
	// order is tasks' pids in the order they were read.
	order []int
	// beforeVanished is how many of order were read before the last process that was
	// listed but gone when its turn came (0: none was, or none was read before).
	beforeVanished int
}

// scan reads the stat of every process /proc lists, by pid (the order /proc lists them
// in); processes that exit meanwhile, or whose stat is not readable, are left out. It runs
// once per sample (more when a reap is caught between readings) over every process of the
// machine, so it parses the few fields it needs itself.
func (s *Sampler) scan() (scanned, error) {
	f, err := os.Open(s.procRoot)
	if err != nil {
		return scanned{}, fmt.Errorf("hwstat: list %s: %w", s.procRoot, err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return scanned{}, fmt.Errorf("hwstat: list %s: %w", s.procRoot, err)
	}
	pids := make([]int, 0, len(names))
	for _, name := range names {
		if pid, err := strconv.Atoi(name); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	out := scanned{tasks: make(map[int]task, len(pids)), order: make([]int, 0, len(pids))}
	buf := make([]byte, 1024)
	for _, pid := range pids {
		if t, ok := readTask(filepath.Join(s.procRoot, strconv.Itoa(pid), "stat"), buf); ok {
			out.tasks[pid] = t
			out.order = append(out.order, pid)
		} else {
			out.beforeVanished = len(out.order)
		}
		if s.scanned != nil {
			s.scanned(pid)
		}
	}
	return out, nil
}

// pfKThread is the flag of a kernel thread in /proc/PID/stat's flags (include/linux/sched.h).
const pfKThread = 0x00200000

// readTask parses the fields of a /proc/PID/stat that scan needs: ppid (4), flags (9),
// cminflt (11), utime, stime, cutime, cstime (14–17) and starttime (22), counted from the
// first field as in proc(5); the command name (2) may hold spaces and parentheses, so
// fields are counted after its last ")".
func readTask(path string, buf []byte) (task, bool) {
	f, err := os.Open(path)
	if err != nil {
		return task{}, false
	}
	n, err := io.ReadFull(f, buf)
	f.Close()
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return task{}, false
	}
	b := buf[:n]
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return task{}, false
	}
	var v [23]uint64 // by field number, 1-based as in proc(5)
	n = 3
	for _, w := range bytes.Fields(b[i+2:]) {
		if n >= len(v) {
			break
		}
		switch n {
		case 4, 9, 11, 14, 15, 16, 17, 22: // others may be letters or negative
			x, err := strconv.ParseUint(string(w), 10, 64)
			if err != nil {
				return task{}, false
			}
			v[n] = x
		}
		n++
	}
	if n < len(v) {
		return task{}, false
	}
	at := func(n int) uint64 { return v[n] }
	return task{
		ppid:   int(at(4)),
		own:    at(14) + at(15),
		kernel: at(9)&pfKThread != 0,
		mark:   reapMark{start: at(22), minFlt: at(11), uTime: at(16), sTime: at(17)},
	}, true
}

func marksOf(tasks map[int]task) map[int]reapMark {
	out := make(map[int]reapMark, len(tasks))
	for pid, t := range tasks {
		out[pid] = t.mark
	}
	return out
}

// treeOf is root and its descendants in tasks, sorted; nil when root is not there.
func treeOf(tasks map[int]task, root int) []int {
	if _, ok := tasks[root]; !ok {
		return nil
	}
	children := map[int][]int{}
	for pid, t := range tasks {
		children[t.ppid] = append(children[t.ppid], pid)
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	sort.Ints(out)
	return out
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
func (s *Sampler) proc(pid int, threads bool) (ProcSample, error) {
	p, err := s.fs.Proc(pid)
	if err != nil {
		return ProcSample{}, fmt.Errorf("hwstat: process %d: %w", pid, err)
	}
	st, err := p.Stat()
	if err != nil {
		return ProcSample{}, fmt.Errorf("hwstat: read %s/%d/stat: %w", s.procRoot, pid, err)
	}
	ps := ProcSample{
		PID:            pid,
		PPID:           st.PPID,
		Comm:           st.Comm,
		StartTicks:     st.Starttime,
		CPUSec:         st.CPUTime(),
		ChildrenCPUSec: float64(st.CUTime+st.CSTime) / userHZ,
		RSSBytes:       uint64(max(st.ResidentMemory(), 0)),
	}
	status, err := p.NewStatus()
	if err != nil {
		return ProcSample{}, fmt.Errorf("hwstat: read %s/%d/status: %w", s.procRoot, pid, err)
	}
	ps.RSSAnonBytes, ps.RSSFileBytes, ps.RSSShmemBytes = status.RssAnon, status.RssFile, status.RssShmem
	if pio, err := p.IO(); err == nil {
		ps.IOKnown, ps.ReadBytes, ps.WriteBytes = true, pio.ReadBytes, pio.WriteBytes
		ps.CancelledWriteBytes = uint64(max(pio.CancelledWriteBytes, 0))
	}
	if threads {
		if ps.ThreadCPUSec, err = s.threadCPU(pid); err != nil {
			return ProcSample{}, err
		}
	}
	return ps, nil
}

// ProcessCPU reads one process's CPU seconds (utime+stime, its own, as ProcSample.CPUSec)
// and its start time, which tells a reused pid apart.
func (s *Sampler) ProcessCPU(pid int) (cpuSec float64, startTicks uint64, err error) {
	st, err := s.stat(pid)
	if err != nil {
		return 0, 0, err
	}
	return st.CPUTime(), st.Starttime, nil
}

// ThreadCPU reads the CPU seconds of thread tid of process pid, as ProcSample.ThreadCPUSec
// does for every thread.
func (s *Sampler) ThreadCPU(pid, tid int) (float64, error) {
	t, err := s.fs.Thread(pid, tid)
	if err != nil {
		return 0, fmt.Errorf("hwstat: thread %d of %d: %w", tid, pid, err)
	}
	if ss, err := t.Schedstat(); err == nil {
		return float64(ss.RunningNanoseconds) / 1e9, nil
	}
	st, err := t.Stat()
	if err != nil {
		return 0, fmt.Errorf("hwstat: read %s/%d/task/%d/stat: %w", s.procRoot, pid, tid, err)
	}
	return st.CPUTime(), nil
}

// DescendsFrom says whether pid is root or one of its descendants, through the ppid
// fields of /proc/PID/stat.
func (s *Sampler) DescendsFrom(pid, root int) (bool, error) {
	for range 64 {
		if pid == root {
			return true, nil
		}
		if pid <= 1 {
			return false, nil
		}
		st, err := s.stat(pid)
		if err != nil {
			return false, err
		}
		pid = st.PPID
	}
	return false, nil
}

// threadCPU reads the CPU time of every thread of pid: from /proc/PID/task/TID/schedstat
// (nanoseconds on the CPU) where the kernel has it, else utime+stime of the thread's stat
// (10 ms ticks). Nanoseconds matter: a thread's tick count is truncated on its own, so
// the ticks of a few busy threads can add up to more than their process's.
func (s *Sampler) threadCPU(pid int) (map[int]float64, error) {
	ts, err := s.fs.AllThreads(pid)
	if err != nil {
		return nil, fmt.Errorf("hwstat: list threads of %d: %w", pid, err)
	}
	out := make(map[int]float64, len(ts))
	for _, t := range ts {
		if ss, err := t.Schedstat(); err == nil {
			out[t.PID] = float64(ss.RunningNanoseconds) / 1e9
			continue
		}
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
	sc, err := s.scan()
	if err != nil {
		return nil, err
	}
	tree := treeOf(sc.tasks, root)
	if tree == nil {
		return nil, fmt.Errorf("hwstat: process %d: %w", root, os.ErrNotExist)
	}
	return tree, nil
}

// Tgid is the process (thread group) that thread id belongs to, from /proc/ID/status; for a
// process's main thread it is id itself. /proc/TID is readable for any thread even though
// /proc lists only processes.
func (s *Sampler) Tgid(id int) (int, error) {
	p, err := s.fs.Proc(id)
	if err != nil {
		return 0, fmt.Errorf("hwstat: thread %d: %w", id, err)
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0, fmt.Errorf("hwstat: read %s/%d/status: %w", s.procRoot, id, err)
	}
	return int(st.TGID), nil
}

// ServerRoot finds the main process of the server whose process or thread id serves a
// connection: the thread's process, then up through parents of the same command name (a
// PostgreSQL backend's parent is the postmaster; mariadbd serves connections in its own
// threads). It is how dbperf finds a server it did not start but that runs on this machine.
func (s *Sampler) ServerRoot(id int) (int, error) {
	pid, err := s.Tgid(id)
	if err != nil {
		return 0, err
	}
	st, err := s.stat(pid)
	if err != nil {
		return 0, err
	}
	for range 64 {
		if st.PPID <= 1 {
			break
		}
		parent, err := s.stat(st.PPID)
		if err != nil || parent.Comm != st.Comm {
			break
		}
		pid, st = st.PPID, parent
	}
	return pid, nil
}

func (s *Sampler) stat(pid int) (procfs.ProcStat, error) {
	p, err := s.fs.Proc(pid)
	if err != nil {
		return procfs.ProcStat{}, fmt.Errorf("hwstat: process %d: %w", pid, err)
	}
	st, err := p.Stat()
	if err != nil {
		return procfs.ProcStat{}, fmt.Errorf("hwstat: read %s/%d/stat: %w", s.procRoot, pid, err)
	}
	return st, nil
}

// ServerMemoryBytes estimates the resident memory of a server made of several processes
// without counting shared memory once per process (the reference's ps-based figure is
// wrong for PostgreSQL, spec §1.12 item 4): the sum of every process's private anonymous
// memory, plus the largest shared-memory and the largest file-backed resident size of any
// one process (PostgreSQL's shared buffers and its binary are mapped by every backend).
// For a single process it is its RSS.
func ServerMemoryBytes(procs map[int]ProcSample) uint64 {
	var anon, shmem, file uint64
	for _, p := range procs {
		anon += p.RSSAnonBytes
		shmem = max(shmem, p.RSSShmemBytes)
		file = max(file, p.RSSFileBytes)
	}
	return anon + shmem + file
}
