package runner

import (
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbperf/dbperf/internal/metrics"
)

// Pin runs a step's workers on CPUs of their own while another runner's step runs at the
// same time on other CPUs (the duet design: dbperf sweep --design duet). Every worker's
// goroutine is locked to its OS thread, that thread's affinity set to CPUs for the step
// and restored after it; the step's client CPU is then its worker threads' own
// (getrusage(RUSAGE_THREAD)), not the process's, which the other step shares; and its
// machine-wide figures, which describe both steps, are marked shared (metrics.HW.Shared)
// and yield no per-op metric.
type Pin struct {
	CPUs unix.CPUSet
	// Procs is shared by the runners whose steps run at once.
	Procs *Procs
}

// Procs is GOMAXPROCS for runners whose steps run at the same time: each adds its workers
// for the length of its step (raiseProcs's rule over all of them: every worker may be in
// a system call at once, one P to spare), and the default is restored when the last one
// ends. One runner alone never needs it.
type Procs struct {
	mu      sync.Mutex
	workers int
	raised  bool
}

// add counts n more workers, raising GOMAXPROCS to cover them.
func (p *Procs) add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.workers += n
	if want := p.workers + 1; want > runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(want)
		p.raised = true
	}
}

// done counts n workers fewer; the last restores the default GOMAXPROCS.
func (p *Procs) done(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.workers -= n
	if p.workers <= 0 && p.raised {
		runtime.SetDefaultGOMAXPROCS()
		p.raised = false
	}
}

// pinned is one worker's thread while it runs pinned: its affinity before, and its CPU
// time when pinned.
type pinned struct {
	before unix.CPUSet
	cpu    time.Duration
	ok     bool
	tid    int // the thread's id
}

// pinThread locks the calling goroutine to its thread and sets the thread's affinity to
// cpus; unpin restores both. ok is false when the affinity could not be set (the worker
// then runs unpinned, and its client CPU is unknown).
func pinThread(cpus *unix.CPUSet) pinned {
	runtime.LockOSThread()
	p := pinned{tid: unix.Gettid()}
	if err := unix.SchedGetaffinity(0, &p.before); err != nil {
		return p
	}
	if err := unix.SchedSetaffinity(0, cpus); err != nil {
		return p
	}
	p.cpu, p.ok = threadCPU(), true
	return p
}

// unpin restores the thread's affinity, unlocks it and returns the CPU the thread used
// since pinThread.
func (p pinned) unpin() time.Duration {
	var used time.Duration
	if p.ok {
		used = threadCPU() - p.cpu
		_ = unix.SchedSetaffinity(0, &p.before)
	}
	runtime.UnlockOSThread()
	return used
}

// threadCPU is the calling thread's user and system CPU time.
func threadCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pinnedCPU makes a pinned step's client CPU its worker threads' own and marks its
// machine-wide figures shared. A worker whose thread could not be pinned leaves the
// process's CPU in place, with a note.
func pinnedCPU(res *metrics.StepResult, ws []*worker) {
	if res.HW != nil {
		res.HW.Shared = true
	}
	var sum time.Duration
	for _, w := range ws {
		if !w.pinOK {
			res.Note = joinNote(res.Note, "duet: a worker's thread could not be pinned; client CPU is the whole process's, shared with the other point")
			return
		}
		sum += w.threadCPU
	}
	res.ClientCPUSec = sum.Seconds()
	if res.HW != nil {
		res.HW.Client.CPUSec = sum.Seconds()
	}
	for i := range res.ConnCPU {
		if res.ConnCPU[i].Role == metrics.ConnCPUClientProcess {
			res.ConnCPU[i].CPUSec = sum.Seconds()
		}
	}
}
