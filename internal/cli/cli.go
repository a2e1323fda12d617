// Package cli is dbperf's command line: cobra commands whose flags become a config.Run,
// validated all at once; bad input is one line per problem and exit status 2. It is the
// top of the flow and the only package that wires the others together. Run is testable:
// it takes its streams, environment and arguments and returns the exit status.
//
// # Commands and files
//
// `dbperf run` (run.go) and `dbperf sweep` (sweep.go) have one subcommand per workload of
// the catalog, so adding a workload touches no cli code; the others are `history`,
// `report`, `runs`, `compare`, `explain`, `server`, `clean`, `queue`, `agent`, `serve`
// and `results`. The flags of a run become a config.Run and a session.Options
// (sessionOptions); a run is then session.Repeat (internal/session: the target opened,
// the steps run, the record kept), a sweep sweep.Run over the points planSweep expanded
// (internal/sweep: the sequential, interleaved and duet designs). The files beside them:
//
//   - record.go: the store-writing options of a command's runs (internal/record).
//   - explain.go: `dbperf explain`, the CPU profiles, statements, plans and waits of two
//     configs (report.LoadExplain).
//   - clients.go: --clients, one count for run, a list (the concurrency axis) for sweep.
//   - queue.go: --queue and --class, `dbperf queue`, `sweep --label L --wait`.
//   - agent.go: `dbperf agent`: its flags, then fleet.Follow (the agent on its store,
//     each job's command dbperf itself in a process of its own: fleet.RunCommand).
//   - agents.go: `run --agents N`: its flags and printing; the server the parts share is
//     session.StartShared, the parts, their barrier (a runner.Profiler) and the merge of
//     their runs are internal/fleet/parts'.
//   - cgroup.go: --server-memory and --server-cpus, checked before anything starts with
//     the rest of the target (session.CheckTarget).
//   - cluster.go: --cluster, --node-latency, --node-jitter and --spread, and the sweep's
//     distance axis; the cluster itself is internal/cluster.
//   - workdir.go: `dbperf clean` and the check of a directory a flag names.
//
// Exit statuses: 0 when every step is ok, 1 when a step failed, 2 for bad input, 130
// when interrupted. asExit maps the domain's typed errors to them: session's
// BadInputError, StepFailedError and InterruptedError, and record.StoreFailedError (exit
// 1, or 130 after Ctrl-C). `report` and `compare` refuse configs that differ
// (checkComparable over report.Mismatches): exit 2, or a warning per difference with
// --force.
//
// Conventions: an operation's error fails its step (unlike the reference, which ignored
// them: reference §5.1); a failed step makes the following steps skipped, and the run
// exits 1. Stores are written with context.WithoutCancel, so Ctrl-C never loses
// measurements.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/fleet/sweepq"
	"github.com/dbperf/dbperf/internal/record"
	"github.com/dbperf/dbperf/internal/report/render"
	"github.com/dbperf/dbperf/internal/session"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit statuses (DESIGN.md "Contracts").
const (
	ExitOK         = 0
	ExitStepFailed = 1
	ExitBadInput   = 2
	// ExitRegression: dbperf history --fail-on-regression found a recent regression.
	ExitRegression  = 3
	ExitInterrupted = 130
)

// Env is the process state the commands use: streams, environment and build identity.
type Env struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// Getenv reads the environment (os.Getenv in main); nil reads nothing.
	Getenv func(string) string
	// IsTerminal says whether Out is a terminal (progress is shown only then).
	IsTerminal bool
	// Columns is the terminal's width when Out is one (0: unknown); $COLUMNS overrides it
	// (Env.columns).
	Columns int
	// Version and Commit identify the dbperf build (set by the Makefile's -ldflags).
	Version string
	Commit  string
}

// columns is how wide the text reports written to Out may be: $COLUMNS when it is a
// positive whole number, else the terminal's width when Out is one, else 80.
func (e Env) columns() int {
	if n, err := strconv.Atoi(strings.TrimSpace(e.getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	if e.IsTerminal && e.Columns > 0 {
		return e.Columns
	}
	return defaultColumns
}

// defaultColumns is the width of text reports written to a pipe or a file.
const defaultColumns = 80

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

// exitError carries an exit status with the message to print.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// badInput marks an error as the user's to fix: exit status 2.
func badInput(err error) error { return &exitError{code: ExitBadInput, err: err} }

// asExit is err's exit status and message: its exitError, else a domain error's mapped to
// its status (session's BadInputError, InterruptedError and StepFailedError; a
// *record.StoreFailedError or *sweepq.StoppedError: ExitInterrupted when interrupted,
// else ExitStepFailed; a *sweepq.UnmeasuredError: ExitStepFailed; a *fleet.OpenError:
// ExitBadInput); false for none.
func asExit(err error) (*exitError, bool) {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee, true
	}
	var bi *session.BadInputError
	if errors.As(err, &bi) {
		return &exitError{code: ExitBadInput, err: bi.Err}, true
	}
	var ie *session.InterruptedError
	if errors.As(err, &ie) {
		return &exitError{code: ExitInterrupted, err: ie.Err}, true
	}
	var failed *session.StepFailedError
	if errors.As(err, &failed) {
		return &exitError{code: ExitStepFailed, err: failed.Err}, true
	}
	var sf *record.StoreFailedError
	if errors.As(err, &sf) {
		code := ExitStepFailed
		if sf.Interrupted {
			code = ExitInterrupted
		}
		return &exitError{code: code, err: sf}, true
	}
	var stopped *sweepq.StoppedError
	if errors.As(err, &stopped) {
		code := ExitStepFailed
		if stopped.Interrupted {
			code = ExitInterrupted
		}
		return &exitError{code: code, err: stopped}, true
	}
	var um *sweepq.UnmeasuredError
	if errors.As(err, &um) {
		return &exitError{code: ExitStepFailed, err: um}, true
	}
	var oe *fleet.OpenError
	if errors.As(err, &oe) {
		return &exitError{code: ExitBadInput, err: oe.Err}, true
	}
	return nil, false
}

// Run runs dbperf with args (without the program name) and returns the exit status.
func Run(ctx context.Context, env Env, args []string) int {
	// The text reports (render.Text, CompareText, Bench) fit Out's width.
	env.Out = render.Fit(env.Out, env.columns())
	root := newRoot(ctx, env)
	root.SetArgs(args)
	root.SetIn(env.In)
	root.SetOut(env.Out)
	root.SetErr(env.Err)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := ExitBadInput // cobra's own errors (unknown command or flag) are bad input
	if ee, ok := asExit(err); ok {
		code = ee.code
	}
	if code != ExitInterrupted || err.Error() != "" {
		for _, line := range strings.Split(strings.TrimSpace(err.Error()), "\n") {
			fmt.Fprintf(env.Err, "dbperf: %s\n", line)
		}
	}
	return code
}

func newRoot(ctx context.Context, env Env) *cobra.Command {
	workloads := catalog.WorkloadNames(nil)
	root := &cobra.Command{
		Use:   "dbperf",
		Short: "Run database benchmarks, keep every result, and report what got faster or slower",
		Long: `dbperf runs well-known database workloads (` + strings.Join(workloads, ", ") + `; dbperf run --help
says what each is) against real engines, measures throughput, latency, background-writer
SLAs and its own CPU per operation, stores every result in a results database, and
reports on them.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(env),
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return badInput(fmt.Errorf("%w (see %s --help)", err, c.CommandPath()))
	})
	defer hideEmptyDefaults(root)
	root.AddCommand(newRunCmd(env), newRunsCmd(env), newReportCmd(env), newCompareCmd(env), newHistoryCmd(env), newSweepCmd(env), newCleanCmd(env), newServerCmd(env), newServeCmd(env), newResultsCmd(env), newExplainCmd(env), newQueueCmd(env), newAgentCmd(env), newVersionCmd(env))
	return root
}

func versionString(env Env) string {
	v := env.Version
	if v == "" {
		v = "dev"
	}
	if env.Commit != "" {
		v += " (" + env.Commit + ")"
	}
	return v
}

func newVersionCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print dbperf's version and git commit",
		Example: "  dbperf version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(env.Out, "dbperf %s\n", versionString(env))
			return nil
		},
	}
}

// resultsPath resolves the results store: --results, then DBPERF_RESULTS, then the
// default. @FILE, either way, is the first line of FILE (as --dsn @FILE), so a team
// store's password need be neither on a command line nor in the environment. On an
// error it returns the value as given.
func resultsPath(flag string, env Env) (string, error) {
	what, v := "--results", flag
	if v == "" {
		what, v = "DBPERF_RESULTS", env.getenv("DBPERF_RESULTS")
	}
	if v == "" {
		return DefaultResults, nil
	}
	p, err := session.ReadAt(what, v)
	if err != nil {
		return v, err
	}
	return p, nil
}

// resultsUsage is the --results flag's help.
const resultsUsage = "results store: a SQLite file, postgres://user:pass@host/db or 'host=H user=U password=P dbname=DB', or @FILE to read either from FILE's first line (default $DBPERF_RESULTS or " + DefaultResults + ")"

// DefaultResults is the results store used when neither --results nor DBPERF_RESULTS is set.
const DefaultResults = "./dbperf-results.db"

// writeFileAtomic writes a file through a temporary file and a rename, so a failure
// never leaves half a report behind.
func writeFileAtomic(path string, write func(w io.Writer) error) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return badInput(fmt.Errorf("-o %s is a directory: name a file in it, e.g. -o %s", path, filepath.Join(path, "report.html")))
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".dbperf-*")
	if err != nil {
		return badInput(fmt.Errorf("cannot write %s (%w): pass another -o path", path, err))
	}
	tmp := f.Name()
	// Reports are for sharing: readable like any file the user writes (not CreateTemp's 0600).
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// hideEmptyDefaults keeps --help from printing "(default [])" for map flags whose default
// is empty (pflag knows list flags' empty default, not maps').
func hideEmptyDefaults(c *cobra.Command) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.DefValue == "[]" && strings.HasPrefix(f.Value.Type(), "stringTo") {
			f.DefValue = ""
		}
	})
	for _, sub := range c.Commands() {
		hideEmptyDefaults(sub)
	}
}
