package probe

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/profile"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/store"
)

// RoleClient is the role of dbperf's own process in a CPU profile (an embedded engine's
// work included: goroutines move between threads, so its threads name no role).
const RoleClient = "client"

// RoleServer is the role of the server's samples when the workers' sessions could not be
// told apart (MariaDB without performance_schema): its threads that no title or thread
// name tells apart, the workers' connections among them, so not "background".
const RoleServer = "server"

// CPUProfiler is the runner.Profiler of `dbperf run --cpu-profile DIR` for one target: one system-wide
// perf recording for the run (internal/profile), launched before the server starts
// (Launch) and sampling from then on, folded once after the last step (CPU.Fold):
// each step's load (its window, by time) per role into DIR/run-<id>/<step>.<role>.folded
// and into the results store with the step: a worker's session's server process or thread by the
// worker's role, the server's other processes and threads as background:<name> (a
// PostgreSQL process by its title, a MariaDB thread by its engine.ThreadNamer name), and
// dbperf as client. When the workers' sessions are unknown (SessionPID failed) the
// server's otherwise unnamed samples are the role server, and the step's note says why
// once.
//
// Why one recording, folded at the end: perf's launch (about 0.1 s of CPU reading every
// process's mappings), its exit and `perf script` (about a second per fold) between
// steps changed the next step by 2–4% on the tiny scale's half-second steps, though the
// sampling itself, by an external perf at 49 Hz over the whole run, changed none of them
// by more than 1%. Why launched before the server starts (Launch): launched
// after it, however long before the first step, the first step (l.i0) still lost 3–5%;
// launched before it, 1% (docs/profiles.md, "Overhead"). It is never disabled between
// steps: perf's disable stops its tracking of new processes too (the next step's
// backends, forked meanwhile, would have neither parent nor mappings), and a step's
// samples are told from the others' by time (stepWindow).
type CPUProfiler struct {
	serverPID int // 0: no server process is profiled (embedded engine, remote server)
	self      int
	namer     engine.ThreadNamer // nil: the server's threads are not named (PostgreSQL, embedded, remote)
	// runID is the run the next step's window is stored with: the run's, or in a sweep
	// the run of the trial about to start (set before each trial).
	runID int64

	// windows are the steps' loads recorded, in order; cur is the step running (Start to
	// Stop).
	windows []*stepWindow
	cur     *stepWindow
	// threads are the server's thread names by tid (namer), read at each step's start
	// and end; threadsErr is why they could not be read during the current step.
	threads    map[int]string
	threadsErr error
	// titles are the server's processes' titles, read at each step's start, every
	// pollEvery while it runs and at its end, so a process that exited keeps its name.
	mu       sync.Mutex
	titles   map[int]string
	stopPoll context.CancelFunc
	polled   chan struct{}
}

// stepWindow is one step's load in the run's recording: its span (profile.Now) and the
// sessions it attributes.
type stepWindow struct {
	step     string
	runID    int64
	from, to int64
	sessions map[int]string // server pid or tid → the role of the worker it serves
	// clients are the threads of dbperf's workers for this step when they were pinned
	// (runner.ClientThreader: a duet, whose points' windows overlap): then only these
	// of dbperf's samples are the step's client role. Nil: all of dbperf's are.
	clients map[int]bool
	// absent is why the workers' roles are absent from the step's profile ("" when every
	// session's server thread or process is known).
	absent string
}

// pollEvery is how often the server's process titles are read during a step.
const pollEvery = 250 * time.Millisecond

var (
	_ runner.Profiler       = (*CPUProfiler)(nil)
	_ runner.ClientThreader = (*CPUProfiler)(nil)
)

// CPU is one perf recording and the profilers whose steps' windows it holds: a
// run's one (dbperf run --cpu-profile), or one per point of an interleaved or duet sweep,
// the points' servers told apart by their process trees and their workers (a duet's run
// at once) by thread. It is folded once, at the end (Fold).
type CPU struct {
	dir   string // DIR: each run's files go to DIR/run-<id>
	hz    int    // perf's sampling rate per CPU: profile.DefaultHz, or $DBPERF_CPU_PROFILE_HZ
	rec   *profile.Recording
	profs []*CPUProfiler
}

// NewCPU takes rec, the recording (Launch), which it ends (Fold, Close), and makes
// opts.Dir; its profiles are sampled at opts.Hz.
func NewCPU(opts CPUOptions, rec *profile.Recording) (*CPU, error) {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	return &CPU{dir: opts.Dir, hz: opts.Hz, rec: rec}, nil
}

// Profiler is a new profiler of the recording for one target: serverPID its server's
// process (0: none), h its engine handle (a server's engine.ThreadNamer names its threads).
func (c *CPU) Profiler(serverPID int, h engine.Handle) *CPUProfiler {
	p := &CPUProfiler{serverPID: serverPID, self: os.Getpid(), titles: map[int]string{}, threads: map[int]string{}}
	if tn, ok := h.(engine.ThreadNamer); ok && serverPID != 0 {
		p.namer = tn
	}
	c.profs = append(c.profs, p)
	return p
}

// WindowKey is a window's step in a run: the key of Fold's profiles.
type WindowKey struct {
	RunID int64
	Step  string
}

// SetRun makes the next steps' windows the run id's: the run's, or in a sweep the run of
// the trial about to start (set before each trial).
func (p *CPUProfiler) SetRun(id int64) { p.runID = id }

// CPUOptions are the settings of one command's CPU profiles (dbperf run or sweep
// --cpu-profile DIR), read once by the command.
type CPUOptions struct {
	// Dir is DIR: each run's files go to DIR/run-<id>; "" without --cpu-profile.
	Dir string
	// Hz is perf's sampling rate per CPU (ParseHz).
	Hz int
	// CallGraph is perf's call-graph mode (ParseCallGraph); "" for the engine's default
	// (DefaultCallGraph of StackCopy).
	CallGraph string
	// StackCopy is the engine's engine.Meta.StackCopy (its default call graph).
	StackCopy int
	// Off is why there are no profiles though DIR was given (perf unavailable), for the
	// run's env.
	Off string
}

// callGraph is the options' call-graph mode: CallGraph, or the engine's default.
func (o CPUOptions) callGraph() string {
	if o.CallGraph == "" {
		return DefaultCallGraph(o.StackCopy)
	}
	return o.CallGraph
}

// ParseHz is the sampling rate of v, $DBPERF_CPU_PROFILE_HZ (1–10000: to see rare
// background work in short steps, at a higher overhead), or profile.DefaultHz when v is
// empty.
func ParseHz(v string) (int, error) {
	if v == "" {
		return profile.DefaultHz, nil
	}
	hz, err := strconv.Atoi(v)
	if err != nil || hz < 1 || hz > 10000 {
		return 0, fmt.Errorf("DBPERF_CPU_PROFILE_HZ=%q: a sampling rate of 1 to 10000 Hz", v)
	}
	return hz, nil
}

// DefaultCallGraph is perf's call-graph mode for a run on an engine whose
// engine.Meta.StackCopy is stackCopy, when $DBPERF_CPU_PROFILE_CALLGRAPH does not say:
// DWARF with that copy for the servers, frame pointers for the embedded engines (dbperf
// is Go, which keeps frame pointers).
//
// Why DWARF for the servers, every build: the PostgreSQL builds users sweep have no frame
// pointers (12–18 from Maven Central), nor has glibc, which every server's system calls
// go through (MariaDB's own code keeps them, Debian's 10.11 and Maven's 11.4), so with fp
// the stacks stop at the leaf or in libc: measured on tiny runs
// (docs/measurements/2026-11-28-unwinding.md), 100% of Maven PostgreSQL 13's and 14's
// query role's samples and 26–28% of MariaDB's did not unwind whole; with DWARF, 0–3%.
// Their objects carry DWARF CFI (.eh_frame), which perf script unwinds a copy of each
// sample's user stack with. Every build of an engine gets the same mode, also Debian's
// PostgreSQL 15, whose frame pointers would do: a sweep of 13 (Maven) against 15 (Debian)
// then compares profiles recorded the same way, and one setting does for all. The copy's
// size is the deepest stack's (each engine's Meta says its own). The cost: perf.data
// grows by the copy per sample of a busy CPU (at 49 Hz, 0.8 MiB a second per busy CPU
// for 16 KiB, 3.1 for 64), and perf script unwinds each sample (docs/profiles.md,
// "Overhead"). DBPERF_CPU_PROFILE_CALLGRAPH=fp records as before; dwarf,32768 halves
// MariaDB's data, its index build's stacks then stopping above the ALTER TABLE.
func DefaultCallGraph(stackCopy int) string {
	if stackCopy > 0 {
		return "dwarf," + strconv.Itoa(stackCopy)
	}
	return "fp"
}

// ParseCallGraph is perf's call-graph mode for a run on an engine whose
// engine.Meta.StackCopy is stackCopy: v,
// $DBPERF_CPU_PROFILE_CALLGRAPH (fp, dwarf or dwarf,N: profile.CheckCallGraph), or
// DefaultCallGraph when v is empty.
func ParseCallGraph(v string, stackCopy int) (string, error) {
	if v == "" {
		return DefaultCallGraph(stackCopy), nil
	}
	if err := profile.CheckCallGraph(v); err != nil {
		return "", fmt.Errorf("DBPERF_CPU_PROFILE_CALLGRAPH: %w", err)
	}
	return v, nil
}

// Launch launches the run's or sweep's perf for --cpu-profile (nil without it: opts.Dir
// empty), sampling at once: before the server starts, for the CPU profilers (NewCPU).
func Launch(ctx context.Context, opts CPUOptions) (*profile.Recording, error) {
	if opts.Dir == "" {
		return nil, nil
	}
	// perf.data may not fill the temporary directory: a DWARF recording grows by up to
	// 3 MiB a second per busy CPU (DefaultCallGraph), so a long sweep of a machine of
	// many CPUs could. perf stops at half the space free when it starts, and the fold
	// says so (Fold).
	rec, err := profile.Launch(ctx, profile.Options{Hz: opts.Hz, CallGraph: opts.callGraph(),
		MaxSize: profile.FreeSpace(os.TempDir()) / 2})
	if err != nil {
		return nil, err
	}
	if err := rec.Enable(ctx); err != nil {
		_ = rec.Close()
		return nil, err
	}
	return rec, nil
}

// Start begins the step's window in the run's recording and the polling of the server's
// process titles.
func (p *CPUProfiler) Start(ctx context.Context, step string, sessions []runner.ProfiledSession) error {
	w := &stepWindow{step: step, runID: p.runID, sessions: map[int]string{}}
	var reasons []string
	for _, s := range sessions {
		if s.ID != 0 && s.Local {
			w.sessions[s.ID] = s.Role
		} else if s.Reason != "" && !slices.Contains(reasons, s.Reason) {
			reasons = append(reasons, s.Reason)
		}
	}
	if p.serverPID != 0 && len(reasons) > 0 {
		w.absent = strings.Join(reasons, "; ")
	}
	p.readTitles()
	p.threadsErr = nil
	p.readThreads(ctx)
	w.from = profile.Now()
	p.cur = w
	pctx, cancel := context.WithCancel(ctx)
	p.stopPoll, p.polled = cancel, make(chan struct{})
	go func() {
		defer close(p.polled)
		if p.serverPID == 0 {
			return
		}
		t := time.NewTicker(pollEvery)
		defer t.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case <-t.C:
				p.readTitles()
			}
		}
	}()
	return nil
}

// readTitles reads the titles of the server's processes not yet named.
func (p *CPUProfiler) readTitles() {
	if p.serverPID == 0 {
		return
	}
	for _, pid := range profile.Tree(p.serverPID) {
		p.mu.Lock()
		_, known := p.titles[pid]
		p.mu.Unlock()
		if known {
			continue
		}
		if t := profile.Title(pid); t != "" {
			p.mu.Lock()
			p.titles[pid] = t
			p.mu.Unlock()
		}
	}
}

// readThreads adds the server's thread names not yet known (the namer's); the first
// failure is kept for the step's note.
func (p *CPUProfiler) readThreads(ctx context.Context) {
	if p.namer == nil {
		return
	}
	names, err := p.namer.ServerThreads(ctx)
	if err != nil {
		if p.threadsErr == nil {
			p.threadsErr = err
		}
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for tid, name := range names {
		if _, known := p.threads[tid]; !known {
			p.threads[tid] = name
		}
	}
}

// Stop ends the step's window at the end of its load and reads the titles and thread
// names of its processes; the step's samples are folded by CPU.Fold. Its error, the
// step's note, says once why the workers' roles are absent, or why the server's threads
// are not named.
func (p *CPUProfiler) Stop(ctx context.Context, step string) error {
	w := p.cur
	w.to = profile.Now()
	p.cur = nil
	p.stopPoll()
	<-p.polled
	p.windows = append(p.windows, w)
	var errs []error
	p.readTitles()
	p.readThreads(ctx)
	switch {
	case w.absent != "":
		// The thread names failed too, most likely for the same reason: said once.
		errs = append(errs, fmt.Errorf("roles absent, the server's samples are role %s: %s", RoleServer, w.absent))
	case p.threadsErr != nil:
		errs = append(errs, fmt.Errorf("the server's threads are not named: %w", p.threadsErr))
	}
	return errors.Join(errs...)
}

// ClientThreads keeps the pinned workers' threads of the step running (a duet's point):
// only they are its client role (runner.ClientThreader).
func (p *CPUProfiler) ClientThreads(step string, tids []int) {
	if p.cur == nil || len(tids) == 0 {
		return
	}
	p.cur.clients = map[int]bool{}
	for _, t := range tids {
		p.cur.clients[t] = true
	}
}

// Fold ends the recording and folds it, once, per window and role: one file per step and
// role (DIR/run-<id>/<step>.<role>.folded), and the profiles by run and step for the
// store. Without a step recorded it only removes perf's files. A profile that cannot be
// written is left out and named in the error.
func (c *CPU) Fold(ctx context.Context) (map[WindowKey][]store.StepProfile, error) {
	if c.rec == nil {
		return nil, nil
	}
	defer c.Close()
	tasks := profile.NewTasks()
	var ws []profile.Window
	var wins []*stepWindow
	for _, p := range c.profs {
		for _, w := range p.windows {
			ws = append(ws, profile.Window{From: w.from, To: w.to, Filter: p.filter(w, tasks)})
			wins = append(wins, w)
		}
	}
	if len(ws) == 0 {
		return nil, nil
	}
	pss, err := c.rec.FoldWindows(ctx, ws, tasks)
	if err != nil {
		return nil, err
	}
	var errs []error
	out := map[WindowKey][]store.StepProfile{}
	unwinding := map[int64]map[string]profile.Unwinding{} // by run and role
	for i, w := range wins {
		ps := pss[i]
		if unwinding[w.runID] == nil {
			unwinding[w.runID] = map[string]profile.Unwinding{}
		}
		for role, p := range ps.Roles {
			unwinding[w.runID][role] = unwinding[w.runID][role].Add(p.Unwinding())
		}
		dir := filepath.Join(c.dir, fmt.Sprintf("run-%d", w.runID))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			errs = append(errs, err)
		}
		var kept []store.StepProfile
		for _, role := range ps.RoleNames() {
			text, stacks := foldedCapped(ps.Roles[role], store.MaxFoldedBytes)
			if gz, err := store.CompressFolded(text); err != nil {
				errs = append(errs, fmt.Errorf("step %s, role %s: %w", w.step, role, err))
			} else {
				kept = append(kept, store.StepProfile{Role: role, Event: c.rec.Event, Hz: c.hz,
					Samples: int64(ps.Roles[role].Samples), Stacks: int64(stacks), Folded: gz})
			}
			name := filepath.Join(dir, fileSafe(w.step)+"."+fileSafe(role)+".folded")
			if err := os.WriteFile(name, text, 0o644); err != nil {
				errs = append(errs, fmt.Errorf("write %s: %w", name, err))
			}
		}
		out[WindowKey{RunID: w.runID, Step: w.step}] = kept
	}
	if c.rec.SizeLimited() {
		errs = append(errs, fmt.Errorf("perf stopped recording at its size limit (%d MiB, half the space free in %s when it started): the later steps' profiles are partial or missing; DBPERF_CPU_PROFILE_CALLGRAPH=fp records far less",
			c.rec.MaxSize()>>20, os.TempDir()))
	}
	for _, id := range slices.Sorted(maps.Keys(unwinding)) {
		if note := unwindNote(id, c.rec.CallGraph(), unwinding[id]); note != "" {
			errs = append(errs, errors.New(note))
		}
	}
	return out, errors.Join(errs...)
}

// unwindWarn is the share of a role's samples whose stacks did not unwind whole
// (profile.Unwound) from which a run's fold says so, for roles of at least
// unwindWarnSamples samples.
const (
	unwindWarn        = 0.10
	unwindWarnSamples = 20
)

// unwindNote says which of a run's roles (over all its steps) have more than unwindWarn
// of their samples in stacks that did not unwind whole (their inclusive "total" view is
// then short by as much), and what to do about it; "" when none has.
func unwindNote(runID int64, callGraph string, byRole map[string]profile.Unwinding) string {
	var bad []string
	for _, role := range slices.Sorted(maps.Keys(byRole)) {
		u := byRole[role]
		if u.Samples >= unwindWarnSamples && u.Share() > unwindWarn {
			bad = append(bad, fmt.Sprintf("%s %.0f%%", role, 100*u.Share()))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	hint := "a build without frame pointers? DBPERF_CPU_PROFILE_CALLGRAPH=dwarf,16384 unwinds by its DWARF CFI"
	if callGraph != "fp" {
		hint = "stacks deeper than the copy of " + callGraph + ", or objects without CFI (.eh_frame)"
	}
	return fmt.Sprintf("run %d: stacks not unwound whole (call graph %s): %s of the role's samples (%s; docs/profiles.md, \"Unwinding\")",
		runID, callGraph, strings.Join(bad, ", "), hint)
}

// Close ends the recording unfolded (an interrupted run), removing perf's files; after
// Fold it does nothing.
func (c *CPU) Close() {
	if c.rec != nil {
		_ = c.rec.Close()
		c.rec = nil
	}
}

// foldedCapped is a profile's folded text (Profile.WriteFolded) and its number of
// distinct stacks, at most maxBytes long: over that, the least sampled stacks are
// counted on one profile.OtherStacks line, as the folder does over its cap on stacks.
func foldedCapped(p *profile.Profile, maxBytes int) ([]byte, int) {
	var buf bytes.Buffer
	_ = p.WriteFolded(&buf) // a bytes.Buffer does not fail
	if buf.Len() <= maxBytes {
		return buf.Bytes(), len(p.Stacks)
	}
	keys := slices.Collect(maps.Keys(p.Stacks))
	slices.SortFunc(keys, func(a, b string) int { // most sampled first
		if c := cmp.Compare(p.Stacks[b], p.Stacks[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	kept := &profile.Profile{Role: p.Role, Samples: p.Samples, Stacks: map[string]int{}}
	size := len(profile.OtherStacks) + 24 // its line
	other := 0
	for _, k := range keys {
		n := p.Stacks[k]
		line := len(k) + 2 + len(strconv.Itoa(n))
		if k != profile.OtherStacks && size+line <= maxBytes {
			kept.Stacks[k] = n
			size += line
			continue
		}
		other += n
	}
	if other > 0 {
		kept.Stacks[profile.OtherStacks] += other
	}
	buf.Reset()
	_ = kept.WriteFolded(&buf)
	return buf.Bytes(), len(kept.Stacks)
}

// filter attributes a sample: dbperf's process is the client; the server's processes and
// threads (tasks: the server's descendants, also those that started and ended during the
// step) are a worker's role when they serve its session, background:<name> otherwise:
// the thread's name (namer), else the process's title or command name. When the
// workers' sessions are unknown (absent), a sample neither a thread name nor a title
// names is the role server: it may be a worker's.
func (p *CPUProfiler) filter(w *stepWindow, tasks *profile.Tasks) profile.Filter {
	return func(pid, tid int, comm string) (string, bool) {
		if pid == p.self {
			if w.clients != nil && !w.clients[tid] {
				return "", false // another point's worker, or dbperf's own runtime
			}
			return RoleClient, true
		}
		if p.serverPID == 0 || !tasks.Descends(pid, p.serverPID) {
			return "", false
		}
		if role, ok := w.sessions[tid]; ok {
			return role, true
		}
		title := ""
		p.mu.Lock()
		thread, named := p.threads[tid]
		if tid == pid {
			title = p.titles[pid]
		}
		p.mu.Unlock()
		if named {
			return "background:" + thread, true
		}
		name := profile.ProcessName(title, comm)
		if w.absent != "" && name == comm {
			return RoleServer, true
		}
		return "background:" + name, true
	}
}

// fileSafe makes a step or role name part of a file name: a separator or space is '_'.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == 0 || r == '\\' {
			return '_'
		}
		return r
	}, s)
}

// EnvCPU is the run's env entry on its CPU profiles: where they go and how they are
// sampled, or why there are none (CPUNote).
const EnvCPU = "cpu_profile"

// CPUNote is the run's env entry on its CPU profiles ("" without --cpu-profile).
func CPUNote(opts CPUOptions) string {
	switch {
	case opts.Off != "":
		return "none: " + opts.Off
	case opts.Dir != "":
		dir, err := filepath.Abs(opts.Dir)
		if err != nil {
			dir = opts.Dir
		}
		return fmt.Sprintf("%s/run-<id> and the results store: perf record -a -F %d --call-graph %s during each step's load, folded per role", dir, opts.Hz, opts.callGraph())
	}
	return ""
}
