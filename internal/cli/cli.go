// Package cli is dbperf's command line: cobra commands whose flags become a config.Run,
// validated all at once; bad input is one line per problem and exit status 2. It is the
// top of the flow and the only package that wires the others together. Run is testable:
// it takes its streams, environment and arguments and returns the exit status.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/record"
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
	// Version and Commit identify the dbperf build (set by the Makefile's -ldflags).
	Version string
	Commit  string
}

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
// its status (a *record.StoreFailedError: ExitInterrupted when the run had been
// interrupted, else ExitStepFailed); false for neither.
func asExit(err error) (*exitError, bool) {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee, true
	}
	var sf *record.StoreFailedError
	if errors.As(err, &sf) {
		code := ExitStepFailed
		if sf.Interrupted {
			code = ExitInterrupted
		}
		return &exitError{code: code, err: sf}, true
	}
	return nil, false
}

// Run runs dbperf with args (without the program name) and returns the exit status.
func Run(ctx context.Context, env Env, args []string) int {
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
	var workloads []string
	for _, w := range catalog.Workloads() {
		workloads = append(workloads, w.Meta().Name)
	}
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
	p, err := readAt(what, v)
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
