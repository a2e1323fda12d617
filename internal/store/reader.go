package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
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
	limit := "" // written into the query: both databases take a literal, not the same "none"
	if f.Limit > 0 {
		limit = fmt.Sprintf("LIMIT %d", f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, `
SELECT r.id, r.started_at, r.workload, r.engine, r.engine_version, r.label, r.status,
	r.pid, r.pid_start_ticks, r.boot_id,
	(SELECT count(*) FROM steps s WHERE s.run_id = r.id), r.host
FROM runs r
WHERE ? = '' OR r.label = ?
ORDER BY r.id DESC
`+limit, f.Label, f.Label)
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
			&proc.PID, &proc.StartTicks, &proc.BootID, &rs.Steps, &rs.Host); err != nil {
			return nil, fmt.Errorf("store: list runs: %w", err)
		}
		if rs.StartedAt, err = parseTime(started); err != nil {
			return nil, fmt.Errorf("store: list runs: run %d: %w", rs.ID, err)
		}
		rs.Status = liveStatus(rs.Status, proc, rs.Host)
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
//
// It reads everything in a fixed number of queries whatever the number of runs (a report
// over a thousand runs must stay fast; see BenchmarkReport1000Runs in internal/report).
func (s *Store) Results(ctx context.Context, ids []int64) ([]Run, error) {
	return s.results(ctx, ids)
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

// liveStatus is how a stored run status reads: running only while its process lives. A
// run another host writes (a shared store) is taken as stored: its process cannot be
// seen from here.
func liveStatus(status string, proc procIdentity, host string) string {
	if status == RunRunning && (host == "" || host == localHost()) && !proc.alive() {
		return RunInterrupted
	}
	return status
}

// localHost is this machine's name as runs record it (env hostname); "" when unknown.
func localHost() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return h
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad stored time %q: %w", s, err)
	}
	return t, nil
}
