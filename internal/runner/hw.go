package runner

import (
	"context"
	"fmt"
	"os"
	"slices"

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
	// connNote says why some sessions' CPU is not measured.
	connNote    string
	first, prev hwstat.Sample
	step        metrics.HW
	serverSeen  map[int]bool
	err         error
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
	p.step.Client.Known = true
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
	for _, w := range ws {
		id, err := pi.SessionPID(w.s)
		if err != nil {
			p.connNote = err.Error()
			continue
		}
		c := conn{role: w.group.Role, id: id}
		if !slices.Contains(tree, id) {
			tgid, err := p.s.Tgid(id)
			if err != nil || !slices.Contains(tree, tgid) {
				p.connNote = fmt.Sprintf("session %d of %s is not served by server process %d", id, w.group.Label, r.HW.ServerPID)
				continue
			}
			c.thread, c.tgid = true, tgid
			if !slices.Contains(p.threads, tgid) {
				p.threads = append(p.threads, tgid)
			}
		}
		p.conns = append(p.conns, c)
	}
	return p
}

// sample reads the machine, the server's current process tree and dbperf.
func (p *probe) sample() (hwstat.Sample, bool, error) {
	pids := []int{p.self}
	serverOK := false
	if p.t.ServerPID != 0 {
		tree, err := p.s.ProcessTree(p.t.ServerPID)
		if err == nil { // a server that died fails its step; its CPU is then unknown
			pids = append(pids, tree...)
			serverOK = true
		}
	}
	smp, err := p.s.Sample(hwstat.Request{PIDs: pids, ThreadsOf: p.threads, Devices: p.t.Devices})
	return smp, serverOK, err
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
		hw.Server = metrics.ProcHW{Known: true, IOKnown: true,
			PeakMemBytes: max(p.serverMem(p.prev), p.serverMem(cur))}
		for pid, pd := range d.Procs {
			if pid == p.self {
				continue
			}
			p.serverSeen[pid] = true
			hw.Server.Processes++
			// A threaded server (mariadbd) whose connection threads are sampled in
			// nanoseconds: its threads' sum is the more precise lower bound of its CPU,
			// and keeps the connections' CPU within the server's total.
			hw.Server.CPUSec += max(pd.CPUSec, pd.ThreadsCPUSec)
			hw.Server.IOKnown = hw.Server.IOKnown && pd.IOKnown
			hw.Server.ReadBytes += pd.ReadBytes
			hw.Server.WriteBytes += pd.WriteBytes
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
		if pid != p.self {
			procs[pid] = ps
		}
	}
	return hwstat.ServerMemoryBytes(procs)
}

func (p *probe) add(hw metrics.HW) {
	s := &p.step
	s.CPU.UserSec += hw.CPU.UserSec
	s.CPU.NiceSec += hw.CPU.NiceSec
	s.CPU.SystemSec += hw.CPU.SystemSec
	s.CPU.IdleSec += hw.CPU.IdleSec
	s.CPU.IOWaitSec += hw.CPU.IOWaitSec
	s.CPU.IRQSec += hw.CPU.IRQSec
	s.CPU.SoftIRQSec += hw.CPU.SoftIRQSec
	s.CPU.StealSec += hw.CPU.StealSec
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
		if p.connNote != "" {
			res.Note = joinNote(res.Note, "per-connection CPU incomplete: "+p.connNote)
		}
	}
}

// connCPU is each role's sessions' CPU between the first and the last sample. A session
// whose process or thread is missing from either sample (its connection died) is left out.
func (p *probe) connCPU() []metrics.ConnCPU {
	var out []metrics.ConnCPU
	idx := map[string]int{}
	for _, c := range p.conns {
		a, okA := connSec(p.first, c)
		b, okB := connSec(p.prev, c)
		if !okA || !okB {
			continue
		}
		i, ok := idx[c.role]
		if !ok {
			i = len(out)
			idx[c.role] = i
			out = append(out, metrics.ConnCPU{Role: c.role})
		}
		out[i].Sessions++
		out[i].CPUSec += max(b-a, 0)
	}
	return out
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
