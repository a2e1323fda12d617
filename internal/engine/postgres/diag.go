package postgres

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/jackc/pgx/v5"
)

var (
	_ engine.Diagnoser     = (*handle)(nil)
	_ engine.CustomPlanner = (*diag)(nil)
)

// diagMark begins every statement a diag sends, so its own statements are told apart
// from the workload's in pg_stat_statements (which keeps comments in its text).
const diagMark = "/* dbperf diag */ "

// diag reads pg_stat_statements, EXPLAIN and pg_stat_activity on a connection of its own.
type diag struct {
	c       *pgx.Conn
	h       *handle // its sessions' samples of their statements' arguments (CustomPlan)
	version int     // server_version_num
	stmts   error
	// enabled: OpenDiag turned pg_stat_statements' tracking on (Close turns it back).
	enabled bool
	notes   map[string]string
}

// OpenDiag connects and checks pg_stat_statements: installed (CREATE EXTENSION, done here
// when o.Enable), loaded (shared_preload_libraries: managed servers preload it with
// tracking off) and tracking (pg_stat_statements.track: turned to 'top', with
// track_planning, by ALTER SYSTEM when o.Enable, so a managed server pays for the
// extension only in runs that ask for it).
func (h *handle) OpenDiag(ctx context.Context, o engine.DiagOptions) (engine.Diag, error) {
	c, err := h.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres diag: %w", err)
	}
	d := &diag{c: c, h: h, notes: map[string]string{}}
	if err := c.QueryRow(ctx, diagMark+"SELECT current_setting('server_version_num')::int").Scan(&d.version); err != nil {
		_ = c.Close(ctx)
		return nil, fmt.Errorf("postgres diag: %w", err)
	}
	// The diag's own queries must cost the server little whatever the profile says: a
	// forced JIT would compile every sample of pg_stat_activity.
	_, _ = c.Exec(ctx, diagMark+"SET jit = off")
	d.stmts = d.checkStatements(ctx, o.Enable)
	if d.stmts != nil {
		d.notes["statements"] = "none: " + d.stmts.Error()
	} else {
		d.notes["statements"] = "pg_stat_statements, per step: the difference of its counters at the step's start and end"
		if d.enabled {
			d.notes["statements"] += " (tracking turned on for this run: track = top, track_planning = on)"
		}
	}
	d.notes["plans"] = "EXPLAIN (FORMAT JSON, COSTS OFF) of each statement shape at the step's end: its generic plan (plan_cache_mode = force_generic_plan, parameters unknown), " +
		"and its custom plan with the parameters of one execution in the step (plan_cache_mode = force_custom_plan)"
	if d.stmts != nil {
		d.notes["plans"] = "none: the shapes come from pg_stat_statements, which is not available"
	}
	d.notes["waits"] = "pg_stat_activity's state and wait_event of each client backend, sampled"
	return d, nil
}

// checkStatements says why pg_stat_statements cannot be read (nil: it can).
func (d *diag) checkStatements(ctx context.Context, enable bool) error {
	var installed bool
	if err := d.c.QueryRow(ctx, diagMark+"SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements')").Scan(&installed); err != nil {
		return fmt.Errorf("pg_stat_statements: %w", err)
	}
	var track *string
	if err := d.c.QueryRow(ctx, diagMark+"SELECT current_setting('pg_stat_statements.track', true)").Scan(&track); err != nil {
		return fmt.Errorf("pg_stat_statements: %w", err)
	}
	// A config may set pg_stat_statements.track without the library being loaded (a
	// profile or postgresql.conf that preloads other libraries): the setting is then a
	// placeholder, which pg_settings does not show. shared_preload_libraries is shown
	// only to those who may read it.
	var loaded bool
	if err := d.c.QueryRow(ctx, diagMark+"SELECT EXISTS (SELECT 1 FROM pg_settings WHERE name = 'pg_stat_statements.track')").Scan(&loaded); err != nil {
		return fmt.Errorf("pg_stat_statements: %w", err)
	}
	var preload []string
	_ = d.c.QueryRow(ctx, diagMark+"SELECT array_agg(setting) FROM pg_settings WHERE name = 'shared_preload_libraries'").Scan(&preload)
	if len(preload) == 1 && !preloads(preload[0], "pg_stat_statements") {
		loaded = false
	}
	if track == nil || *track == "" || !loaded {
		now := ""
		if len(preload) == 1 {
			now = fmt.Sprintf(" (shared_preload_libraries = '%s')", preload[0])
		}
		return fmt.Errorf("pg_stat_statements is not loaded on this server%s: add pg_stat_statements to shared_preload_libraries and restart the server", now)
	}
	if !installed {
		if !enable {
			return errors.New("pg_stat_statements is loaded but not installed in this database: run CREATE EXTENSION pg_stat_statements")
		}
		if _, err := d.c.Exec(ctx, diagMark+"CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
			return fmt.Errorf("CREATE EXTENSION pg_stat_statements: %w", err)
		}
	}
	if *track == "none" {
		if !enable {
			return errors.New("pg_stat_statements.track is none on this server: set it to top")
		}
		for _, q := range []string{
			"ALTER SYSTEM SET pg_stat_statements.track = 'top'",
			"ALTER SYSTEM SET pg_stat_statements.track_planning = on",
			"SELECT pg_reload_conf()",
		} {
			if _, err := d.c.Exec(ctx, diagMark+q); err != nil {
				return fmt.Errorf("turn pg_stat_statements on: %s: %w", q, err)
			}
		}
		d.enabled = true
	}
	// The diag's own EXPLAINs and PREPAREs are utility statements: not tracked (this
	// session only; a server without the privilege tracks them under diagMark).
	_, _ = d.c.Exec(ctx, diagMark+"SET pg_stat_statements.track_utility = off")
	return nil
}

func (d *diag) Notes() map[string]string { return d.notes }

func (d *diag) SessionID() int { return int(d.c.PgConn().PID()) }

// Statements reads pg_stat_statements for this database, the diag's own statements left
// out. Times are in seconds; WAL bytes from PostgreSQL 13, JIT times from 15.
func (d *diag) Statements(ctx context.Context) ([]engine.Statement, error) {
	if d.stmts != nil {
		return nil, d.stmts
	}
	// The workload's statements sample their arguments again at their next execution
	// (paramSamples): once per step, as Statements is read at a step's start and end.
	d.h.samples.next()
	plan, exec, wal, jit := "0", "total_time / 1000", "0", "0"
	if d.version >= 130000 {
		plan, exec, wal = "total_plan_time / 1000", "total_exec_time / 1000", "wal_bytes"
	}
	if d.version >= 150000 {
		jit = "(jit_generation_time + jit_inlining_time + jit_optimization_time + jit_emission_time) / 1000"
	}
	plans := "0"
	if d.version >= 130000 {
		plans = "plans"
	}
	q := diagMark + `SELECT queryid::text, query, calls, ` + plans + `, ` + plan + `, ` + exec + `, rows,
	shared_blks_hit, shared_blks_read, shared_blks_dirtied, shared_blks_written, ` + wal + `::bigint, ` + jit + `
FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND queryid IS NOT NULL
	AND query NOT LIKE '/* dbperf diag */%'`
	rows, err := d.c.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("pg_stat_statements: %w", err)
	}
	defer rows.Close()
	var out []engine.Statement
	for rows.Next() {
		var s engine.Statement
		if err := rows.Scan(&s.ID, &s.Text, &s.Calls, &s.Plans, &s.PlanSec, &s.ExecSec, &s.Rows,
			&s.BlocksHit, &s.BlocksRead, &s.BlocksDirtied, &s.BlocksWritten, &s.WALBytes, &s.JITSec); err != nil {
			return nil, fmt.Errorf("pg_stat_statements: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pg_stat_statements: %w", err)
	}
	return out, nil
}

// paramRE finds a statement's parameters ($1, $2, …).
var paramRE = regexp.MustCompile(`\$([0-9]+)`)

// Plan is the generic plan of a statement shape: PREPARE of its normalized text (the
// parameters' types inferred as the workload's own prepare does), EXPLAIN (FORMAT JSON,
// COSTS OFF) EXECUTE with unknown (NULL) parameters under plan_cache_mode =
// force_generic_plan, so the plan is the one chosen without values, and nothing is run.
// Costs are left out so two runs' plans compare by their shape alone. Utility statements
// (BEGIN, COMMIT, …) have no plan.
func (d *diag) Plan(ctx context.Context, s engine.Statement) (string, error) {
	text, err := explainable(s.Text)
	if err != nil {
		return "", err
	}
	// The text the workload prepared, when known, keeps the constants that
	// pg_stat_statements turned into parameters (a LIMIT's row count): the plan is then
	// the generic plan of the statement that ran.
	if q, _, ok := d.h.samples.get(text); ok {
		text = q
	}
	n := 0
	for _, m := range paramRE.FindAllStringSubmatch(text, -1) {
		if k, err := strconv.Atoi(m[1]); err == nil && k > n {
			n = k
		}
	}
	args := ""
	if n > 0 {
		args = "(" + strings.TrimSuffix(strings.Repeat("NULL, ", n), ", ") + ")"
	}
	return d.explainExecute(ctx, text, "force_generic_plan", args)
}

// CustomPlan is the plan a statement shape ran with: PREPARE of the text the workload
// prepared (pg_stat_statements' text matched to it, paramSamples.get), then EXPLAIN (FORMAT JSON, COSTS OFF) EXECUTE with the parameters of one of the step's
// executions (paramSamples: the workload's prepared statements keep one sample per step)
// under plan_cache_mode = force_custom_plan, so the planner sees the values, as it does
// for a prepared statement's first five executions and for every execution whose
// custom plan it keeps preferring to the generic one. What it returns besides the plan
// names the values ("$1 = '100', $2 = '50'"). A shape without parameters has one plan
// (Plan's); one the workload did not run through a prepared statement of this handle
// has no sample.
func (d *diag) CustomPlan(ctx context.Context, s engine.Statement) (plan, params string, err error) {
	text, err := explainable(s.Text)
	if err != nil {
		return "", "", err
	}
	if !paramRE.MatchString(text) {
		return "", "", errors.New("no parameters: its one plan is the generic plan")
	}
	text, sample, ok := d.h.samples.get(text)
	if !ok {
		return "", "", errors.New("no sample of its parameters: not run by a prepared statement of the workload in this step")
	}
	if len(sample) == 0 {
		return "", "", errors.New("no parameters: its one plan is the generic plan")
	}
	mode := "force_custom_plan"
	if d.version < 120000 {
		mode = "" // no plan_cache_mode: a statement's first executions are planned with their values
	}
	args := literals(sample)
	plan, err = d.explainExecute(ctx, text, mode, args)
	if err != nil {
		return "", "", err
	}
	names := make([]string, 0, len(sample))
	for i, v := range sample {
		if i == 8 {
			names = append(names, fmt.Sprintf("… (%d parameters)", len(sample)))
			break
		}
		val := "NULL"
		if v != nil {
			val = "'" + strings.ReplaceAll(clip(*v, 40), "'", "''") + "'"
		}
		names = append(names, fmt.Sprintf("$%d = %s", i+1, val))
	}
	return plan, strings.Join(names, ", "), nil
}

// clip shortens a sample's value for the run's record.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// explainable is a statement's text when it has a plan: a utility statement (BEGIN,
// COMMIT, …) has none.
func explainable(q string) (string, error) {
	text := strings.TrimSpace(q)
	first := strings.ToUpper(strings.Fields(text + " x")[0])
	switch first {
	case "SELECT", "INSERT", "UPDATE", "DELETE", "WITH":
		return text, nil
	}
	return "", fmt.Errorf("%s: no plan for a utility statement", first)
}

// explainExecute prepares text and explains its execution with args ("" for none) under
// plan_cache_mode = mode ("" to leave it), in one simple-protocol batch: a failure
// anywhere rolls the whole of it back, and the prepared statement and setting do not
// outlive it. Nothing is executed.
func (d *diag) explainExecute(ctx context.Context, text, mode, args string) (string, error) {
	pc := d.c.PgConn()
	set := ""
	if mode != "" {
		set = "SET LOCAL plan_cache_mode = " + mode + "; "
	}
	batch := diagMark + "BEGIN; " + set + "PREPARE dbperf_diag_plan AS " + text +
		"; EXPLAIN (FORMAT JSON, COSTS OFF) EXECUTE dbperf_diag_plan" + args + "; DEALLOCATE dbperf_diag_plan; COMMIT"
	results, err := pc.Exec(ctx, batch).ReadAll()
	if err != nil {
		_, _ = pc.Exec(ctx, "ROLLBACK; DEALLOCATE ALL").ReadAll()
		return "", fmt.Errorf("explain: %w", err)
	}
	for _, r := range results {
		if len(r.FieldDescriptions) == 1 && r.FieldDescriptions[0].Name == "QUERY PLAN" && len(r.Rows) > 0 {
			var b strings.Builder
			for _, row := range r.Rows {
				b.Write(row[0])
			}
			return b.String(), nil
		}
	}
	return "", errors.New("explain: no plan in the server's answer")
}

// Waits reads pg_stat_activity: by backend pid, CPU for an active backend with no wait
// event, else the wait event as "type:event" (Client:ClientRead for a backend waiting for
// its client's next statement, IO:DataFileRead, Lock:transactionid, LWLock:WALWrite, …).
func (d *diag) Waits(ctx context.Context) (map[int]string, error) {
	rows, err := d.c.Query(ctx, diagMark+`SELECT pid, coalesce(state, ''), coalesce(wait_event_type, ''), coalesce(wait_event, '')
FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`)
	if err != nil {
		return nil, fmt.Errorf("pg_stat_activity: %w", err)
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var pid int
		var state, typ, event string
		if err := rows.Scan(&pid, &state, &typ, &event); err != nil {
			return nil, fmt.Errorf("pg_stat_activity: %w", err)
		}
		out[pid] = waitClass(state, typ, event)
	}
	return out, rows.Err()
}

// waitClass names a backend's state: CPU when active and not waiting, the wait event
// when there is one, the state otherwise.
func waitClass(state, typ, event string) string {
	switch {
	case typ != "":
		return typ + ":" + event
	case state == "active":
		return engine.WaitCPU
	case state == "":
		return "unknown"
	case state == "idle":
		return engine.WaitIdle
	}
	return "state:" + state
}

// Close turns pg_stat_statements' tracking back off when OpenDiag turned it on, and
// closes the connection.
func (d *diag) Close() error {
	ctx := context.Background()
	var err error
	if d.enabled {
		for _, q := range []string{
			"ALTER SYSTEM RESET pg_stat_statements.track",
			"ALTER SYSTEM RESET pg_stat_statements.track_planning",
			"SELECT pg_reload_conf()",
		} {
			if _, e := d.c.Exec(ctx, diagMark+q); e != nil && err == nil {
				err = fmt.Errorf("postgres diag: %s: %w", q, e)
			}
		}
	}
	return errors.Join(err, d.c.Close(ctx))
}

// preloads says whether a shared_preload_libraries value lists lib (names separated by
// commas, optionally quoted, a path or a .so suffix allowed).
func preloads(value, lib string) bool {
	for _, n := range strings.Split(value, ",") {
		n = strings.Trim(strings.TrimSpace(n), `"`)
		n = strings.TrimSuffix(n[strings.LastIndexByte(n, '/')+1:], ".so")
		if n == lib {
			return true
		}
	}
	return false
}
