package store

// SchemaVersion is the newest results-store schema this dbperf knows. It equals
// len(migrations()) and is kept in the file as PRAGMA user_version.
const SchemaVersion = 12

// migrations returns the forward migrations in order: script i takes a file from schema
// version i to i+1. Never edit a released script; append a new one and bump SchemaVersion.
//
// Units live in column names (DESIGN.md "Measurement rules"): times are UTC RFC 3339 text
// with nanoseconds, interval offsets are nanoseconds, durations and CPU are seconds,
// latencies are microseconds, rates are per second in the label's unit.
func migrations() []string {
	return []string{
		// 1: runs, steps, per-label step totals, intervals and their per-label figures.
		`
CREATE TABLE runs (
	id               INTEGER PRIMARY KEY AUTOINCREMENT,
	workload         TEXT    NOT NULL,
	workload_version INTEGER NOT NULL,
	engine           TEXT    NOT NULL,
	engine_version   TEXT    NOT NULL,
	engine_settings  TEXT    NOT NULL, -- JSON object
	label            TEXT    NOT NULL,
	seed             INTEGER NOT NULL,
	params           TEXT    NOT NULL, -- JSON object
	env              TEXT    NOT NULL, -- JSON object
	status           TEXT    NOT NULL, -- running, ok, failed, interrupted
	started_at       TEXT    NOT NULL,
	finished_at      TEXT,             -- NULL until FinishRun
	-- The writing process, so a reader can tell a run whose process died.
	pid              INTEGER NOT NULL,
	pid_start_ticks  INTEGER NOT NULL, -- /proc/PID/stat field 22; 0 when unknown
	boot_id          TEXT    NOT NULL  -- /proc/sys/kernel/random/boot_id; '' when unknown
);
CREATE INDEX runs_label ON runs (label);

CREATE TABLE steps (
	id             INTEGER PRIMARY KEY AUTOINCREMENT,
	run_id         INTEGER NOT NULL REFERENCES runs (id),
	seq            INTEGER NOT NULL,
	name           TEXT    NOT NULL,
	status         TEXT    NOT NULL, -- running, ok, failed, interrupted, skipped
	error          TEXT    NOT NULL DEFAULT '',
	started_at     TEXT    NOT NULL,
	seconds        REAL    NOT NULL DEFAULT 0,
	kind           TEXT    NOT NULL DEFAULT '',
	primary_label  TEXT    NOT NULL DEFAULT '',
	audit_status   TEXT    NOT NULL DEFAULT '',
	audit_detail   TEXT    NOT NULL DEFAULT '',
	client_cpu_sec REAL    NOT NULL DEFAULT 0,
	note           TEXT    NOT NULL DEFAULT '',
	UNIQUE (run_id, seq)
);

CREATE TABLE step_labels (
	step_id          INTEGER NOT NULL REFERENCES steps (id),
	ord              INTEGER NOT NULL, -- position in StepResult.Labels
	label            TEXT    NOT NULL,
	role             TEXT    NOT NULL,
	unit             TEXT    NOT NULL,
	statement_count  INTEGER NOT NULL,
	row_count        INTEGER NOT NULL,
	error_count      INTEGER NOT NULL,
	late_count       INTEGER NOT NULL,
	missed_count     INTEGER NOT NULL,
	p50_us           INTEGER NOT NULL,
	p90_us           INTEGER NOT NULL,
	p99_us           INTEGER NOT NULL,
	p999_us          INTEGER NOT NULL,
	max_us           INTEGER NOT NULL,
	has_response     INTEGER NOT NULL,
	response_p50_us  INTEGER NOT NULL,
	response_p90_us  INTEGER NOT NULL,
	response_p99_us  INTEGER NOT NULL,
	response_p999_us INTEGER NOT NULL,
	response_max_us  INTEGER NOT NULL,
	target_per_sec   REAL    NOT NULL,
	background       INTEGER NOT NULL,
	PRIMARY KEY (step_id, label)
);

CREATE TABLE intervals (
	step_id        INTEGER NOT NULL REFERENCES steps (id),
	seq            INTEGER NOT NULL,
	start_ns       INTEGER NOT NULL, -- offset from the step's start
	end_ns         INTEGER NOT NULL,
	client_cpu_sec REAL    NOT NULL,
	PRIMARY KEY (step_id, seq)
);

CREATE TABLE interval_labels (
	step_id          INTEGER NOT NULL,
	seq              INTEGER NOT NULL,
	ord              INTEGER NOT NULL, -- position in Interval.Labels
	label            TEXT    NOT NULL,
	role             TEXT    NOT NULL,
	unit             TEXT    NOT NULL,
	statement_count  INTEGER NOT NULL,
	row_count        INTEGER NOT NULL,
	error_count      INTEGER NOT NULL,
	late_count       INTEGER NOT NULL,
	missed_count     INTEGER NOT NULL,
	p50_us           INTEGER NOT NULL,
	p90_us           INTEGER NOT NULL,
	p99_us           INTEGER NOT NULL,
	p999_us          INTEGER NOT NULL,
	max_us           INTEGER NOT NULL,
	has_response     INTEGER NOT NULL,
	response_p50_us  INTEGER NOT NULL,
	response_p90_us  INTEGER NOT NULL,
	response_p99_us  INTEGER NOT NULL,
	response_p999_us INTEGER NOT NULL,
	response_max_us  INTEGER NOT NULL,
	target_per_sec   REAL    NOT NULL,
	background       INTEGER NOT NULL,
	PRIMARY KEY (step_id, seq, label),
	FOREIGN KEY (step_id, seq) REFERENCES intervals (step_id, seq)
);
`,
		// 2: HW efficiency (issue #4): what the machine, the server's processes and dbperf
		// did per step and per interval (from /proc), the derived per-op metrics, the
		// per-connection CPU by role, and the database size at the end of each step.
		// NULL means not measured (never 0): the io columns when no block device was
		// sampled, the server columns when the server's processes were not visible, the
		// *_read_bytes/*_write_bytes when /proc/PID/io was not readable.
		`
ALTER TABLE steps ADD COLUMN db_size_bytes INTEGER; -- at the end of the step; NULL when unknown

CREATE TABLE step_hw (
	step_id INTEGER PRIMARY KEY REFERENCES steps (id),
` + hwColumnsDDL + `
);

CREATE TABLE interval_hw (
	step_id INTEGER NOT NULL,
	seq     INTEGER NOT NULL,
` + hwColumnsDDL + `,
	PRIMARY KEY (step_id, seq),
	FOREIGN KEY (step_id, seq) REFERENCES intervals (step_id, seq)
);

-- Server-side CPU of the step's sessions by role ("client_process" for embedded engines).
CREATE TABLE step_conn_cpu (
	step_id  INTEGER NOT NULL REFERENCES steps (id),
	role     TEXT    NOT NULL,
	sessions INTEGER NOT NULL,
	cpu_sec  REAL    NOT NULL,
	PRIMARY KEY (step_id, role)
);

-- HW-efficiency metrics (cpupq, wkbpi, ...; metrics.MetricNames), computed from step_hw,
-- the step's counts and db_size_bytes when the step finished. An unmeasured metric has no row.
CREATE TABLE step_metrics (
	step_id INTEGER NOT NULL REFERENCES steps (id),
	name    TEXT    NOT NULL,
	value   REAL    NOT NULL,
	PRIMARY KEY (step_id, name)
);
`,
		// 3 (issue #9): per step and interval, the CPU time the machine had (wall seconds ×
		// CPUs online) and the CPU time every process of the machine used, which is the
		// machine's busy CPU (hwstat.CPUTimes.BusySec): /proc/stat's busy ticks miss work
		// shorter than a tick. NULL in rows written before: busy is then the ticks'.
		`
ALTER TABLE step_hw ADD COLUMN cpu_elapsed_sec REAL;
ALTER TABLE step_hw ADD COLUMN cpu_tasks_sec REAL;
ALTER TABLE interval_hw ADD COLUMN cpu_elapsed_sec REAL;
ALTER TABLE interval_hw ADD COLUMN cpu_tasks_sec REAL;
`,
		// 4 (issue #10): the step groups a workload declares (workload.Meta.Groups: JSON
		// [{"name", "title"}] in report order) and each step's group, so reports summarize
		// the groups the workload named when it ran. '' / '[]' in rows written before:
		// reports then show only the geomean over all steps.
		`
ALTER TABLE runs ADD COLUMN step_groups TEXT NOT NULL DEFAULT '[]';
ALTER TABLE steps ADD COLUMN step_group TEXT NOT NULL DEFAULT '';
`,
		// 5 (issue #10): per label, the timed operations (events: sysbench's
		// transactions) beside the statements they sent (statement_count; a sysbench
		// read-only transaction is 16 statements, one event). NULL in rows written
		// before, when every operation was one statement: read back as statement_count.
		`
ALTER TABLE step_labels ADD COLUMN event_count INTEGER;
ALTER TABLE interval_labels ADD COLUMN event_count INTEGER;
`,
		// 6 (issue #13): the 99.99th percentile per label (NULL in rows written before:
		// not kept, reported as absent), and per interval the engine's named figures (a
		// key-value engine's stall %, stalls, compaction MB/s, L0 files and compaction
		// debt: metrics.IntervalKVMetricNames). An unmeasured figure has no row.
		`
ALTER TABLE step_labels ADD COLUMN p9999_us INTEGER;
ALTER TABLE step_labels ADD COLUMN response_p9999_us INTEGER;
ALTER TABLE interval_labels ADD COLUMN p9999_us INTEGER;
ALTER TABLE interval_labels ADD COLUMN response_p9999_us INTEGER;

CREATE TABLE interval_metrics (
	step_id INTEGER NOT NULL,
	seq     INTEGER NOT NULL,
	name    TEXT    NOT NULL,
	value   REAL    NOT NULL,
	PRIMARY KEY (step_id, seq, name),
	FOREIGN KEY (step_id, seq) REFERENCES intervals (step_id, seq)
);
`,
		// 7 (issue #14): a run's origin, the identity it keeps when `dbperf results copy`
		// copies it into another store (so a copy made twice adds nothing; runs stored
		// before get one from the process and time that wrote them), and the host that
		// ran it (env's hostname), which the runs page filters on and liveness needs: a
		// running run of another host cannot be judged from this one.
		`
ALTER TABLE runs ADD COLUMN origin TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT '';
UPDATE runs SET origin = boot_id || ':' || pid || ':' || pid_start_ticks || ':' || started_at,
	host = COALESCE(json_extract(env, '$.hostname'), '');
CREATE INDEX runs_origin ON runs (origin);
`,
		// 8 (issue #23): one run per origin. `dbperf results copy` wrote a run step by step
		// under the origin "pending:<origin>" and set the origin at the end, so a copy
		// killed half-way left a half run and two copies at once each added the run. Those
		// half runs and every complete copy but the oldest of each origin are deleted (with
		// their steps, intervals and figures), and a unique index keeps it so; Import now
		// writes a run in one transaction.
		deleteRunsWhere(`origin LIKE 'pending:%' OR (origin <> '' AND id NOT IN (SELECT min(id) FROM runs GROUP BY origin))`) + `
DROP INDEX runs_origin;
CREATE UNIQUE INDEX runs_origin ON runs (origin) WHERE origin <> '';
`,
		// 9 (issue 25): a step's CPU profiles (dbperf run --cpu-profile), one row per role:
		// the folded stacks (Brendan Gregg's format) gzip-compressed, the role's sample
		// count and distinct stacks, and how perf sampled (its event, cycles or cpu-clock,
		// and its rate per CPU), so samples / hz are CPU seconds. A step without profiles
		// has no row.
		`
CREATE TABLE step_profiles (
	step_id INTEGER NOT NULL REFERENCES steps (id),
	role    TEXT    NOT NULL,
	event   TEXT    NOT NULL, -- perf's event: cycles, cpu-clock ('' when unknown)
	hz      INTEGER NOT NULL, -- samples per second per CPU
	samples INTEGER NOT NULL,
	stacks  INTEGER NOT NULL, -- distinct stacks in folded
	folded  BLOB    NOT NULL, -- the folded text, gzip
	PRIMARY KEY (step_id, role)
);
`,
		// 10 (issue 25): what a step's statements cost inside the server (dbperf run
		// --explain): per statement shape the difference of the server's counters over
		// the step (PostgreSQL's pg_stat_statements, MariaDB's statement digests) and the
		// shape's plan at the step's end; and the step's wait samples: per role and wait
		// class (CPU, Client:ClientRead, IO:DataFileRead, …) how many samples found the
		// role's sessions there. A step without them has no rows.
		`
CREATE TABLE step_statements (
	step_id              INTEGER NOT NULL REFERENCES steps (id),
	query_id             TEXT    NOT NULL, -- the server's id of the shape (queryid, digest)
	query                TEXT    NOT NULL, -- normalized text
	calls                INTEGER NOT NULL,
	plans                INTEGER NOT NULL,
	plan_sec             REAL    NOT NULL,
	exec_sec             REAL    NOT NULL,
	rows                 INTEGER NOT NULL,
	rows_examined        INTEGER NOT NULL,
	shared_blks_hit      INTEGER NOT NULL,
	shared_blks_read     INTEGER NOT NULL,
	shared_blks_dirtied  INTEGER NOT NULL,
	shared_blks_written  INTEGER NOT NULL,
	wal_bytes            INTEGER NOT NULL,
	jit_sec              REAL    NOT NULL,
	plan                 TEXT    NOT NULL, -- EXPLAIN's JSON at the step's end; '' = none
	plan_note            TEXT    NOT NULL, -- why there is no plan
	PRIMARY KEY (step_id, query_id)
);

CREATE TABLE step_waits (
	step_id INTEGER NOT NULL REFERENCES steps (id),
	role    TEXT    NOT NULL, -- a worker's role; 'other' for sessions of no worker
	wait    TEXT    NOT NULL,
	samples INTEGER NOT NULL,
	hz      REAL    NOT NULL, -- samples per second
	PRIMARY KEY (step_id, role, wait)
);
`,
		// 11 (issue 27): a step's latency histograms per op label, HdrHistogram's V2
		// compressed encoding (service time; response time for rate-limited labels, else
		// empty), so the parts of one run measured by several agents (dbperf run --agents)
		// merge into exact percentiles. Steps stored before have none.
		`
CREATE TABLE step_label_hists (
	step_id  INTEGER NOT NULL REFERENCES steps (id),
	label    TEXT    NOT NULL,
	service  BLOB    NOT NULL,
	response BLOB    NOT NULL, -- empty: none
	PRIMARY KEY (step_id, label)
);
`,
		// 12 (issue 38): a statement shape's custom plan, EXPLAIN with the parameters of
		// one of the step's executions, beside its generic plan. Statements stored before
		// have none.
		`
ALTER TABLE step_statements ADD COLUMN custom_plan TEXT NOT NULL DEFAULT ''; -- EXPLAIN's JSON; '' = none
ALTER TABLE step_statements ADD COLUMN custom_plan_note TEXT NOT NULL DEFAULT ''; -- the parameters used, or why there is no custom plan
`,
	}
}

// deleteRunsWhere is a script deleting the runs matching cond (a condition on runs'
// columns) and everything stored under them, children first (foreign keys). It is part of
// a released migration: never change its text.
func deleteRunsWhere(cond string) string {
	runs := `(SELECT id FROM runs WHERE ` + cond + `)`
	steps := `(SELECT id FROM steps WHERE run_id IN ` + runs + `)`
	script := ""
	for _, t := range []string{"interval_labels", "interval_hw", "interval_metrics", "intervals",
		"step_labels", "step_hw", "step_conn_cpu", "step_metrics"} {
		script += "\nDELETE FROM " + t + " WHERE step_id IN " + steps + ";"
	}
	return script + "\nDELETE FROM steps WHERE run_id IN " + runs + ";\nDELETE FROM runs WHERE " + cond + ";"
}

// hwColumnsDDL are the columns step_hw and interval_hw share (hwColumns in that order).
// A released migration must never change: this text is part of migration 2.
const hwColumnsDDL = `	cpu_user_sec          REAL    NOT NULL, -- machine-wide, summed over all CPUs
	cpu_nice_sec          REAL    NOT NULL,
	cpu_system_sec        REAL    NOT NULL,
	cpu_idle_sec          REAL    NOT NULL,
	cpu_iowait_sec        REAL    NOT NULL,
	cpu_irq_sec           REAL    NOT NULL,
	cpu_softirq_sec       REAL    NOT NULL,
	cpu_steal_sec         REAL    NOT NULL,
	context_switches      INTEGER NOT NULL,
	io_devices            TEXT    NOT NULL, -- space-separated disks; '' = IO not sampled
	read_ops              INTEGER,
	read_bytes            INTEGER,
	write_ops             INTEGER,
	write_bytes           INTEGER,
	embedded              INTEGER NOT NULL, -- the engine runs inside dbperf
	remote                INTEGER NOT NULL, -- the server runs on another machine
	server_processes      INTEGER,          -- NULL: the server's processes were not visible
	server_cpu_sec        REAL,
	server_peak_mem_bytes INTEGER,
	server_read_bytes     INTEGER,
	server_write_bytes    INTEGER,
	client_processes      INTEGER NOT NULL,
	client_cpu_sec        REAL    NOT NULL,
	client_peak_mem_bytes INTEGER NOT NULL,
	client_read_bytes     INTEGER,
	client_write_bytes    INTEGER`
