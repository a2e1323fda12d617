package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/store"
)

// waitHz is how often a step's sessions' waits are sampled (dbperf run --explain): one
// small query of the server's activity view each time, on a connection of its own. At 10
// a second a 10 s step has 100 samples per session, so a share of 5% is 5 samples; the
// sampling connection's backend cost a managed PostgreSQL about 0.8 ms of CPU per sample
// on the 2-core VM (docs/profiles.md), under 1% of one CPU.
const waitHz = 10

// maxPlans bounds the statement shapes whose plans are taken at a step's end: the most
// expensive ones.
const maxPlans = 20

// roleOther is the wait samples' role for the server's sessions that serve no worker of
// the step (dbperf's own monitoring and cleanup connections, other clients).
const roleOther = "other"

// Explain is the runner.Profiler of `dbperf run --explain` (OpenExplain): around each step's
// load it snapshots the server's statement statistics (engine.Diag.Statements) and
// samples every session's wait at waitHz; at the step's end it keeps the statements'
// differences with their plans and the waits counted per role, for the step's store
// writer (Take). It holds the diag's one connection: Start and Stop run on the runner's
// goroutine, the sampler between them on its own.
type Explain struct {
	d engine.Diag
	// noStatements, noWaits: the server gives none (the run's env says why once), so
	// the steps neither ask nor note it.
	noStatements, noWaits bool

	before   map[string]engine.Statement
	beforeOK error
	sessions map[int]string
	stop     func()
	sampled  chan struct{}
	counts   map[[2]string]int64 // role, wait → samples (the sampler's until sampled closes)
	waitErr  error

	mu   sync.Mutex
	kept map[string]stepDiag
}

// stepDiag is a stopped step's statements and waits, not yet stored.
type stepDiag struct {
	stmts []store.StepStatement
	waits []store.StepWait
}

var _ runner.Profiler = (*Explain)(nil)

// Start snapshots the statements and starts sampling waits.
func (c *Explain) Start(ctx context.Context, step string, sessions []runner.ProfiledSession) error {
	c.sessions = map[int]string{}
	for _, s := range sessions {
		if s.ID != 0 {
			c.sessions[s.ID] = s.Role
		}
	}
	c.before, c.beforeOK = nil, nil
	if c.noStatements {
		c.beforeOK = errNoStatements
	} else if stmts, err := c.d.Statements(ctx); err != nil {
		c.beforeOK = err
	} else {
		c.before = make(map[string]engine.Statement, len(stmts))
		for _, s := range stmts {
			c.before[s.ID] = s
		}
	}
	c.counts, c.waitErr = map[[2]string]int64{}, nil
	stop := make(chan struct{})
	c.stop, c.sampled = func() { close(stop) }, make(chan struct{})
	if c.noWaits {
		close(c.sampled)
		return nil
	}
	go c.sample(context.WithoutCancel(ctx), stop)
	return nil
}

// errNoStatements marks a run whose server gives no statement statistics: said once, in
// the run's env.
var errNoStatements = errors.New("none")

// waitTimeout bounds one wait sample's query.
const waitTimeout = 2 * time.Second

// sample counts every session's wait at waitHz until stop is closed; the first error ends
// it. A sample is never cancelled half-way (a driver closes a connection whose query is
// cancelled, and the step's end still needs it): stop waits for the one in flight.
func (c *Explain) sample(ctx context.Context, stop <-chan struct{}) {
	defer close(c.sampled)
	t := time.NewTicker(time.Second / waitHz)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		wctx, cancel := context.WithTimeout(ctx, waitTimeout)
		waits, err := c.d.Waits(wctx)
		cancel()
		if err != nil {
			c.waitErr = err
			return
		}
		for id, w := range waits {
			role, ok := c.sessions[id]
			if !ok {
				role = roleOther
			}
			c.counts[[2]string{role, w}]++
		}
	}
}

// halt ends the sampling of waits (at once when the load ends: Set.Stop halts
// every hook before stopping any, so folding a CPU profile is not sampled as idle).
func (c *Explain) halt() {
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
	<-c.sampled
}

// Stop ends the sampling, takes the statements' differences and the plans of the most
// expensive shapes, and keeps them for Take. What could not be read is its error (the
// step's note); what could is kept all the same.
func (c *Explain) Stop(ctx context.Context, step string) error {
	c.halt()
	var errs []error
	var sd stepDiag
	if c.waitErr != nil {
		errs = append(errs, fmt.Errorf("waits: %w", c.waitErr))
	}
	for k, n := range c.counts {
		sd.waits = append(sd.waits, store.StepWait{Role: k[0], Wait: k[1], Samples: n, Hz: waitHz})
	}
	sort.Slice(sd.waits, func(i, j int) bool {
		a, b := sd.waits[i], sd.waits[j]
		return a.Role < b.Role || (a.Role == b.Role && a.Wait < b.Wait)
	})
	if errors.Is(c.beforeOK, errNoStatements) {
		// The run's env says why.
	} else if c.beforeOK != nil {
		errs = append(errs, fmt.Errorf("statements: %w", c.beforeOK))
	} else if after, err := c.d.Statements(ctx); err != nil {
		errs = append(errs, fmt.Errorf("statements: %w", err))
	} else {
		sd.stmts = c.statements(ctx, after)
	}
	c.mu.Lock()
	if c.kept == nil {
		c.kept = map[string]stepDiag{}
	}
	c.kept[step] = sd
	c.mu.Unlock()
	return joinNote(errs)
}

// statements are the shapes the step ran (after minus the start's snapshot), most time
// first, the first maxPlans with their plans.
func (c *Explain) statements(ctx context.Context, after []engine.Statement) []store.StepStatement {
	var out []store.StepStatement
	shapes := map[string]engine.Statement{}
	for _, a := range after {
		d := a.Sub(c.before[a.ID])
		if d.Calls <= 0 {
			continue
		}
		shapes[a.ID] = a
		out = append(out, store.StepStatement{QueryID: a.ID, Query: a.Text, Calls: d.Calls, Plans: d.Plans,
			PlanSec: d.PlanSec, ExecSec: d.ExecSec, Rows: d.Rows, RowsExamined: d.RowsExamined,
			BlocksHit: d.BlocksHit, BlocksRead: d.BlocksRead, BlocksDirtied: d.BlocksDirtied, BlocksWritten: d.BlocksWritten,
			WALBytes: d.WALBytes, JITSec: d.JITSec})
	}
	store.SortStatements(out)
	for i := range out {
		if i >= maxPlans {
			out[i].PlanNote = fmt.Sprintf("not explained: only the %d most expensive shapes are", maxPlans)
			continue
		}
		// The custom plan (with one execution's parameters) beside the generic one, where
		// the engine can give it: the plan the statement ran with when they differ.
		if cp, ok := c.d.(engine.CustomPlanner); ok {
			if plan, params, err := cp.CustomPlan(ctx, shapes[out[i].QueryID]); err != nil {
				out[i].CustomPlanNote = err.Error()
			} else {
				out[i].CustomPlan, out[i].CustomPlanNote = plan, params
			}
		}
		plan, err := c.d.Plan(ctx, shapes[out[i].QueryID])
		if err != nil {
			out[i].PlanNote = err.Error()
			continue
		}
		out[i].Plan = plan
	}
	return out
}

// Take hands over a stopped step's statements and waits, once: the record stores them
// with the step.
func (c *Explain) Take(step string) ([]store.StepStatement, []store.StepWait) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sd := c.kept[step]
	delete(c.kept, step)
	return sd.stmts, sd.waits
}

// EnvExplain is the run's env entry on what --explain recorded: per kind of data how it
// was read, or why there is none (OpenExplain's note).
const EnvExplain = "explain"

// ExplainOptions are the settings of `dbperf run --explain`.
type ExplainOptions struct {
	// Enable lets the diag turn on the statistics it reads (engine.DiagOptions.Enable:
	// a managed server's, which dbperf owns).
	Enable bool
	// Warn is where the reason for no statements or waits is said, once.
	Warn io.Writer
}

// OpenExplain opens the server's diag of h, an engine named engine, for `dbperf run
// --explain`, and returns its collector (nil where the engine has none or the server
// gives neither statements nor waits; the reason is said once on opts.Warn) and the
// run's env entry (EnvExplain) on what it gives.
func OpenExplain(ctx context.Context, h engine.Handle, engineName string, opts ExplainOptions) (*Explain, string) {
	dg, ok := h.(engine.Diagnoser)
	if !ok {
		note := "none: " + engineName + " keeps no statement statistics or waits dbperf reads (embedded engines: --cpu-profile names their functions)"
		fmt.Fprintf(opts.Warn, "dbperf: --explain: %s\n", note)
		return nil, note
	}
	d, err := dg.OpenDiag(ctx, engine.DiagOptions{Enable: opts.Enable})
	if err != nil {
		fmt.Fprintf(opts.Warn, "dbperf: --explain: %v\n", err)
		return nil, "none: " + err.Error()
	}
	notes := d.Notes()
	keys := make([]string, 0, len(notes))
	for k := range notes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", k, notes[k])
	}
	note := b.String()
	dc := &Explain{d: d, noStatements: strings.HasPrefix(notes["statements"], "none:"), noWaits: strings.HasPrefix(notes["waits"], "none:")}
	if dc.noStatements && dc.noWaits {
		fmt.Fprintf(opts.Warn, "dbperf: --explain: %s\n", note)
		_ = d.Close()
		return nil, note
	}
	if !dc.noWaits {
		note += fmt.Sprintf("; waits sampled %d times a second; the sampling connection's CPU is role %s in CPU profiles", waitHz, RoleExplain)
	}
	return dc, note
}

// RoleExplain is the role of the --explain diag's own connection in CPU profiles and
// waits.
const RoleExplain = "dbperf:explain"

// Session is the diag's connection as a profiled session of its own role (local: its
// server runs on this machine, so its process or thread is in CPU profiles); a Set
// tells every profiler of it (Set.Extra).
func (c *Explain) Session(local bool) runner.ProfiledSession {
	return runner.ProfiledSession{Role: RoleExplain, ID: c.d.SessionID(), Local: local}
}

// Close closes the diag's connection.
func (c *Explain) Close() error { return c.d.Close() }
