// Package store is the results store: the disk end of the flow. The runner writes each run
// through the writer methods (BeginRun, BeginStep, AppendIntervals, FinishStep, FinishRun),
// one transaction per call, so a killed run loses at most one interval; `dbperf runs`,
// reports and stats read it back through the reader methods (Runs, Results) and never
// touch an engine. A SQLite store is one file (WAL, so a reader can look while a run
// writes) whose schema is versioned with PRAGMA user_version and migrated forward on open.
//
// The writer has BeginStep besides BeginRun, AppendIntervals, FinishStep and FinishRun,
// so intervals reference a step row that exists from the step's first tick, and a killed
// run's unfinished step is read back as interrupted, with its intervals. Derived metrics
// are stored in step_metrics beside the raw counters (step_hw), and a report never
// recomputes them.
//
// The store reads in bulk. Results runs one query per table for all requested runs (the
// ids passed as one JSON array to json_each), so a report over 1,000 runs costs a fixed
// number of queries (BenchmarkReport1000Runs). Reads go through Store.snapshot
// (bulk.go): one transaction per read, so a run read while it is written is whole up to
// its last interval.
//
// # One store, two databases
//
// A results store is a SQLite file or a PostgreSQL database (--results postgres://…,
// pgx's database/sql driver: the store is not a hot path, and database/sql lets both
// share every query). Every query and migration is written once, for SQLite, with ?
// placeholders; dialect.go is the one place that says how PostgreSQL differs:
// placeholders rebound to $n (wrappers around *sql.DB, *sql.Tx and *sql.Stmt);
// INTEGER, REAL and AUTOINCREMENT in the migrations as BIGINT, DOUBLE PRECISION and
// identity; json_extract as ->>; json_each as json_array_elements_text; rowid as ctid;
// Go bools as 0/1. The schema version is PRAGMA user_version on SQLite and a one-row
// dbperf_schema table on PostgreSQL, where migrations run under pg_advisory_xact_lock so
// processes opening a new store at once do not race. New ids come from RETURNING id on
// both. The store's tests run on both (backends() in its tests, with a throwaway
// PostgreSQL from TestMain).
//
// runs.origin (schema 7) is a run's identity across stores (Import, `dbperf results
// copy`), unique since schema 8. Import writes a run in one transaction (the writer's
// methods on a Store bound to it, Store.tx) after claiming its origin (SQLite's write
// lock, taken at BEGIN IMMEDIATE, or PostgreSQL's pg_advisory_xact_lock on a hash of the
// origin) and looking it up, so a killed copy leaves nothing, readers never see a half
// run, and concurrent copies add a run once. runs.host lets a reader leave a running run
// of another host alone instead of judging its process dead (the liveness of running
// runs).
//
// # Schema versions
//
//   - v2: step_hw, interval_hw, step_conn_cpu, step_metrics, steps.db_size_bytes.
//   - v3: cpu_elapsed_sec, cpu_tasks_sec.
//   - v4: step groups.
//   - v5: event_count per label.
//   - v6: p9999_us per label; interval_metrics, an engine's named figures per interval.
//   - v7: runs.origin (a run's identity across stores, Import for `dbperf results copy`)
//     and runs.host.
//   - v8: one run per origin, a unique index, after deleting the half runs and extra
//     copies older copies left.
//   - v9: step_profiles, a step's CPU profiles per role (folded stacks gzip-compressed,
//     samples, distinct stacks, perf's event and rate): PutStepProfiles, read by Results
//     into Step.Profiles.
//   - v10: step_statements (per statement shape, the difference of the server's counters
//     over the step, and its plan) and step_waits (wait samples per role and wait
//     class): PutStepDiag, read into Step.Statements and Step.Waits.
//   - v11: step_label_hists, a step's latency histograms per label, written by
//     FinishStep from LabelStats.Hist.
//   - v12: step_statements.custom_plan and custom_plan_note (a statement's custom plan
//     and the parameters it used).
//
// # Other files
//
// params.go: the sweep's stored keys and design names, defined once for the writer and
// the reports. jobs.go: JobRuns and FailJobRuns, the runs of queued jobs by their env's
// queue_job. redact.go: RedactDSN and RedactError mask a DSN's passwords in every form
// (URL userinfo, password= and sslpassword= in a query, key=value) wherever a DSN or a
// driver's error is printed, stored or served; the cli's RedactDSN is this one.
// browse.go: Browse, the runs page of `dbperf serve`, filtered and paged in SQL.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	// The drivers register themselves: "pgx" (a PostgreSQL store), "sqlite3".
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/mattn/go-sqlite3"
)

// busyTimeoutMS is how long a statement waits for another connection's lock (a reader
// while a run writes, or two runs sharing a file) before failing.
const busyTimeoutMS = 5000

// Store is an open results store. Its methods are safe for concurrent use.
type Store struct {
	db   sqlDB
	path string
	// tx, when set, is the one transaction every write of this Store joins (see inTx): a
	// Store bound to it by Import, which writes a whole run or nothing.
	tx *sqlTx
}

// SchemaTooNewError says the file was written by a newer dbperf than this one.
type SchemaTooNewError struct {
	Path         string
	FileVersion  int
	KnownVersion int
}

// Error implements error.
func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("results store %s has schema version %d but this dbperf knows up to %d: upgrade dbperf or use another --results file",
		e.Path, e.FileVersion, e.KnownVersion)
}

// Open opens the results store at path for `dbperf run`, creating the file if it is missing
// and migrating it forward. The directory must exist and be writable. A file written by a
// newer dbperf is left untouched and reported as *SchemaTooNewError.
func Open(ctx context.Context, path string) (*Store, error) {
	if IsPostgres(path) {
		return openPostgres(ctx, path, true)
	}
	abs, err := absPath(path)
	if err != nil {
		return nil, err
	}
	if err := checkDirWritable(path, filepath.Dir(abs)); err != nil {
		return nil, err
	}
	fi, statErr := os.Stat(abs)
	if statErr == nil && fi.IsDir() {
		return nil, fmt.Errorf("results store %s is a directory: pass a file path to --results", path)
	}
	s, err := open(ctx, path, abs, "rwc")
	if err != nil && errors.Is(statErr, fs.ErrNotExist) {
		// Leave nothing behind that this call created (a full disk leaves a 0-byte file).
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			_ = os.Remove(abs + suffix)
		}
	}
	return s, err
}

// OpenExisting opens an existing results store for reading (`dbperf runs`, `dbperf report`).
// It never creates a file and needs no write access: the file is opened read-only, and
// immutable when even the read-only WAL index cannot be made (a read-only medium, another
// user's directory). Only a file of an older schema is opened for writing, once, to be
// migrated forward like Open does; an empty file is no store and is left as it is.
func OpenExisting(ctx context.Context, path string) (*Store, error) {
	if IsPostgres(path) {
		return openPostgres(ctx, path, false)
	}
	abs, err := absPath(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("no results store at %s: run \"dbperf run\" first or pass --results / DBPERF_RESULTS", path)
	case err != nil:
		return nil, fmt.Errorf("results store %s: %w", path, err)
	case fi.IsDir():
		return nil, fmt.Errorf("results store %s is a directory: pass a file path to --results", path)
	}
	s, v, err := openReadOnly(ctx, path, abs)
	if err != nil {
		return nil, err
	}
	if v == SchemaVersion {
		return s, nil
	}
	_ = s.db.Close()
	if v == 0 {
		// An empty file (or an SQLite database without tables) holds no store: reading
		// it must not write the schema into it.
		return nil, fmt.Errorf("no results store in %s: the file is empty; run \"dbperf run --results %s\" first, or pass another --results", path, path)
	}
	rw, err := open(ctx, path, abs, "rw")
	if err != nil && v < SchemaVersion {
		return nil, fmt.Errorf("results store %s has schema version %d, older than this dbperf's %d, and bringing it forward needs write access once: %w",
			path, v, SchemaVersion, err)
	}
	return rw, err
}

// openReadOnly opens the file read-only and reads its schema version: plain read-only
// first (it sees a run's writes as they happen), then immutable.
func openReadOnly(ctx context.Context, path, abs string) (*Store, int, error) {
	var firstErr error
	for _, mode := range []string{"ro", "ro&immutable=1"} {
		dsn := fmt.Sprintf("file:%s?mode=%s&_busy_timeout=%d", (&url.URL{Path: abs}).EscapedPath(), mode, busyTimeoutMS)
		db, err := sql.Open("sqlite3", dsn)
		if err != nil {
			return nil, 0, fmt.Errorf("results store %s: %w", path, err)
		}
		s := &Store{db: sqlDB{DB: db}, path: path}
		v, err := s.userVersion(ctx, s.db)
		if err == nil && v == 0 {
			err = s.checkOurs(ctx)
		}
		if err == nil {
			return s, v, nil
		}
		_ = db.Close()
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, 0, firstErr
}

// Path is the path the store was opened with.
func (s *Store) Path() string { return s.path }

// Close closes the store.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("store: close %s: %w", s.path, err)
	}
	return nil
}

func absPath(path string) (string, error) {
	if path == "" {
		return "", errors.New("results store: empty path: pass --results or set DBPERF_RESULTS")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("results store %s: %w", path, err)
	}
	return abs, nil
}

// checkDirWritable fails with a message saying what to do when dir is missing, not a
// directory, or not writable (SQLite also needs it for the -wal and -shm files).
func checkDirWritable(path, dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("results store %s: directory %s does not exist: create it or pass another --results", path, dir)
	case err != nil:
		return fmt.Errorf("results store %s: directory %s: %w", path, dir, err)
	case !fi.IsDir():
		return fmt.Errorf("results store %s: %s is not a directory: pass another --results", path, dir)
	}
	f, err := os.CreateTemp(dir, ".dbperf-write-check-*")
	if err != nil {
		return fmt.Errorf("results store %s: directory %s is not writable (%w): pass another --results", path, dir, err)
	}
	name := f.Name()
	if err := f.Close(); err != nil {
		_ = os.Remove(name)
		return fmt.Errorf("results store %s: directory %s: %w", path, dir, err)
	}
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("results store %s: directory %s: %w", path, dir, err)
	}
	return nil
}

// open connects with mode rwc (create) or rw (must exist), checks the schema version
// before anything may write, then switches to WAL and migrates.
func open(ctx context.Context, path, abs, mode string) (*Store, error) {
	// A file: URI so that SQLite honours mode; the path is escaped so '?' or '#' in it
	// cannot be read as URI syntax. _txlock=immediate makes every transaction take the write
	// lock up front (waiting up to the busy timeout) instead of failing on lock upgrade.
	dsn := fmt.Sprintf("file:%s?mode=%s&_busy_timeout=%d&_foreign_keys=1&_txlock=immediate",
		(&url.URL{Path: abs}).EscapedPath(), mode, busyTimeoutMS)
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("results store %s: %w", path, err)
	}
	s := &Store{db: sqlDB{DB: db}, path: path}
	if err := s.init(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// openPostgres connects to a PostgreSQL store through pgx's database/sql driver (the
// store is not a hot path: one transaction per interval; database/sql lets the SQLite
// and PostgreSQL stores share every query). create: make the schema in an empty
// database (dbperf run); otherwise a database without it is "no results store". The
// store's name in every message is the DSN without its password (RedactDSN), and no
// message it returns holds the password, whatever the driver's says.
func openPostgres(ctx context.Context, dsn string, create bool) (*Store, error) {
	s, err := openPostgresNamed(ctx, dsn, create)
	return s, RedactError(err, dsn)
}

func openPostgresNamed(ctx context.Context, dsn string, create bool) (*Store, error) {
	name := RedactDSN(dsn)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("results store %s: %w", name, err)
	}
	s := &Store{db: sqlDB{DB: db, d: postgresDialect}, path: name}
	fail := func(err error) (*Store, error) {
		_ = db.Close()
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		// pgx lists each address it tried on its own line: one line for the cli.
		msg := strings.ReplaceAll(strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " "), ":;", ":")
		return fail(fmt.Errorf("results store %s: %s", name, msg))
	}
	v, err := s.userVersion(ctx, s.db)
	if err != nil {
		return fail(err)
	}
	switch {
	case v > SchemaVersion:
		return fail(&SchemaTooNewError{Path: name, FileVersion: v, KnownVersion: SchemaVersion})
	case v == 0 && !create:
		return fail(fmt.Errorf("no results store in %s: run \"dbperf run --results %s\" first", name, name))
	case v == 0:
		if err := s.checkOurs(ctx); err != nil {
			// Another process may have created the schema since the version was read:
			// several dbperf processes opening a new store at once (a fleet's agents).
			// Its tables are dbperf's if its version is there now.
			v2, err2 := s.userVersion(ctx, s.db)
			if err2 != nil || v2 == 0 {
				return fail(err)
			}
			if v2 > SchemaVersion {
				return fail(&SchemaTooNewError{Path: name, FileVersion: v2, KnownVersion: SchemaVersion})
			}
			v = v2
		}
	}
	if v < SchemaVersion {
		if err := s.migrate(ctx); err != nil {
			return fail(err)
		}
	}
	return s, nil
}

func (s *Store) init(ctx context.Context) error {
	v, err := s.userVersion(ctx, s.db)
	if err != nil {
		return err
	}
	if v > SchemaVersion {
		return &SchemaTooNewError{Path: s.path, FileVersion: v, KnownVersion: SchemaVersion}
	}
	if v == 0 {
		// Refuse to add our tables to somebody else's database.
		if err := s.checkOurs(ctx); err != nil {
			// Another process may have created the schema since the version was read
			// (several runs opening a new store at once): its tables are dbperf's if its
			// version is there now.
			if v2, err2 := s.userVersion(ctx, s.db); err2 != nil || v2 == 0 {
				return err
			} else if v2 > SchemaVersion {
				return &SchemaTooNewError{Path: s.path, FileVersion: v2, KnownVersion: SchemaVersion}
			}
		}
	}
	// WAL lets `dbperf runs` read while a run writes. The mode is stored in the file, so
	// it is set once here rather than per connection.
	if err := s.setWAL(ctx); err != nil {
		return fmt.Errorf("results store %s: set WAL journal mode: %w", s.path, err)
	}
	if v < SchemaVersion {
		return s.migrate(ctx)
	}
	return nil
}

// setWAL puts the SQLite file in WAL mode, once. Changing the journal mode needs the file
// to itself, and SQLite answers "database is locked" at once rather than through the busy
// timeout when another process holds it (two runs opening a new store at the same moment,
// the other one creating the schema): the change is tried again until the busy timeout.
func (s *Store) setWAL(ctx context.Context) error {
	deadline := time.Now().Add(busyTimeoutMS * time.Millisecond)
	for {
		var journal string
		err := s.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&journal)
		if err == nil && strings.EqualFold(journal, "wal") {
			return nil
		}
		if err == nil {
			err = s.db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&journal)
		}
		if err == nil || !strings.Contains(err.Error(), "database is locked") || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) userVersion(ctx context.Context, q queryRower) (int, error) {
	var v int
	if s.db.d == postgresDialect {
		// A one-row table holds the version (PostgreSQL has no user_version).
		var exists bool
		if err := q.QueryRowContext(ctx, `SELECT to_regclass('dbperf_schema') IS NOT NULL`).Scan(&exists); err != nil {
			return 0, fmt.Errorf("results store %s: read schema version: %w", s.path, err)
		}
		if !exists {
			return 0, nil
		}
		if err := q.QueryRowContext(ctx, `SELECT COALESCE(max(version), 0) FROM dbperf_schema`).Scan(&v); err != nil {
			return 0, fmt.Errorf("results store %s: read schema version: %w", s.path, err)
		}
		return v, nil
	}
	if err := q.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("results store %s: read schema version (is it a dbperf results store?): %w", s.path, err)
	}
	return v, nil
}

// migrate applies the missing migrations in one transaction. The version is read again
// inside the transaction, which holds the write lock, so two processes opening the same
// file at once do not both migrate.
func (s *Store) migrate(ctx context.Context) error {
	scripts := migrations()
	if len(scripts) != SchemaVersion {
		return fmt.Errorf("store: %d migrations but SchemaVersion is %d", len(scripts), SchemaVersion)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("results store %s: begin migration: %w", s.path, err)
	}
	defer func() { _ = tx.Rollback() }()
	if s.db.d == postgresDialect {
		// Several dbperf processes may open a new store at once: one migrates, the
		// others wait for it here and then find the schema current.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7361730)`); err != nil {
			return fmt.Errorf("results store %s: lock for migration: %w", s.path, err)
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS dbperf_schema (version BIGINT NOT NULL)`); err != nil {
			return fmt.Errorf("results store %s: schema version table: %w", s.path, err)
		}
	}
	v, err := s.userVersion(ctx, tx)
	if err != nil {
		return err
	}
	if v > SchemaVersion {
		return &SchemaTooNewError{Path: s.path, FileVersion: v, KnownVersion: SchemaVersion}
	}
	for i := v; i < len(scripts); i++ {
		if _, err := tx.ExecContext(ctx, s.db.d.migration(scripts[i])); err != nil {
			return fmt.Errorf("results store %s: migrate to schema version %d: %w", s.path, i+1, err)
		}
	}
	// PRAGMA takes no parameters; SchemaVersion is a constant.
	setVersion := fmt.Sprintf(`PRAGMA user_version = %d`, SchemaVersion)
	if s.db.d == postgresDialect {
		setVersion = fmt.Sprintf(`DELETE FROM dbperf_schema; INSERT INTO dbperf_schema (version) VALUES (%d)`, SchemaVersion)
	}
	if _, err := tx.ExecContext(ctx, setVersion); err != nil {
		return fmt.Errorf("results store %s: set schema version %d: %w", s.path, SchemaVersion, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("results store %s: commit migration to schema version %d: %w", s.path, SchemaVersion, err)
	}
	return nil
}

// checkOurs refuses a file of schema version 0 that already holds tables: somebody else's
// SQLite database.
func (s *Store) checkOurs(ctx context.Context) error {
	var n int
	q := `SELECT count(*) FROM sqlite_master`
	if s.db.d == postgresDialect {
		q = `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name <> 'dbperf_schema'`
	}
	if err := s.db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return fmt.Errorf("results store %s: %w", s.path, err)
	}
	if n > 0 && s.db.d == postgresDialect {
		return fmt.Errorf("results store %s: the database has tables but no dbperf schema: give dbperf a database (or schema) of its own", s.path)
	}
	if n > 0 {
		return fmt.Errorf("results store %s is an SQLite database but not a dbperf results store: pass another --results file", s.path)
	}
	return nil
}
