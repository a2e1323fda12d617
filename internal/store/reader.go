package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
)

// RunFilter selects runs for Runs. The zero value selects all.
type RunFilter struct {
	// Label keeps only runs with exactly this label ("" = any).
	Label string
	// Limit keeps only the newest Limit runs (0 = all).
	Limit int
}

// Runs lists the runs matching f in ascending id order, like a log; with a Limit, the
// newest Limit runs, still ascending. A run left running by a process that is no longer
// alive on this machine reads back as interrupted.
func (s *Store) Runs(ctx context.Context, f RunFilter) ([]RunSummary, error) {
	limit := -1 // SQLite: no limit
	if f.Limit > 0 {
		limit = f.Limit
	}
	rows, err := s.db.QueryContext(ctx, `
SELECT r.id, r.started_at, r.workload, r.engine, r.engine_version, r.label, r.status,
	r.pid, r.pid_start_ticks, r.boot_id,
	(SELECT count(*) FROM steps s WHERE s.run_id = r.id)
FROM runs r
WHERE ? = '' OR r.label = ?
ORDER BY r.id DESC
LIMIT ?`, f.Label, f.Label, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list runs: %w", err)
	}
	defer rows.Close()
	var out []RunSummary
	for rows.Next() {
		var rs RunSummary
		var started string
		var proc procIdentity
		if err := rows.Scan(&rs.ID, &started, &rs.Workload, &rs.Engine, &rs.EngineVersion, &rs.Label, &rs.Status,
			&proc.PID, &proc.StartTicks, &proc.BootID, &rs.Steps); err != nil {
			return nil, fmt.Errorf("store: list runs: %w", err)
		}
		if rs.StartedAt, err = parseTime(started); err != nil {
			return nil, fmt.Errorf("store: list runs: run %d: %w", rs.ID, err)
		}
		rs.Status = liveStatus(rs.Status, proc)
		out = append(out, rs)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list runs: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}

// Results reads the given runs in the given order, each with its steps (by seq) and their
// intervals (by seq; labels in the order they were written). A step left running reads
// back as interrupted once its run is no longer running, with its intervals kept and
// Seconds set to the end of its last interval.
func (s *Store) Results(ctx context.Context, ids []int64) ([]Run, error) {
	out := make([]Run, 0, len(ids))
	for _, id := range ids {
		r, err := s.run(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// LatestRunID is the id of the newest run.
func (s *Store) LatestRunID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT max(id) FROM runs`).Scan(&id); err != nil {
		return 0, fmt.Errorf("store: latest run: %w", err)
	}
	if !id.Valid {
		return 0, fmt.Errorf("results store %s has no runs yet: run \"dbperf run\" first", s.path)
	}
	return id.Int64, nil
}

// ResolveRuns turns references into run ids, in order and without duplicates. A reference
// is a run id or a label; a label stands for all runs with that label, ascending. A number
// that is not a run id is tried as a label.
func (s *Store) ResolveRuns(ctx context.Context, refs []string) ([]int64, error) {
	var out []int64
	seen := map[int64]bool{}
	add := func(id int64) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	for _, ref := range refs {
		ref = strings.TrimSpace(ref)
		if ref == "" {
			return nil, errors.New("empty run reference: give a run id or label (\"dbperf runs\" lists them)")
		}
		if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
			ok, err := s.runExists(ctx, id)
			if err != nil {
				return nil, err
			}
			if ok {
				add(id)
				continue
			}
		}
		ids, err := s.runIDsWithLabel(ctx, ref)
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			if _, err := strconv.ParseInt(ref, 10, 64); err == nil {
				return nil, fmt.Errorf("run %s not found: \"dbperf runs\" lists the stored runs", ref)
			}
			return nil, fmt.Errorf("no run with id or label %q: \"dbperf runs\" lists the stored runs", ref)
		}
		for _, id := range ids {
			add(id)
		}
	}
	return out, nil
}

func (s *Store) runExists(ctx context.Context, id int64) (bool, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE id = ?`, id).Scan(&n); err != nil {
		return false, fmt.Errorf("store: look up run %d: %w", id, err)
	}
	return n > 0, nil
}

func (s *Store) runIDsWithLabel(ctx context.Context, label string) ([]int64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM runs WHERE label = ? ORDER BY id`, label)
	if err != nil {
		return nil, fmt.Errorf("store: look up runs labelled %q: %w", label, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: look up runs labelled %q: %w", label, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: look up runs labelled %q: %w", label, err)
	}
	return ids, nil
}

// liveStatus is how a stored run status reads: running only while its process lives.
func liveStatus(status string, proc procIdentity) string {
	if status == RunRunning && !proc.alive() {
		return RunInterrupted
	}
	return status
}

func (s *Store) run(ctx context.Context, id int64) (Run, error) {
	var r Run
	var settings, params, env, started string
	var finished sql.NullString
	var proc procIdentity
	err := s.db.QueryRowContext(ctx, `
SELECT id, workload, workload_version, engine, engine_version, engine_settings, label, seed,
	params, env, status, started_at, finished_at, pid, pid_start_ticks, boot_id
FROM runs WHERE id = ?`, id).Scan(&r.ID, &r.Workload, &r.WorkloadVersion, &r.Engine, &r.EngineVersion,
		&settings, &r.Label, &r.Seed, &params, &env, &r.Status, &started, &finished,
		&proc.PID, &proc.StartTicks, &proc.BootID)
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("run %d not found: \"dbperf runs\" lists the stored runs", id)
	}
	if err != nil {
		return Run{}, fmt.Errorf("store: read run %d: %w", id, err)
	}
	if err := json.Unmarshal([]byte(settings), &r.EngineSettings); err != nil {
		return Run{}, fmt.Errorf("store: read run %d: engine settings: %w", id, err)
	}
	dec := json.NewDecoder(strings.NewReader(params))
	dec.UseNumber() // keep 1000000 an integer, not 1e+06
	if err := dec.Decode(&r.Params); err != nil {
		return Run{}, fmt.Errorf("store: read run %d: params: %w", id, err)
	}
	if err := json.Unmarshal([]byte(env), &r.Env); err != nil {
		return Run{}, fmt.Errorf("store: read run %d: env: %w", id, err)
	}
	if r.StartedAt, err = parseTime(started); err != nil {
		return Run{}, fmt.Errorf("store: read run %d: %w", id, err)
	}
	if finished.Valid {
		if r.FinishedAt, err = parseTime(finished.String); err != nil {
			return Run{}, fmt.Errorf("store: read run %d: %w", id, err)
		}
	}
	r.Status = liveStatus(r.Status, proc)
	if r.Steps, err = s.steps(ctx, id, r.Status != RunRunning); err != nil {
		return Run{}, fmt.Errorf("store: read run %d: %w", id, err)
	}
	return r, nil
}

// steps reads a run's steps. runOver says the run is no longer running, so a step still
// marked running was interrupted.
func (s *Store) steps(ctx context.Context, runID int64, runOver bool) ([]Step, error) {
	rows, err := s.db.QueryContext(ctx, `
SELECT id, seq, name, status, error, started_at, seconds, kind, primary_label,
	audit_status, audit_detail, client_cpu_sec, note
FROM steps WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("steps: %w", err)
	}
	var steps []Step
	for rows.Next() {
		var st Step
		var status, started string
		r := &st.Result
		if err := rows.Scan(&st.ID, &st.Seq, &r.Name, &status, &r.Error, &started, &r.Seconds, &r.Kind, &r.Primary,
			&r.Audit.Status, &r.Audit.Detail, &r.ClientCPUSec, &r.Note); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("steps: %w", err)
		}
		r.Status = metrics.Status(status)
		if r.StartedAt, err = parseTime(started); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("step %d: %w", st.Seq, err)
		}
		steps = append(steps, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("steps: %w", err)
	}
	_ = rows.Close()
	// Read labels and intervals after closing the step cursor.
	for i := range steps {
		st := &steps[i]
		if st.Result.Labels, err = s.stepLabels(ctx, st.ID); err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", st.Seq, st.Result.Name, err)
		}
		if st.Intervals, err = s.intervals(ctx, st.ID); err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", st.Seq, st.Result.Name, err)
		}
		if st.Result.Status == stepRunning && runOver {
			st.Result.Status = metrics.StatusInterrupted
			if n := len(st.Intervals); n > 0 {
				st.Result.Seconds = st.Intervals[n-1].End.Seconds()
			}
		}
	}
	return steps, nil
}

func (s *Store) stepLabels(ctx context.Context, stepID int64) ([]metrics.LabelStats, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+labelColumns+` FROM step_labels WHERE step_id = ? ORDER BY ord`, stepID)
	if err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	defer rows.Close()
	var out []metrics.LabelStats
	for rows.Next() {
		l, err := scanLabel(rows)
		if err != nil {
			return nil, fmt.Errorf("labels: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	return out, nil
}

func (s *Store) intervals(ctx context.Context, stepID int64) ([]metrics.Interval, error) {
	rows, err := s.db.QueryContext(ctx, `
SELECT seq, start_ns, end_ns, client_cpu_sec FROM intervals WHERE step_id = ? ORDER BY seq`, stepID)
	if err != nil {
		return nil, fmt.Errorf("intervals: %w", err)
	}
	var ivs []metrics.Interval
	bySeq := map[int]int{}
	for rows.Next() {
		var iv metrics.Interval
		var start, end int64
		if err := rows.Scan(&iv.Seq, &start, &end, &iv.ClientCPUSec); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("intervals: %w", err)
		}
		iv.Start, iv.End = time.Duration(start), time.Duration(end)
		bySeq[iv.Seq] = len(ivs)
		ivs = append(ivs, iv)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("intervals: %w", err)
	}
	_ = rows.Close()

	lrows, err := s.db.QueryContext(ctx, `
SELECT seq, `+labelColumns+` FROM interval_labels WHERE step_id = ? ORDER BY seq, ord`, stepID)
	if err != nil {
		return nil, fmt.Errorf("interval labels: %w", err)
	}
	defer lrows.Close()
	for lrows.Next() {
		var seq int
		l, err := scanLabel(lrows, &seq)
		if err != nil {
			return nil, fmt.Errorf("interval labels: %w", err)
		}
		i, ok := bySeq[seq]
		if !ok {
			return nil, fmt.Errorf("interval labels: no interval %d", seq)
		}
		ivs[i].Labels = append(ivs[i].Labels, l)
	}
	if err := lrows.Err(); err != nil {
		return nil, fmt.Errorf("interval labels: %w", err)
	}
	return ivs, nil
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad stored time %q: %w", s, err)
	}
	return t, nil
}
