package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/fleet/parts"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/render"
	"github.com/dbperf/dbperf/internal/session"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/workload"
)

// One run across several agents (dbperf run … --agents N, docs/fleet.md): the flags are
// checked here and the coordinator is wired here; the split into parts, their barrier and
// the merge of their runs are package parts' (internal/fleet/parts).

// checkAgents refuses what --agents cannot run, every problem at once.
func checkAgents(cmd *cobra.Command, cfg *config.Run, wl workload.Workload, eng engine.Engine, f *runFlags) error {
	var errs []string
	if f.agents < 2 {
		errs = append(errs, fmt.Sprintf("--agents %d: give 2 or more agents to share the run's clients", f.agents))
	}
	if !store.IsPostgres(cfg.ResultsPath) {
		errs = append(errs, "--agents: the agents take their parts from the queue in a PostgreSQL results store: give --results postgres://… (or @FILE, or DBPERF_RESULTS)")
	}
	if !wl.Meta().ClientsOwnTables {
		errs = append(errs, fmt.Sprintf("--agents: %s's clients share tables, so its setup cannot be split yet; --agents runs %s", wl.Meta().Name, strings.Join(catalog.WorkloadNames(ownTables), ", ")))
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
// queues the N parts, waits for them and merges their runs into one (parts.Coordinator).
func runAgents(ctx context.Context, env Env, cmd *cobra.Command, cfg *config.Run, wl workload.Workload, params workload.Params, eng engine.Engine, f *runFlags) error {
	if err := checkAgents(cmd, cfg, wl, eng, f); err != nil {
		return err
	}
	fl, st, err := openQueue(ctx, cfg.ResultsPath)
	if err != nil {
		return err
	}
	defer st.Close()
	defer fl.Close()
	idle, err := parts.Idle(ctx, fl, f.q.class)
	if err != nil {
		return err
	}
	if idle < f.agents {
		return badInput(fmt.Errorf("--agents %d: %d idle agents of %s; start more (dbperf agent --class %s) or wait for them (dbperf queue lists them)",
			f.agents, idle, className(f.q.class), orDash(f.q.class)))
	}
	if cfg.Label == "" {
		cfg.Label = strings.ReplaceAll(session.EngineLabel(cfg), "/", "-") + "-agents-" + time.Now().Format("20060102-150405")
	}
	srv, err := session.StartShared(ctx, sessionOptions(env, cfg, wl, params, eng, st))
	if err != nil {
		return err
	}
	defer srv.Stop()
	host, _ := os.Hostname()
	// The parts' command line: the run's own flags, less those of the server (the parts
	// use it as a --dsn server) and of the split, which each part gets its own of.
	co := parts.New(fl, st, parts.Options{Agents: f.agents, Clients: cfg.Clients, Class: f.q.class, Label: cfg.Label,
		Args: commandArgs(cmd, "agents", "managed", "dsn", "clients", "label", "engine-version", "profile", "profiles-dir",
			"cache-dir", "keep", "workdir", "class"),
		DSN: srv.DSN, Settings: srv.Settings, Host: host})
	ids, err := co.Enqueue(ctx)
	if err != nil {
		return err
	}
	if !cfg.Quiet {
		fmt.Fprintf(env.Out, "run %s: %d clients over %d agents of %s (jobs %s); waiting for them\n", report.Printable(cfg.Label),
			cfg.Clients, f.agents, className(f.q.class), joinIDs(ids))
	}
	res, err := co.Finish(ctx)
	var unmerged *parts.UnmergedError
	switch {
	case errors.Is(err, parts.ErrInterrupted):
		return &exitError{code: ExitInterrupted, err: err}
	case errors.As(err, &unmerged):
		return &exitError{code: ExitStepFailed, err: err}
	case err != nil:
		return err
	}
	if !cfg.Quiet {
		runs, err := st.Results(ctx, []int64{res.ID})
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Out, "\nrun %d: the %d parts' runs (%s) merged\n", res.ID, len(res.Parts), joinIDs(res.Parts))
		if err := render.Text(env.Out, report.Build(runs)); err != nil {
			return err
		}
	}
	if err := res.Err(); err != nil {
		return &exitError{code: ExitStepFailed, err: err}
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

// ownTables says a workload's clients own their tables (workload.Meta.ClientsOwnTables),
// so parts of one run share the server without touching each other's data.
func ownTables(m workload.Meta) bool { return m.ClientsOwnTables }
