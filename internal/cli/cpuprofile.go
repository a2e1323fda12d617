package cli

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

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/profile"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/store"
)

// roleClient is the role of dbperf's own process in a CPU profile (an embedded engine's
// work included: goroutines move between threads, so its threads name no role).
const roleClient = "client"

// roleServer is the role of the server's samples when the workers' sessions could not be
// told apart (MariaDB without performance_schema): its threads that no title or thread
// name tells apart, the workers' connections among them, so not "background".
const roleServer = "server"

// cpuProfiler is the runner.Profiler of `dbperf run --cpu-profile DIR`: per step a
// system-wide perf recording (internal/profile), folded per role into
// DIR/run-<id>/<step>.<role>.folded and kept for the step's store writer (take, the
// runRecord's profiles), which stores them with the step: a worker's session's server process or
// thread by the worker's role, the server's other processes and threads as
// background:<name> (a PostgreSQL process by its title, a MariaDB thread by its
// engine.ThreadNamer name), and dbperf as client. When the workers' sessions are unknown
// (SessionPID failed) the server's otherwise unnamed samples are the role server, and
// the step's note says why once.
type cpuProfiler struct {
	dir       string // DIR/run-<id>
	serverPID int    // 0: no server process is profiled (embedded engine, remote server)
	self      int
	hz        int                // perf's sampling rate per CPU: profile.DefaultHz, or $DBPERF_CPU_PROFILE_HZ
	namer     engine.ThreadNamer // nil: the server's threads are not named (PostgreSQL, embedded, remote)

	rec      *profile.Recording
	sessions map[int]string // server pid or tid → the role of the worker it serves
	// absent is why the workers' roles are absent from the step's profile ("" when every
	// session's server thread or process is known).
	absent string
	// threads are the server's thread names by tid (namer), read at the step's start and
	// end; threadsErr is why they could not be read.
	threads    map[int]string
	threadsErr error
	// titles are the server's processes' titles, read at the start, every pollEvery while
	// the step runs and at its end, so a process that exited keeps its name.
	mu       sync.Mutex
	titles   map[int]string
	stopPoll context.CancelFunc
	polled   chan struct{}

	// folded are the profiles of the steps stopped and not yet stored, by step (take).
	folded map[string][]store.StepProfile
}

// pollEvery is how often the server's process titles are read during a step.
const pollEvery = 250 * time.Millisecond

var _ runner.Profiler = (*cpuProfiler)(nil)

// newCPUProfiler makes the run's directory of profiles. h is the run's engine handle: a
// server's engine.ThreadNamer names its threads.
func newCPUProfiler(dir string, runID int64, serverPID, hz int, h engine.Handle) (*cpuProfiler, error) {
	d := filepath.Join(dir, fmt.Sprintf("run-%d", runID))
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	p := &cpuProfiler{dir: d, serverPID: serverPID, self: os.Getpid(), hz: hz}
	if tn, ok := h.(engine.ThreadNamer); ok && serverPID != 0 {
		p.namer = tn
	}
	return p, nil
}

// cpuProfileHz is the sampling rate: $DBPERF_CPU_PROFILE_HZ (1–10000: to see rare
// background work in short steps, at a higher overhead) or profile.DefaultHz.
func cpuProfileHz(env Env) (int, error) {
	v := env.getenv("DBPERF_CPU_PROFILE_HZ")
	if v == "" {
		return profile.DefaultHz, nil
	}
	hz, err := strconv.Atoi(v)
	if err != nil || hz < 1 || hz > 10000 {
		return 0, fmt.Errorf("DBPERF_CPU_PROFILE_HZ=%q: a sampling rate of 1 to 10000 Hz", v)
	}
	return hz, nil
}

var _ runner.Preparer = (*cpuProfiler)(nil)

// Prepare launches perf, its events disabled, before the step's sessions open (perf
// takes about 0.1 s to start: runner.Preparer), and reads the server's process titles and
// thread names known so far.
func (p *cpuProfiler) Prepare(ctx context.Context, step string) error {
	p.Abandon(step)
	p.titles = map[int]string{}
	p.readTitles()
	p.threads, p.threadsErr = map[int]string{}, nil
	p.readThreads(ctx)
	rec, err := profile.Launch(ctx, profile.Options{Hz: p.hz})
	if err != nil {
		return err
	}
	p.rec = rec
	return nil
}

// Abandon ends a prepared recording whose step ended before its load started.
func (p *cpuProfiler) Abandon(string) {
	if p.rec != nil {
		_ = p.rec.Close()
		p.rec = nil
	}
}

// Start enables the prepared recording (Prepare; launched here when it was not) and
// starts the polling of the server's process titles.
func (p *cpuProfiler) Start(ctx context.Context, step string, sessions []runner.ProfiledSession) error {
	p.sessions = map[int]string{}
	var reasons []string
	for _, s := range sessions {
		if s.ID != 0 && s.Local {
			p.sessions[s.ID] = s.Role
		} else if s.Reason != "" && !slices.Contains(reasons, s.Reason) {
			reasons = append(reasons, s.Reason)
		}
	}
	p.absent = ""
	if p.serverPID != 0 && len(reasons) > 0 {
		p.absent = strings.Join(reasons, "; ")
	}
	if p.rec == nil {
		if err := p.Prepare(ctx, step); err != nil {
			return err
		}
	}
	if err := p.rec.Enable(ctx); err != nil {
		p.Abandon(step)
		return err
	}
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
func (p *cpuProfiler) readTitles() {
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
func (p *cpuProfiler) readThreads(ctx context.Context) {
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

// Stop ends the recording, folds it, writes one file per role and keeps the profiles for
// the step's store writer (take). Its error, the step's note, also says once why the
// workers' roles are absent, or why the server's threads are not named.
func (p *cpuProfiler) Stop(ctx context.Context, step string) error {
	p.stopPoll()
	<-p.polled
	defer p.Abandon(step) // the recording's files removed once folded
	if err := p.rec.Stop(); err != nil {
		return err
	}
	p.readTitles()
	p.readThreads(ctx)
	tasks := profile.NewTasks()
	ps, err := p.rec.Fold(ctx, p.filter(tasks), tasks)
	if err != nil {
		return err
	}
	var errs []error
	var kept []store.StepProfile
	for _, role := range ps.RoleNames() {
		text, stacks := foldedCapped(ps.Roles[role], store.MaxFoldedBytes)
		if gz, err := store.CompressFolded(text); err != nil {
			errs = append(errs, fmt.Errorf("role %s: %w", role, err))
		} else {
			kept = append(kept, store.StepProfile{Role: role, Event: p.rec.Event, Hz: p.hz,
				Samples: int64(ps.Roles[role].Samples), Stacks: int64(stacks), Folded: gz})
		}
		name := filepath.Join(p.dir, fileSafe(step)+"."+fileSafe(role)+".folded")
		if err := os.WriteFile(name, text, 0o644); err != nil {
			errs = append(errs, fmt.Errorf("write %s: %w", name, err))
		}
	}
	p.mu.Lock()
	if p.folded == nil {
		p.folded = map[string][]store.StepProfile{}
	}
	p.folded[step] = kept
	p.mu.Unlock()
	switch {
	case p.absent != "":
		// The thread names failed too, most likely for the same reason: said once.
		errs = append(errs, fmt.Errorf("roles absent, the server's samples are role %s: %s", roleServer, p.absent))
	case p.threadsErr != nil:
		errs = append(errs, fmt.Errorf("the server's threads are not named: %w", p.threadsErr))
	}
	return errors.Join(errs...)
}

// take hands over the profiles of a stopped step, once (nil when it has none).
func (p *cpuProfiler) take(step string) []store.StepProfile {
	p.mu.Lock()
	defer p.mu.Unlock()
	ps := p.folded[step]
	delete(p.folded, step)
	return ps
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
func (p *cpuProfiler) filter(tasks *profile.Tasks) profile.Filter {
	return func(pid, tid int, comm string) (string, bool) {
		if pid == p.self {
			return roleClient, true
		}
		if p.serverPID == 0 || !tasks.Descends(pid, p.serverPID) {
			return "", false
		}
		if role, ok := p.sessions[tid]; ok {
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
		if p.absent != "" && name == comm {
			return roleServer, true
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

// envCPUProfile is the run's env entry on its CPU profiles: where they go and how they
// are sampled, or why there are none.
const envCPUProfile = "cpu_profile"

// cpuProfileNote is the run's env entry on its CPU profiles ("" without --cpu-profile).
func cpuProfileNote(cfg *config.Run) string {
	switch {
	case cfg.CPUProfileOff != "":
		return "none: " + cfg.CPUProfileOff
	case cfg.CPUProfileDir != "":
		dir, err := filepath.Abs(cfg.CPUProfileDir)
		if err != nil {
			dir = cfg.CPUProfileDir
		}
		return fmt.Sprintf("%s/run-<id> and the results store: perf record -a -F %d --call-graph fp during each step's load, folded per role", dir, cfg.CPUProfileHz)
	}
	return ""
}
