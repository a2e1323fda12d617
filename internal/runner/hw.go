package runner

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/metrics"
)

// HWTargets says what the runner samples from /proc on every tick besides dbperf itself.
type HWTargets struct {
	// ServerPID is the server's main process (postmaster, mariadbd); it and all its
	// descendants, found again at every sample, are "the server". 0 when dbperf cannot see
	// the server's processes.
	ServerPID int
	// Embedded: the engine runs inside dbperf (its CPU and memory are the client's).
	Embedded bool
	// Remote: the server runs on another machine (see metrics.HW.Remote).
	Remote bool
	// Devices are the whole-disk block devices of the data directory (hwstat.Devices);
	// none: device IO is not sampled.
	Devices []string
}

// probe samples one step: a baseline when the clock starts, then one sample per tick;
// every interval gets the difference to the previous sample, the step their sum. It runs
// on the controller goroutine only.
type probe struct {
	s       *hwstat.Sampler
	t       HWTargets
	self    int
	conns   []conn
	threads []int // server processes whose threads serve sessions (mariadbd)
	// others are processes of other cluster nodes read for the sessions they serve
	// (Runner.Spread: a standby's backend, another Galera node's mariadbd): sampled with
	// the server, never counted as it (the server is node 0's tree).
	others map[int]bool
	// first and prev are written before the workers start and after they stop, and only
	// read while they run.
	first, prev hwstat.Sample
	step        metrics.HW
	serverSeen  map[int]bool
	err         error

	// mu guards what workers' operations report through engine.ConnObserver (watch).
	mu sync.Mutex
	// watched are the connections engines opened on their own for an operation.
	watched []*watchedConn
	// connNote says why some sessions' CPU is not measured.
	connNote string
}

// conn is a session whose server-side CPU is measured: a process (a PostgreSQL backend)
// or a thread of process tgid (a MariaDB connection thread).
type conn struct {
	role   string
	id     int
	thread bool
	tgid   int
}

// newProbe prepares sampling for a step whose workers have their sessions open. It
// returns nil when the runner has no sampler.
func (r *Runner) newProbe(ws []*worker) *probe {
	if r.Sampler == nil {
		return nil
	}
	p := &probe{s: r.Sampler, t: r.HW, self: os.Getpid(), serverSeen: map[int]bool{}}
	p.step.Devices = slices.Clone(r.HW.Devices)
	p.step.Embedded, p.step.Remote = r.HW.Embedded, r.HW.Remote
	p.step.Client.Known, p.step.Client.Processes = true, 1
	p.step.Server.Known = r.HW.ServerPID != 0
	if r.HW.ServerPID == 0 {
		return p
	}
	pi, ok := r.Handle.(engine.ProcessInfo)
	if !ok {
		p.connNote = "the engine cannot name the server process of a session"
		return p
	}
	tree, err := p.s.ProcessTree(r.HW.ServerPID)
	if err != nil {
		p.connNote = err.Error()
		return p
	}
	// Each node's process tree (Runner.Spread), node 0's the server's.
	trees := map[int][]int{r.HW.ServerPID: tree}
	for _, w := range ws {
		srv, wpi := r.nodePID(w), pi
		if w.node != 0 {
			wpi, _ = r.nodeHandle(w).(engine.ProcessInfo)
			if _, ok := trees[srv]; !ok && srv != 0 {
				if trees[srv], err = p.s.ProcessTree(srv); err != nil {
					p.connNote = fmt.Sprintf("node %d: %v", w.node, err)
					continue
				}
			}
		}
		if wpi == nil || srv == 0 {
			p.connNote = fmt.Sprintf("the server process of node %d is unknown", w.node)
			continue
		}
		id, err := wpi.SessionPID(w.s)
		if err != nil {
			p.connNote = err.Error()
			continue
		}
		c := conn{role: w.group.Role, id: id}
		if tree := trees[srv]; !slices.Contains(tree, id) {
			tgid, err := p.s.Tgid(id)
			if err != nil || !slices.Contains(tree, tgid) {
				p.connNote = fmt.Sprintf("session %d of %s is not served by server process %d", id, w.group.Label, srv)
				continue
			}
			c.thread, c.tgid = true, tgid
			if !slices.Contains(p.threads, tgid) {
				p.threads = append(p.threads, tgid)
			}
		}
		if srv != r.HW.ServerPID {
			if p.others == nil {
				p.others = map[int]bool{}
			}
			p.others[c.process()] = true
		}
		p.conns = append(p.conns, c)
	}
	return p
}

// process is the process whose sample holds the conn's CPU: its own, or its thread's.
func (c conn) process() int {
	if c.thread {
		return c.tgid
	}
	return c.id
}

// server says whether pid is one of the server's processes in a sample: neither dbperf
// nor another node's process read for its sessions.
func (p *probe) server(pid int) bool {
	return pid != p.self && !p.others[pid]
}

// sample reads the machine (every process's CPU too), the server's current process tree
// and dbperf. serverOK is false when the server's main process is gone (a server that
// died fails its step; its CPU is then unknown).
func (p *probe) sample() (smp hwstat.Sample, serverOK bool, err error) {
	pids := []int{p.self}
	for pid := range p.others {
		pids = append(pids, pid)
	}
	smp, err = p.s.Sample(hwstat.Request{PIDs: pids, TreeOf: p.t.ServerPID, ThreadsOf: p.threads,
		Devices: p.t.Devices, AllTasks: true})
	return smp, p.t.ServerPID != 0 && smp.Tree != nil, err
}

// start takes the step's baseline sample.
func (p *probe) start() {
	if p == nil {
		return
	}
	smp, ok, err := p.sample()
	if err != nil {
		p.err = err
		return
	}
	if !ok {
		p.step.Server.Known = false
	}
	p.first, p.prev = smp, smp
	p.step.Server.PeakMemBytes = p.serverMem(smp)
	p.step.Client.PeakMemBytes = smp.Procs[p.self].RSSBytes
	p.step.Client.IOKnown, p.step.Server.IOKnown = true, p.step.Server.Known
}

// tick samples, fills iv's client CPU and HW with the difference to the previous sample
// and adds it to the step's totals.
func (p *probe) tick(iv *metrics.Interval) {
	if p == nil || p.err != nil {
		return
	}
	cur, serverOK, err := p.sample()
	if err == nil && !cur.Time.After(p.prev.Time) {
		return // no time passed (a tick right at the end): nothing to report
	}
	var d hwstat.Interval
	if err == nil {
		d, err = hwstat.Delta(p.prev, cur)
	}
	if err != nil {
		p.err = err
		return
	}
	hw := metrics.HW{
		CPU: d.CPU, ContextSwitches: d.ContextSwitches, Devices: d.Devices,
		ReadOps: d.ReadOps, ReadBytes: d.ReadBytes, WriteOps: d.WriteOps, WriteBytes: d.WriteBytes,
		Embedded: p.t.Embedded, Remote: p.t.Remote,
	}
	hw.Client = procHW(d.Procs[p.self])
	if p.t.ServerPID != 0 && serverOK {
		// The server's processes as a group: a backend that exited since the previous
		// sample has its CPU and IO in the postmaster's waited-for-children counters.
		g := hwstat.GroupDelta(p.prev, cur, p.server)
		hw.Server = metrics.ProcHW{Known: true, Processes: g.Processes, CPUSec: g.CPUSec,
			PeakMemBytes: max(p.serverMem(p.prev), p.serverMem(cur)),
			IOKnown:      g.IOKnown, ReadBytes: g.ReadBytes, WriteBytes: g.WriteBytes}
		for pid := range d.Procs {
			if p.server(pid) {
				p.serverSeen[pid] = true
			}
		}
	}
	iv.HW = &hw
	iv.ClientCPUSec = hw.Client.CPUSec
	p.add(hw)
	p.prev = cur
}

func procHW(pd hwstat.ProcDelta) metrics.ProcHW {
	return metrics.ProcHW{Known: true, Processes: 1, CPUSec: pd.CPUSec, PeakMemBytes: pd.PeakRSSBytes,
		IOKnown: pd.IOKnown, ReadBytes: pd.ReadBytes, WriteBytes: pd.WriteBytes}
}

// serverMem is the server's resident memory in a sample (every process but dbperf).
func (p *probe) serverMem(smp hwstat.Sample) uint64 {
	procs := make(map[int]hwstat.ProcSample, len(smp.Procs))
	for pid, ps := range smp.Procs {
		if p.server(pid) {
			procs[pid] = ps
		}
	}
	return hwstat.ServerMemoryBytes(procs)
}

func (p *probe) add(hw metrics.HW) {
	s := &p.step
	s.CPU = s.CPU.Add(hw.CPU)
	s.ContextSwitches += hw.ContextSwitches
	s.ReadOps += hw.ReadOps
	s.ReadBytes += hw.ReadBytes
	s.WriteOps += hw.WriteOps
	s.WriteBytes += hw.WriteBytes
	addProc(&s.Client, hw.Client)
	if !hw.Server.Known {
		s.Server.Known = false
	}
	if s.Server.Known {
		addProc(&s.Server, hw.Server)
		s.Server.Processes = len(p.serverSeen)
	}
}

func addProc(s *metrics.ProcHW, d metrics.ProcHW) {
	s.CPUSec += d.CPUSec
	s.PeakMemBytes = max(s.PeakMemBytes, d.PeakMemBytes)
	s.IOKnown = s.IOKnown && d.IOKnown
	s.ReadBytes += d.ReadBytes
	s.WriteBytes += d.WriteBytes
}

// finish puts the step's HW, client CPU and per-connection CPU into res.
func (p *probe) finish(res *metrics.StepResult, sessions int) {
	if p == nil {
		return
	}
	if p.err != nil {
		res.Note = joinNote(res.Note, "hw sampling stopped: "+p.err.Error())
		return
	}
	hw := p.step
	hw.CPU = wholeTasks(hw.CPU, p.first, p.prev)
	if !hw.Server.Known {
		hw.Server = metrics.ProcHW{}
	}
	res.HW = &hw
	res.ClientCPUSec = hw.Client.CPUSec
	switch {
	case p.t.Embedded:
		res.ConnCPU = []metrics.ConnCPU{{Role: metrics.ConnCPUClientProcess, Sessions: sessions, CPUSec: hw.Client.CPUSec}}
	case hw.Server.Known:
		res.ConnCPU = p.connCPU()
		p.mu.Lock()
		if p.connNote != "" {
			res.Note = joinNote(res.Note, "per-connection CPU incomplete: "+p.connNote)
		}
		p.mu.Unlock()
	}
	if why := machineBelowProcesses(hw); why != "" {
		res.Note = joinNote(res.Note, why)
	}
	if why := machineAboveCapacity(hw); why != "" {
		res.Note = joinNote(res.Note, why)
	}
}

// wholeTasks sets the step's every-process and kernel-thread CPU (CPUTimes.TasksSec,
// KernelTasksSec) and the bound of its reading's error (TasksSlackSec) to its first and
// last samples' (hwstat.TasksDelta) instead of the sum of its intervals'. An interval of
// a few milliseconds (the last one, when a tick was handled just before the step's end)
// can see no process's CPU move by a 10 ms unit, and its 0 reads as unknown, which made
// the whole step's unknown; and the bound of a sum of intervals would add each interval's
// 10 ms units, where the first and last samples' difference has one per process.
func wholeTasks(c hwstat.CPUTimes, first, last hwstat.Sample) hwstat.CPUTimes {
	if t, ok := hwstat.TasksDelta(first, last); ok {
		c.TasksSec, c.KernelTasksSec, c.TasksSlackSec = t.TasksSec, t.KernelTasksSec, t.TasksSlackSec
	}
	return c
}

// machineAboveCapacity says why the machine's processes' CPU is left out of the noise
// figures (metrics.MetricOtherCPUPct): it is above the CPUs' time by more than its 10 ms
// units and the reading's lag can make it (CPUTimes.TasksSlackSec), which the processes
// cannot have used; "" when it is not.
func machineAboveCapacity(hw metrics.HW) string {
	c := hw.CPU
	if hw.Remote || c.TasksSec <= 0 || c.ElapsedSec <= 0 || c.TasksSec <= c.ElapsedSec+c.TasksSlackSec {
		return ""
	}
	return fmt.Sprintf("every process's CPU %.2fs is above the CPUs' %.2fs by more than its reading's error (%.2fs): a sample missed or double-counted a process; %s left out",
		c.TasksSec, c.ElapsedSec, c.TasksSlackSec, metrics.MetricOtherCPUPct)
}

// machineBelowProcesses says why the machine's busy CPU is below the CPU of the processes
// it ran (dbperf's and the server's), or "" when it is not. Every process's utime+stime
// is read in 10 ms units, and the machine's processes a moment before dbperf and the
// server.
func machineBelowProcesses(hw metrics.HW) string {
	if hw.Remote {
		return ""
	}
	procs := hw.Client.CPUSec
	n := 1
	if hw.Server.Known {
		procs += hw.Server.CPUSec
		n += hw.Server.Processes
	}
	busy := hw.CPU.BusySec()
	if busy+0.03+0.01*float64(n) >= procs {
		return ""
	}
	why := "processes that exited without their parent waiting for them took their CPU along"
	if hw.CPU.TasksSec <= 0 {
		why = "the machine's processes could not be read, so busy time is /proc/stat's timer ticks, which miss work shorter than a tick"
	}
	return fmt.Sprintf("machine busy CPU %.2fs is below dbperf's and the server's %.2fs: %s", busy, procs, why)
}

// connCPU is each role's sessions' CPU between the first and the last sample, and the CPU
// of the connections engines opened on their own for the role's operations (watch). A
// session whose process or thread is missing from either sample (its connection died) is
// left out.
func (p *probe) connCPU() []metrics.ConnCPU {
	var out []metrics.ConnCPU
	idx := map[string]int{}
	add := func(role string, sec float64) {
		i, ok := idx[role]
		if !ok {
			i = len(out)
			idx[role] = i
			out = append(out, metrics.ConnCPU{Role: role})
		}
		out[i].Sessions++
		out[i].CPUSec += max(sec, 0)
	}
	for _, c := range p.conns {
		a, okA := connSec(p.first, c)
		b, okB := connSec(p.prev, c)
		if okA && okB {
			add(c.role, b-a)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.watched {
		last, ok := w.last, w.closed
		if !ok {
			last, ok = connSec(p.prev, w.conn)
		}
		if ok {
			add(w.role, last-w.base)
		}
	}
	return out
}

// watchedConn is a connection an engine opened on its own for a worker's operation.
type watchedConn struct {
	conn
	start      uint64  // a process's start time, which tells a reused pid apart
	base, last float64 // its CPU seconds when opened (0 if born in the step), and when closing
	closed     bool
}

// watch is the engine.ConnObserver of one worker's operations: the connections an engine
// opens for them count in the worker's role. It is called on the worker's goroutine.
type watch struct {
	p    *probe
	role string
}

var _ engine.ConnObserver = watch{}

// opContext is the context a worker's operations run under: ctx with the worker's
// engine.ConnObserver when the server's processes are sampled.
func (p *probe) opContext(ctx context.Context, w *worker) context.Context {
	if p == nil || p.t.ServerPID == 0 {
		return ctx
	}
	return engine.WithConnObserver(ctx, watch{p: p, role: w.group.Role})
}

// ConnOpened finds the server process or thread id and reads its CPU now; a backend that
// started within the step counts from 0.
func (w watch) ConnOpened(id int) {
	p := w.p
	wc := &watchedConn{conn: conn{role: w.role, id: id}}
	err := func() error {
		tgid, err := p.s.Tgid(id)
		if err != nil {
			return err
		}
		if ok, err := p.s.DescendsFrom(tgid, p.t.ServerPID); err != nil || !ok {
			return fmt.Errorf("connection %d of %s is not served by server process %d", id, w.role, p.t.ServerPID)
		}
		if tgid != id {
			wc.thread, wc.tgid = true, tgid
			wc.base, err = p.s.ThreadCPU(tgid, id)
			return err
		}
		wc.base, wc.start, err = p.s.ProcessCPU(id)
		if was, ok := p.first.Procs[id]; !ok || was.StartTicks != wc.start {
			wc.base = 0
		}
		return err
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.connNote = err.Error()
		return
	}
	p.watched = append(p.watched, wc)
}

// ConnClosing reads the connection's CPU a last time.
func (w watch) ConnClosing(id int) {
	p := w.p
	p.mu.Lock()
	var wc *watchedConn
	for _, c := range p.watched {
		if c.id == id && c.role == w.role && !c.closed {
			wc = c
		}
	}
	p.mu.Unlock()
	if wc == nil {
		return
	}
	var sec float64
	var err error
	if wc.thread {
		sec, err = p.s.ThreadCPU(wc.tgid, id)
	} else {
		var start uint64
		sec, start, err = p.s.ProcessCPU(id)
		if err == nil && start != wc.start {
			err = fmt.Errorf("connection %d of %s: its process exited before it closed", id, w.role)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.connNote = err.Error()
		return
	}
	wc.last, wc.closed = sec, true
}

func connSec(smp hwstat.Sample, c conn) (float64, bool) {
	if !c.thread {
		ps, ok := smp.Procs[c.id]
		return ps.CPUSec, ok
	}
	ps, ok := smp.Procs[c.tgid]
	if !ok {
		return 0, false
	}
	sec, ok := ps.ThreadCPUSec[c.id]
	return sec, ok
}

// dbSize reads the database size at the end of a step (untimed).
func (r *Runner) dbSize(ctx context.Context, res *metrics.StepResult) {
	n, err := r.Handle.Size(ctx)
	if err != nil {
		res.Note = joinNote(res.Note, "database size unknown: "+err.Error())
		return
	}
	res.DBSizeBytes, res.DBSizeKnown = n, true
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
