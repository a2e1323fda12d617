package script

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/workload/workloadtest"
)

// pipelinedTPCB is pgbench's TPC-B-like transaction in one pipeline (as pgbench's docs
// write it): the seven statements go in one write, and their results come back together.
const pipelinedTPCB = `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
\startpipeline
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
\syncpipeline
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
\endpipeline
`

// TestPipelinePostgres runs pgbench's TPC-B-like transaction pipelined (with a
// \syncpipeline inside) on a managed PostgreSQL: the balances add up to the history's
// deltas and there is a history row per transaction (every statement ran, once), and a statement that fails inside a
// pipeline fails the step naming its own line, its transaction rolled back.
func TestPipelinePostgres(t *testing.T) {
	h := workloadtest.Managed(t, "postgres", filepath.Join("..", "..", "..", "profiles"))
	dir := t.TempDir()
	steps := workloadtest.Plan(t, New(), "--pgbench-init", "--scale-factor", "1",
		"-f", write(t, dir, "tpcb-pipelined.sql", pipelinedTPCB), "--clients", "2", "--time", "1")
	mustRun(t, h, steps[0])
	res := mustRun(t, h, steps[1])
	sum := queryOne(t, h, "SELECT coalesce(sum(delta), 0) FROM pgbench_history")
	for _, q := range []string{"SELECT sum(abalance) FROM pgbench_accounts", "SELECT sum(tbalance) FROM pgbench_tellers", "SELECT sum(bbalance) FROM pgbench_branches"} {
		if got := queryOne(t, h, q); got != sum {
			t.Errorf("%s: %d, history's deltas add up to %d", q, got, sum)
		}
	}
	if hist := queryOne(t, h, "SELECT count(*) FROM pgbench_history"); hist == 0 || hist != res.Labels[0].Events {
		t.Errorf("%d history rows for %d transactions", hist, res.Labels[0].Events)
	}

	bad := "\\startpipeline\nBEGIN;\nUPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 1;\nSELECT 1 / 0;\nEND;\n\\endpipeline\n"
	steps = workloadtest.Plan(t, New(), "-f", write(t, dir, "bad.sql", bad), "--time", "0.5")
	before := queryOne(t, h, "SELECT sum(tbalance) FROM pgbench_tellers")
	res = runStepOn(h, steps[0])
	if res.Status != metrics.StatusFailed || !strings.Contains(res.Error, "bad.sql:4: ") || !strings.Contains(res.Error, "division by zero") {
		t.Errorf("a failing statement in a pipeline: %s %q, want bad.sql:4 and division by zero", res.Status, res.Error)
	}
	if after := queryOne(t, h, "SELECT sum(tbalance) FROM pgbench_tellers"); after != before {
		t.Errorf("the failed transaction's update stayed: tellers' balance %d → %d", before, after)
	}
}

// TestPipelineRefused: an engine without a pipeline mode (SQLite here; MariaDB too)
// refuses a script with \startpipeline before it runs, naming the file and line.
func TestPipelineRefused(t *testing.T) {
	steps := workloadtest.Plan(t, New(), "-f", write(t, t.TempDir(), "p.sql", "SELECT 1;\n\\startpipeline\nSELECT 2;\n\\endpipeline\n"), "--time", "0.2")
	res := runStepOn(openSQLite(t), steps[0])
	if want := "p.sql:2: \\startpipeline: the sqlite engine has no pipeline mode"; res.Status != metrics.StatusFailed || !strings.Contains(res.Error, want) {
		t.Errorf("%s %q, want an error with %q", res.Status, res.Error, want)
	}
}
