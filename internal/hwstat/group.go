package hwstat

// GroupInterval is what a group of processes (a server's process tree) did between two
// samples, the processes that exited in between included.
type GroupInterval struct {
	// Processes is how many of the group's processes either sample holds.
	Processes int
	// CPUSec is the group's CPU time in the interval (never below 0).
	CPUSec float64
	// IOKnown: /proc/PID/io was readable for every process of both samples; otherwise
	// the IO bytes are absent.
	IOKnown   bool
	ReadBytes uint64
	// WriteBytes is net of cancelled writes (ProcSample.NetWriteBytes).
	WriteBytes uint64
}

// GroupDelta is what the processes for which member(pid) holds did between prev and cur.
//
// A process that exits is not lost: its parent's waited-for-children counters
// (ProcSample.ChildrenCPUSec, and the kernel's adding the child's IO into the parent's
// /proc/PID/io) take over its whole life's CPU and IO when the parent waits for it. So
// the group's counters at a sample are the sum, over the processes present, of their CPU
// and their children's, and of their IO (which holds their children's); the interval's
// figures are the difference of those sums. A child's CPU and IO are counted once however
// its life falls across samples — alive in prev and gone in cur, born and gone within the
// interval — provided its parent is a member too (a PostgreSQL backend and its postmaster;
// Sample reads consistent counters). Summing each process's own difference instead would
// lose an exiting process's last CPU and count its IO twice.
//
// A process whose threads were read in both samples (mariadbd) counts the larger of its
// own CPU difference and its threads' (nanoseconds, never truncated to 10 ms ticks), so a
// server's CPU is never below the CPU of the connections it serves.
func GroupDelta(prev, cur Sample, member func(pid int) bool) GroupInterval {
	g := GroupInterval{IOKnown: true}
	var cpu float64
	var read, write int64
	seen := map[int]bool{}
	for pid, c := range cur.Procs {
		if !member(pid) {
			continue
		}
		seen[pid] = true
		cpu += c.TotalCPUSec()
		g.IOKnown = g.IOKnown && c.IOKnown
		read += int64(c.ReadBytes)
		write += int64(c.NetWriteBytes())
		if p, ok := prev.Procs[pid]; ok && p.StartTicks == c.StartTicks && p.ThreadCPUSec != nil && c.ThreadCPUSec != nil {
			var threads float64
			for tid, sec := range c.ThreadCPUSec {
				if was, ok := p.ThreadCPUSec[tid]; ok {
					threads += subF(sec, was)
				}
			}
			cpu += max(threads-subF(c.CPUSec, p.CPUSec), 0)
		}
	}
	for pid, p := range prev.Procs {
		if !member(pid) {
			continue
		}
		seen[pid] = true
		cpu -= p.TotalCPUSec()
		g.IOKnown = g.IOKnown && p.IOKnown
		read -= int64(p.ReadBytes)
		write -= int64(p.NetWriteBytes())
	}
	g.Processes = len(seen)
	g.CPUSec = max(cpu, 0)
	if g.IOKnown {
		g.ReadBytes, g.WriteBytes = uint64(max(read, 0)), uint64(max(write, 0))
	}
	return g
}
