package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/probe"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/workload"
)

// One run across several agents (dbperf run … --agents N, docs/fleet.md): the command
// (the coordinator) splits the clients over N jobs of one class, each a part that runs the
// workload with its own clients (--client-offset, so they own other tables) against the
// same server, its steps' loads started together by a barrier in the store (--part); once
// every part is done, it merges the parts' runs into one run.

// The env keys of a part's run and of the merged run.
const (
	envPartOf = "part_of" // a part's run: the key of the run it is a part of
	envPart   = "part"    // a part's run: "I/N"
	envAgents = "agents"  // the merged run: its parts, hosts and runs
	// envAgentsPartial is the merged run's: why it is not whole (a part whose job did not
	// complete, a step a part ran alone), one clause per part; absent when it is.
	envAgentsPartial = "agents_partial"
)

// agentsWorkloads are the workloads whose clients own their tables, so parts of one run
// share the server without touching each other's data.
var agentsWorkloads = []string{"insertbench"}

// partSpec is --part KEY/I/N.
type partSpec struct {
	key  string
	i, n int
}

func parsePart(v string) (partSpec, error) {
	f := strings.Split(v, "/")
	if len(f) != 3 || f[0] == "" {
		return partSpec{}, fmt.Errorf("--part %q: give KEY/I/N (set by dbperf run --agents)", v)
	}
	i, err1 := strconv.Atoi(f[1])
	n, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || n < 2 || i < 1 || i > n {
		return partSpec{}, fmt.Errorf("--part %q: give KEY/I/N with 1 ≤ I ≤ N, N ≥ 2", v)
	}
	return partSpec{key: f[0], i: i, n: n}, nil
}

// checkAgents refuses what --agents cannot run, every problem at once.
func checkAgents(cmd *cobra.Command, cfg *config.Run, wl workload.Workload, eng engine.Engine, f *runFlags) error {
	var errs []string
	if f.agents < 2 {
		errs = append(errs, fmt.Sprintf("--agents %d: give 2 or more agents to share the run's clients", f.agents))
	}
	if !store.IsPostgres(cfg.ResultsPath) {
		errs = append(errs, "--agents: the agents take their parts from the queue in a PostgreSQL results store: give --results postgres://… (or @FILE, or DBPERF_RESULTS)")
	}
	if !slices.Contains(agentsWorkloads, wl.Meta().Name) {
		errs = append(errs, fmt.Sprintf("--agents: %s's clients share tables, so its setup cannot be split yet; --agents runs %s", wl.Meta().Name, strings.Join(agentsWorkloads, ", ")))
	}
	if m := eng.Meta(); m.Embedded {
		errs = append(errs, fmt.Sprintf("--agents: --engine %s runs inside each dbperf process: the agents would not share a database; use a server engine (--managed or --dsn)", m.Name))
	}
	if cfg.Clients < f.agents {
		errs = append(errs, fmt.Sprintf("--agents %d: --clients %d is fewer clients than agents; give at least one client per agent", f.agents, cfg.Clients))
	}
	if f.q.queue {
		errs = append(errs, "--agents and --queue: --agents queues its parts itself and waits for them; drop --queue")
	}
	for _, fl := range []string{"repeat", "cpu-profile", "explain", "cluster", "server-memory", "server-cpus"} {
		if cmd.Flags().Changed(fl) {
			errs = append(errs, fmt.Sprintf("--%s: not with --agents yet", fl))
		}
	}
	if f.dsn != "" && !strings.HasPrefix(f.dsn, "@") && RedactDSN(f.dsn) != f.dsn {
		errs = append(errs, "--dsn: the parts' jobs would store its password; give --dsn @FILE (a file at this path on each agent's host whose first line is the DSN)")
	}
	if err := fleet.CheckClass(f.q.class); err != nil {
		errs = append(errs, "--class: "+err.Error())
	}
	if len(errs) > 0 {
		return badInput(errors.New(strings.Join(errs, "\n")))
	}
	return nil
}

// runAgents is the coordinator of --agents: it starts the managed server (when asked),
// queues the N parts, waits for them and merges their runs into one.
func runAgents(ctx context.Context, env Env, cmd *cobra.Command, cfg *config.Run, wl workload.Workload, eng engine.Engine, f *runFlags) error {
	if err := checkAgents(cmd, cfg, wl, eng, f); err != nil {
		return err
	}
	fl, st, err := openQueue(ctx, cfg.ResultsPath)
	if err != nil {
		return err
	}
	defer st.Close()
	defer fl.Close()
	// The parts need an agent each at once: a part queued behind another on one agent
	// would wait at the first barrier for one that cannot start.
	agents, err := fl.Agents(ctx)
	if err != nil {
		return err
	}
	idle := 0
	for _, a := range agents {
		if a.State == "idle" && a.Class == f.q.class {
			idle++
		}
	}
	if idle < f.agents {
		return badInput(fmt.Errorf("--agents %d: %d idle agents of %s; start more (dbperf agent --class %s) or wait for them (dbperf queue lists them)",
			f.agents, idle, className(f.q.class), orDash(f.q.class)))
	}
	if cfg.Label == "" {
		cfg.Label = strings.ReplaceAll(engineLabel(cfg), "/", "-") + "-agents-" + time.Now().Format("20060102-150405")
	}
	dsnArg := cfg.DSN
	settings := map[string]string{}
	if cfg.Managed {
		// The parts reach the server through a file only this user reads: a job holds its
		// path, never the password. The server listens on 127.0.0.1, so the agents that
		// take the parts must run on this host.
		base, cleanup, err := workDir(cfg, eng.Meta().Name)
		if err != nil {
			return err
		}
		defer cleanup()
		in, err := startServer(ctx, cfg, eng.Meta().Name, base)
		if err != nil {
			return badInput(err)
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			defer cancel()
			_ = in.Stop(sctx)
			if !cfg.Keep {
				_ = in.Remove()
			}
		}()
		dsnFile := filepath.Join(base, "server.dsn")
		if err := os.WriteFile(dsnFile, []byte(in.DSN+"\n"), 0o600); err != nil {
			return fmt.Errorf("--agents: write the server's DSN for the parts: %w", err)
		}
		dsnArg = "@" + dsnFile
		settings["dbperf.managed"] = "true"
		settings["dbperf.profile"] = in.Profile
		settings["dbperf.profile_text"] = in.Config
		settings["dbperf.dsn"] = RedactDSN(in.DSN)
	}
	key := randomHex(8)
	// The parts' command line: the run's own flags, less those of the server (the parts
	// use it as a --dsn server) and of the split, which each part gets its own of.
	base := commandArgs(cmd, "agents", "managed", "dsn", "clients", "label", "engine-version", "profile", "profiles-dir",
		"cache-dir", "keep", "workdir", "class")
	per, extra := cfg.Clients/f.agents, cfg.Clients%f.agents
	var jobs []fleet.JobArgs
	offset := 0
	for i := 1; i <= f.agents; i++ {
		n := per
		if i <= extra {
			n++
		}
		argv := append(append([]string(nil), base...), "--dsn="+dsnArg, "--clients="+strconv.Itoa(n),
			"--client-offset="+strconv.Itoa(offset), fmt.Sprintf("--part=%s/%d/%d", key, i, f.agents),
			fmt.Sprintf("--label=%s/part-%d", cfg.Label, i))
		offset += n
		jobs = append(jobs, fleet.JobArgs{Argv: argv, Class: f.q.class, Part: fmt.Sprintf("%s/%d/%d", key, i, f.agents)})
	}
	got, err := fl.Enqueue(ctx, jobs)
	if err != nil {
		return err
	}
	ids := make([]int64, len(got))
	for i, g := range got {
		ids[i] = g.ID
	}
	if !cfg.Quiet {
		fmt.Fprintf(env.Out, "run %s: %d clients over %d agents of %s (jobs %s); waiting for them\n", report.Printable(cfg.Label),
			cfg.Clients, f.agents, className(f.q.class), joinIDs(ids))
	}
	done, err := waitJobs(ctx, fl, ids)
	if err != nil {
		for _, id := range ids {
			_, _ = fl.Cancel(context.WithoutCancel(ctx), id)
		}
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("interrupted: the parts' jobs %s are cancelled", joinIDs(ids))}
	}
	// A part is tried once (fleet.JobArgs.Part): one whose job did not complete (its
	// agent died, its command failed) has the run its attempt left marked failed, as a
	// retry would have, and the merged run says so.
	var partial []string
	for i, j := range done {
		if j.State == "completed" {
			continue
		}
		why := fmt.Sprintf("part %d (job %d) %s: its one attempt did not finish (its agent died or stopped, or its command failed), and a part is never retried, the others having gone on without it", i+1, j.ID, j.State)
		if len(j.Errors) > 0 {
			why += fmt.Sprintf(" (queue: %s)", strings.TrimRight(j.Errors[len(j.Errors)-1], "; "))
		}
		if _, err := st.FailJobRuns(ctx, j.ID, j.Attempt+1, why, time.Now()); err != nil {
			return err
		}
		partial = append(partial, why)
	}
	runsOf, err := st.JobRuns(ctx, ids)
	if err != nil {
		return err
	}
	var partIDs []int64
	var problems []string
	for i, j := range done {
		var ok int64
		for _, r := range runsOf[j.ID] {
			if r.Status == store.RunOK || r.Status == store.RunFailed {
				ok = r.RunID
			}
		}
		if ok == 0 {
			problems = append(problems, fmt.Sprintf("part %d (job %d): %s, no finished run", i+1, j.ID, j.State))
			continue
		}
		partIDs = append(partIDs, ok)
	}
	if len(problems) > 0 {
		return &exitError{code: ExitStepFailed, err: fmt.Errorf("run %s: %s; nothing merged", cfg.Label, strings.Join(problems, "; "))}
	}
	parts, err := st.Results(ctx, partIDs)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	merged, err := mergeParts(parts, cfg.Label, host, settings, done)
	if err != nil {
		return err
	}
	if len(partial) > 0 {
		merged.Status = store.RunFailed
		if p := merged.Env[envAgentsPartial]; p != "" {
			partial = append(partial, p)
		}
		merged.Env[envAgentsPartial] = strings.Join(partial, "; ")
	}
	id, _, err := st.Import(ctx, merged)
	if err != nil {
		return err
	}
	if !cfg.Quiet {
		runs, err := st.Results(ctx, []int64{id})
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Out, "\nrun %d: the %d parts' runs (%s) merged\n", id, len(parts), joinIDs(partIDs))
		if err := renderReportText(env.Out, report.Build(runs)); err != nil {
			return err
		}
	}
	if merged.Status != store.RunOK {
		why := "a part's step failed"
		if p := merged.Env[envAgentsPartial]; p != "" {
			why = "not whole: " + p
		}
		return &exitError{code: ExitStepFailed, err: fmt.Errorf("run %d: %s", id, why)}
	}
	return nil
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// waitJobs waits until every job is done and returns them in ids' order.
func waitJobs(ctx context.Context, fl *fleet.Fleet, ids []int64) ([]fleet.Job, error) {
	for {
		js, err := fl.Jobs(ctx, "")
		if err != nil {
			return nil, err
		}
		byID := map[int64]fleet.Job{}
		for _, j := range js {
			byID[j.ID] = j
		}
		out := make([]fleet.Job, 0, len(ids))
		for _, id := range ids {
			if j, ok := byID[id]; ok && j.Done() {
				out = append(out, j)
			}
		}
		if len(out) == len(ids) {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// mergeParts merges the parts' runs, which ran the same steps at the same time on one
// server, into one run: per step the labels' counts summed and their percentiles from the
// merged histograms (metrics.MergeLabels), intervals summed by index (an interval's
// percentiles are the highest part's: intervals keep no histograms), client CPU summed
// (each host's in the step's note), connection CPU summed per role, the machine and
// server figures (HW) of the part on the server's host (with the client CPU of every part
// on that host), else of the part on the coordinator's host, else none (the step's note
// says why); the per-op figures are computed again from those.
func mergeParts(parts []store.Run, label, host string, settings map[string]string, jobs []fleet.Job) (store.Run, error) {
	first := parts[0]
	m := store.Run{RunMeta: first.RunMeta, Status: store.RunOK}
	m.Label = label
	m.Origin = randomHex(16)
	m.Params = maps.Clone(first.Params)
	m.Env = maps.Clone(first.Env)
	m.EngineSettings = maps.Clone(first.EngineSettings)
	maps.Copy(m.EngineSettings, settings)
	for _, k := range []string{store.EnvQueueJob, store.EnvQueueAttempt, store.EnvAgent, envPartOf, envPart} {
		delete(m.Env, k)
	}
	// The server's host: a part that saw the server's processes (it ran on the server's
	// host) measured the machine and the server; without one, the part on the
	// coordinator's host, whose server figures are then absent as its own are.
	local := -1
	for i, p := range parts {
		if len(p.Steps) > 0 && p.Steps[0].Result.HW != nil && p.Steps[0].Result.HW.Server.Known {
			local = i
			break
		}
	}
	clients := 0
	var desc []string
	for i, p := range parts {
		h := p.Env["hostname"]
		if local < 0 && h == host {
			local = i
		}
		n, _ := intParam(p.Params["clients"])
		clients += n
		desc = append(desc, fmt.Sprintf("part %d: run %d, %d clients on %s (agent %s)", i+1, p.ID, n, h, p.Env[store.EnvAgent]))
		if p.StartedAt.Before(m.StartedAt) {
			m.StartedAt = p.StartedAt
		}
		if p.FinishedAt.After(m.FinishedAt) {
			m.FinishedAt = p.FinishedAt
		}
		if p.Status != store.RunOK {
			m.Status = store.RunFailed
		}
		if len(p.Steps) != len(first.Steps) {
			return m, fmt.Errorf("merge: part %d ran %d steps, part 1 %d", i+1, len(p.Steps), len(first.Steps))
		}
	}
	m.Params["clients"] = clients
	m.Params["agents"] = len(parts)
	m.Env[envAgents] = strings.Join(desc, "; ")
	if len(jobs) > 0 && jobs[0].Args.Class != "" {
		m.Env[store.EnvAgentClass] = jobs[0].Args.Class
	}
	var apart []string
	for s := range first.Steps {
		step, err := mergeStep(parts, s, local)
		if err != nil {
			return m, err
		}
		if why := apartWhy(parts, s); why != "" {
			// Parts that did not run the step together are no measurement of the run.
			step.Result.Status, step.Result.Error = metrics.StatusFailed, why
			apart = append(apart, why)
		}
		if step.Result.Status != metrics.StatusOK && step.Result.Status != metrics.StatusSkipped {
			m.Status = store.RunFailed
		}
		m.Steps = append(m.Steps, step)
	}
	if len(apart) > 0 {
		m.Env[envAgentsPartial] = strings.Join(apart, "; ")
	}
	return m, nil
}

// apartWhy says why the parts' step s was not run together, "" when it was (or when a
// part's step did not run: its own status says so): a part's load started without the
// barrier (its note says why), or after another part's had ended.
func apartWhy(parts []store.Run, s int) string {
	var lastStart, firstEnd time.Time
	late, early := 0, 0
	for i, p := range parts {
		st := p.Steps[s].Result
		if st.Status != metrics.StatusOK {
			return ""
		}
		if _, after, ok := strings.Cut(st.Note, "agents barrier: "); ok {
			return fmt.Sprintf("part %d's %s did not start with the other parts' (agents barrier: %s)", i+1, st.Name, after)
		}
		end := st.StartedAt.Add(time.Duration(st.Seconds * float64(time.Second)))
		if i == 0 || st.StartedAt.After(lastStart) {
			lastStart, late = st.StartedAt, i
		}
		if i == 0 || end.Before(firstEnd) {
			firstEnd, early = end, i
		}
	}
	if lastStart.After(firstEnd) {
		return fmt.Sprintf("part %d's %s started at %s, after part %d's had ended (%s): the parts never ran it together",
			late+1, parts[late].Steps[s].Result.Name, lastStart.UTC().Format("15:04:05.000"), early+1, firstEnd.UTC().Format("15:04:05.000"))
	}
	return ""
}

func mergeStep(parts []store.Run, s, local int) (store.Step, error) {
	first := parts[0].Steps[s]
	out := store.Step{Seq: first.Seq, Group: first.Group}
	r := first.Result
	r.Labels, r.ClientCPUSec, r.ConnCPU, r.HW, r.Metrics = nil, 0, nil, nil, nil
	var labels [][]metrics.LabelStats
	var notes, cpu, audits []string
	conn := map[string]*metrics.ConnCPU{}
	var roles []string
	for i, p := range parts {
		st := p.Steps[s].Result
		if st.Name != r.Name {
			return out, fmt.Errorf("merge: part %d's step %d is %s, part 1's %s", i+1, s+1, st.Name, r.Name)
		}
		labels = append(labels, st.Labels)
		r.ClientCPUSec += st.ClientCPUSec
		cpu = append(cpu, fmt.Sprintf("%s %.2f s", p.Env["hostname"], st.ClientCPUSec))
		if st.StartedAt.Before(r.StartedAt) {
			r.StartedAt = st.StartedAt
		}
		r.Seconds = max(r.Seconds, st.Seconds)
		r.DBSizeBytes, r.DBSizeKnown = max(r.DBSizeBytes, st.DBSizeBytes), r.DBSizeKnown || st.DBSizeKnown
		if st.Status != metrics.StatusOK && r.Status == metrics.StatusOK {
			r.Status, r.Error = st.Status, fmt.Sprintf("part %d: %s", i+1, st.Error)
		}
		// The merged audit is every part's (each part audits its own clients' tables).
		if st.Audit.Status != "ok" && r.Audit.Status == "ok" {
			r.Audit.Status = st.Audit.Status
		}
		if st.Audit.Detail != "" {
			audits = append(audits, fmt.Sprintf("part %d: %s", i+1, st.Audit.Detail))
		}
		if st.Note != "" {
			notes = append(notes, fmt.Sprintf("part %d: %s", i+1, st.Note))
		}
		for _, c := range st.ConnCPU {
			if conn[c.Role] == nil {
				conn[c.Role] = &metrics.ConnCPU{Role: c.Role}
				roles = append(roles, c.Role)
			}
			conn[c.Role].Sessions += c.Sessions
			conn[c.Role].CPUSec += c.CPUSec
		}
	}
	r.Audit.Detail = strings.Join(audits, "; ")
	var err error
	if r.Labels, err = metrics.MergeLabels(labels); err != nil {
		return out, fmt.Errorf("merge step %s: %w", r.Name, err)
	}
	for _, role := range roles {
		r.ConnCPU = append(r.ConnCPU, *conn[role])
	}
	if local >= 0 {
		if hw := parts[local].Steps[s].Result.HW; hw != nil {
			h := *hw
			// The machine's other dbperf processes are clients of this run, not noise.
			for i, p := range parts {
				if ph := p.Steps[s].Result.HW; i != local && ph != nil && p.Env["hostname"] == parts[local].Env["hostname"] {
					h.Client.CPUSec += ph.Client.CPUSec
					h.Client.PeakMemBytes = max(h.Client.PeakMemBytes, ph.Client.PeakMemBytes)
				}
			}
			r.HW = &h
		}
	}
	if r.HW == nil {
		notes = append(notes, "no machine or server figures: no part ran on the server's host or the coordinator's")
	}
	notes = append(notes, "client CPU by host: "+strings.Join(cpu, ", "))
	r.Note = strings.Join(notes, "; ")
	r.Metrics = r.Efficiency()
	maps.Copy(r.Metrics, r.Noise())
	out.Result = r
	out.Intervals = mergeIntervals(parts, s, local)
	return out, nil
}

// mergeIntervals sums the parts' intervals by index: counts add up, an interval's
// percentiles are the highest part's, its HW the local part's.
func mergeIntervals(parts []store.Run, s, local int) []metrics.Interval {
	var out []metrics.Interval
	for i, p := range parts {
		for k, iv := range p.Steps[s].Intervals {
			if k >= len(out) {
				c := iv
				c.Labels, c.HW, c.ClientCPUSec, c.Metrics = nil, nil, 0, nil
				out = append(out, c)
			}
			o := &out[k]
			o.ClientCPUSec += iv.ClientCPUSec
			if i == local {
				o.HW, o.Metrics = iv.HW, iv.Metrics
			}
			for _, l := range iv.Labels {
				j := slices.IndexFunc(o.Labels, func(x metrics.LabelStats) bool { return x.Label == l.Label })
				if j < 0 {
					o.Labels = append(o.Labels, l)
					continue
				}
				x := &o.Labels[j]
				x.Statements += l.Statements
				x.Events += l.Events
				x.Rows += l.Rows
				x.Errors += l.Errors
				x.Late += l.Late
				x.Missed += l.Missed
				x.TargetPerSec += l.TargetPerSec
				x.Service = maxLatency(x.Service, l.Service)
				x.Response = maxLatency(x.Response, l.Response)
			}
		}
	}
	return out
}

func maxLatency(a, b metrics.Latency) metrics.Latency {
	return metrics.Latency{P50: max(a.P50, b.P50), P90: max(a.P90, b.P90), P99: max(a.P99, b.P99),
		P999: max(a.P999, b.P999), P9999: max(a.P9999, b.P9999), Max: max(a.Max, b.Max)}
}

// openPartBarrier opens the queue of cfg's store for a part's barrier.
func openPartBarrier(ctx context.Context, cfg *config.Run) (*probe.Barrier, func(), error) {
	ps, err := parsePart(cfg.Part)
	if err != nil {
		return nil, nil, badInput(err)
	}
	if !store.IsPostgres(cfg.ResultsPath) {
		return nil, nil, badInput(errors.New("--part: a part's barrier lives in a PostgreSQL results store"))
	}
	b, err := probe.OpenBarrier(ctx, probe.BarrierOptions{DSN: cfg.ResultsPath, Key: ps.key, Part: ps.i, Parts: ps.n, Timeout: 5 * time.Minute})
	if err != nil {
		return nil, nil, err
	}
	return b, b.Close, nil
}
