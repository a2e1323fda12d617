// Package enginetest is the conformance suite of dbperf's SQL engines and the helpers their
// tests share. Every engine package (engine/sqlite, engine/postgres, engine/mariadb for
// InnoDB and MyRocks) calls Run from one test with a function opening a handle on its
// engine (the embedded database in a temporary directory, or the package's managed
// server) and the few things that differ between engines (Options); the cases themselves
// — open, Info and Size, sessions, prepared statements and their arguments, Session.Exec,
// cancellation, and every Dialect statement executed for real — are one table here, so
// that an engine passes the same checks as the others or the difference is written down
// in its Options. Dialect's capability flags (DeleteOrderLimit, AutoIncrementGaps) are
// not checked here: the statements and rules built from them are the workloads', tested
// there on every engine.
//
// It is an ordinary package used only by tests, like internal/browsertest: nothing in
// dbperf imports it. It uses real engines only. Beside Run it holds the helpers the
// engines' tests share: NewSession, MustExec, Prepare and QueryInt.
package enginetest

import (
	"context"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
)

// Options are what the suite needs to know about an engine beyond engine.SQL.
type Options struct {
	// Slow is a query with one integer argument n that returns one row after running for
	// about n seconds, unless it is interrupted: the cancellation case runs it with 0 under
	// a live context, then with 30 under a context cancelled, or past its deadline, after a
	// moment ("SELECT pg_sleep($1)", "SELECT SLEEP(?)", a long recursive count on SQLite).
	Slow string
	// StmtNotInterrupted says that a cancelled context does not interrupt the engine's
	// prepared statements, by design (SQLite's run in-process for milliseconds, see
	// drvconn.Options.Interrupt): the cancellation case then checks Session.Exec only.
	StmtNotInterrupted bool
	// AfterCancel, when set, checks the engine after a statement was cancelled (PostgreSQL:
	// the server does not keep running it).
	AfterCancel func(t *testing.T, h engine.SQL)
	// IndexExists is a query with two text arguments, a table's and an index's name, that
	// returns the number of indexes of that name on that table (0 or 1), from the engine's
	// catalog.
	IndexExists string
	// PlanIndex, when set, returns the index through which the engine's plan of query (a
	// SELECT without arguments) reads its table ("" for none): the suite checks that
	// FromIndex's hint makes a query read through the named index.
	PlanIndex func(t *testing.T, s engine.Session, query string) string
	// Known lists the engine's known defects: a check of the suite by name (CheckEmptyText,
	// …) and why it fails. Such a check is logged instead of failing, and fails once it
	// passes, so that the entry is removed with the fix.
	Known map[string]string
}

// Run runs the conformance suite, one subtest per case. open returns a new handle on the
// engine under test each time it is called and closes it when the test ends (t.Cleanup);
// handles on a server share its database, so the cases use tables of their own (named
// ct_…), dropped before and after use. The engine runs on this machine (Info's DataDir is
// checked here).
func Run(t *testing.T, open func(t *testing.T) engine.SQL, opts Options) {
	t.Helper()
	if opts.Slow == "" || opts.IndexExists == "" {
		t.Fatal("enginetest.Options: Slow and IndexExists are required")
	}
	for name := range opts.Known {
		if !checks[name] {
			t.Fatalf("enginetest.Options.Known: no check is named %q", name)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, &env{open: open, opts: opts})
		})
	}
}

// env is what a case runs against.
type env struct {
	open func(t *testing.T) engine.SQL
	opts Options
}

// check reports one check of the suite by name: a failure unless ok, or a log line when the
// engine's Options.Known lists it.
func (e *env) check(t *testing.T, name string, ok bool, format string, args ...any) {
	t.Helper()
	why, known := e.opts.Known[name]
	switch {
	case known && ok:
		t.Errorf("known defect %s (%s) no longer shows: remove it from Options.Known", name, why)
	case known:
		t.Logf("known defect %s (%s): "+format, append([]any{name, why}, args...)...)
	case !ok:
		t.Errorf(format, args...)
	}
}

// NewSession opens a session on h; it is closed, and the close checked, when the test ends.
func NewSession(t testing.TB, h engine.SQL) engine.Session {
	t.Helper()
	s, err := h.NewSession(context.Background())
	if err != nil {
		t.Fatalf("new session: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close session: %v", err)
		}
	})
	return s
}

// MustExec runs q with args through Session.Exec and returns the rows it affected; an error
// fails the test.
func MustExec(t testing.TB, s engine.Session, q string, args ...any) int64 {
	t.Helper()
	n, err := s.Exec(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("exec %s: %v", q, err)
	}
	return n
}

// Prepare prepares q on s; the statement is closed, and the close checked, when the test
// ends (before the session, whose cleanup was registered earlier).
func Prepare(t testing.TB, s engine.Session, q string) engine.Stmt {
	t.Helper()
	st, err := s.Prepare(context.Background(), q)
	if err != nil {
		t.Fatalf("prepare %s: %v", q, err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close statement %s: %v", q, err)
		}
	})
	return st
}

// QueryInt prepares q, runs it with args (integers, strings or nil, as engine.NewArgs
// takes them) through Stmt.QueryInt and closes it: the value and whether it is valid (not
// NULL, a row came back). An error fails the test.
func QueryInt(t testing.TB, s engine.Session, q string, args ...any) (int64, bool) {
	t.Helper()
	ctx := context.Background()
	st, err := s.Prepare(ctx, q)
	if err != nil {
		t.Fatalf("prepare %s: %v", q, err)
	}
	v, ok, err := st.QueryInt(ctx, engine.NewArgs(args...))
	if cerr := st.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("query %s %s: %v", q, engine.NewArgs(args...), err)
	}
	return v, ok
}
