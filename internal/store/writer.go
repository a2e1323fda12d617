package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
)

// timeLayout stores instants as UTC RFC 3339 with a fixed nine-digit fraction, so the
// text sorts like the instants and reads well in the sqlite3 shell.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// newOrigin is a new run's identity across stores: 128 random bits, hex.
func newOrigin() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("run origin: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// stepRunning is the stored status of a step that has begun and not finished; it reads
// back as metrics.StatusInterrupted once its run is no longer running.
const stepRunning = "running"

// BeginRun records a new run with status running and returns its id. It also records this
// process's identity so that readers can tell a run whose process died (see Runs).
func (s *Store) BeginRun(ctx context.Context, meta RunMeta) (int64, error) {
	settings, err := json.Marshal(meta.EngineSettings)
	if err != nil {
		return 0, fmt.Errorf("store: begin run: encode engine settings: %w", err)
	}
	params, err := json.Marshal(meta.Params)
	if err != nil {
		return 0, fmt.Errorf("store: begin run: encode params: %w", err)
	}
	env, err := json.Marshal(meta.Env)
	if err != nil {
		return 0, fmt.Errorf("store: begin run: encode env: %w", err)
	}
	groups := []byte("[]")
	if len(meta.StepGroups) > 0 {
		if groups, err = json.Marshal(meta.StepGroups); err != nil {
			return 0, fmt.Errorf("store: begin run: encode step groups: %w", err)
		}
	}
	self := selfIdentity()
	origin := meta.Origin
	if origin == "" {
		if origin, err = newOrigin(); err != nil {
			return 0, fmt.Errorf("store: begin run: %w", err)
		}
	}
	var id int64
	err = s.inTx(ctx, func(tx sqlTx) error {
		// RETURNING (SQLite 3.35+, PostgreSQL): PostgreSQL's driver has no LastInsertId.
		return tx.QueryRowContext(ctx, `
INSERT INTO runs (workload, workload_version, engine, engine_version, engine_settings, label,
	seed, params, env, status, started_at, pid, pid_start_ticks, boot_id, step_groups, origin, host)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			meta.Workload, meta.WorkloadVersion, meta.Engine, meta.EngineVersion, string(settings), meta.Label,
			meta.Seed, string(params), string(env), RunRunning, formatTime(meta.StartedAt),
			self.PID, self.StartTicks, self.BootID, string(groups), origin, meta.Env["hostname"]).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("store: begin run of %s on %s: %w", meta.Workload, meta.Engine, err)
	}
	return id, nil
}

// BeginStep records step number seq of a run, in group (one of the run's StepGroups, ""
// for none), with status running, so that its intervals can be appended as they come,
// and returns the step's id.
func (s *Store) BeginStep(ctx context.Context, runID int64, seq int, name, group string, startedAt time.Time) (int64, error) {
	var id int64
	err := s.inTx(ctx, func(tx sqlTx) error {
		return tx.QueryRowContext(ctx, `
INSERT INTO steps (run_id, seq, name, step_group, status, started_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
			runID, seq, name, group, stepRunning, formatTime(startedAt)).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("store: begin step %d (%s) of run %d: %w", seq, name, runID, err)
	}
	return id, nil
}

// AppendIntervals adds intervals (and their per-label figures) to a step.
func (s *Store) AppendIntervals(ctx context.Context, stepID int64, ivs []metrics.Interval) error {
	if len(ivs) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(tx sqlTx) error {
		ivStmt, err := tx.PrepareContext(ctx, `
INSERT INTO intervals (step_id, seq, start_ns, end_ns, client_cpu_sec) VALUES (?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer ivStmt.Close()
		lblStmt, err := tx.PrepareContext(ctx, `
INSERT INTO interval_labels (step_id, seq, ord, `+labelColumns+`) VALUES (?, ?, ?, `+labelPlaceholders+`)`)
		if err != nil {
			return err
		}
		defer lblStmt.Close()
		for _, iv := range ivs {
			if _, err := ivStmt.ExecContext(ctx, stepID, iv.Seq, int64(iv.Start), int64(iv.End), iv.ClientCPUSec); err != nil {
				return fmt.Errorf("interval %d: %w", iv.Seq, err)
			}
			if iv.HW != nil {
				args := append([]any{stepID, iv.Seq}, hwArgs(iv.HW)...)
				if _, err := tx.ExecContext(ctx, `INSERT INTO interval_hw (step_id, seq, `+hwColumns+`) VALUES (?, ?, `+hwPlaceholders+`)`, args...); err != nil {
					return fmt.Errorf("interval %d hw: %w", iv.Seq, err)
				}
			}
			for i, l := range iv.Labels {
				args := append([]any{stepID, iv.Seq, i}, labelArgs(l)...)
				if _, err := lblStmt.ExecContext(ctx, args...); err != nil {
					return fmt.Errorf("interval %d label %q: %w", iv.Seq, l.Label, err)
				}
			}
			for _, name := range slices.Sorted(maps.Keys(iv.Metrics)) {
				if _, err := tx.ExecContext(ctx, `INSERT INTO interval_metrics (step_id, seq, name, value) VALUES (?, ?, ?, ?)`,
					stepID, iv.Seq, name, iv.Metrics[name]); err != nil {
					return fmt.Errorf("interval %d metric %s: %w", iv.Seq, name, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: append intervals for step %d: %w", stepID, err)
	}
	return nil
}

// FinishStep stores a step's result: status, error, timing, per-label totals, audit,
// client CPU, note, database size, HW, per-connection CPU and HW-efficiency metrics. It
// replaces what an earlier call stored.
func (s *Store) FinishStep(ctx context.Context, stepID int64, r metrics.StepResult) error {
	switch r.Status {
	case metrics.StatusOK, metrics.StatusFailed, metrics.StatusInterrupted, metrics.StatusSkipped:
	default:
		return fmt.Errorf("store: finish step %d: status %q is not ok, failed, interrupted or skipped", stepID, r.Status)
	}
	var dbSize any
	if r.DBSizeKnown {
		dbSize = r.DBSizeBytes
	}
	err := s.inTx(ctx, func(tx sqlTx) error {
		res, err := tx.ExecContext(ctx, `
UPDATE steps SET name = ?, status = ?, error = ?, started_at = ?, seconds = ?, kind = ?,
	primary_label = ?, audit_status = ?, audit_detail = ?, client_cpu_sec = ?, note = ?, db_size_bytes = ?
WHERE id = ?`,
			r.Name, string(r.Status), r.Error, formatTime(r.StartedAt), r.Seconds, r.Kind,
			r.Primary, r.Audit.Status, r.Audit.Detail, r.ClientCPUSec, r.Note, dbSize, stepID)
		if err != nil {
			return err
		}
		if err := mustAffectOne(res, "step"); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM step_labels WHERE step_id = ?`, stepID); err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, `
INSERT INTO step_labels (step_id, ord, `+labelColumns+`) VALUES (?, ?, `+labelPlaceholders+`)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i, l := range r.Labels {
			if _, err := stmt.ExecContext(ctx, append([]any{stepID, i}, labelArgs(l)...)...); err != nil {
				return fmt.Errorf("label %q: %w", l.Label, err)
			}
		}
		if err := writeLabelHists(ctx, tx, stepID, r.Labels); err != nil {
			return err
		}
		return writeStepHW(ctx, tx, stepID, r)
	})
	if err != nil {
		return fmt.Errorf("store: finish step %d (%s): %w", stepID, r.Name, err)
	}
	return nil
}

// FinishRun sets a run's final status (ok, failed or interrupted) and end time.
func (s *Store) FinishRun(ctx context.Context, runID int64, status string, finishedAt time.Time) error {
	switch status {
	case RunOK, RunFailed, RunInterrupted:
	default:
		return fmt.Errorf("store: finish run %d: status %q is not ok, failed or interrupted", runID, status)
	}
	err := s.inTx(ctx, func(tx sqlTx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, finished_at = ? WHERE id = ?`,
			status, formatTime(finishedAt), runID)
		if err != nil {
			return err
		}
		return mustAffectOne(res, "run")
	})
	if err != nil {
		return fmt.Errorf("store: finish run %d: %w", runID, err)
	}
	return nil
}

// inTx runs fn in a transaction (BEGIN IMMEDIATE, see open) and commits it. A Store
// bound to a transaction (Import's) runs fn in that one and leaves the commit to its owner.
func (s *Store) inTx(ctx context.Context, fn func(sqlTx) error) error {
	if s.tx != nil {
		return fn(*s.tx)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func mustAffectOne(res sql.Result, what string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("no such %s", what)
	}
	return nil
}

// labelColumns are the columns of step_labels and interval_labels that hold one
// metrics.LabelStats, in the order of labelArgs; labelSelect reads them back in the order
// of scanLabel, event_count of rows stored before schema 5 (NULL) as statement_count.
const (
	labelColumnsV1 = `label, role, unit, statement_count, row_count, error_count, late_count, missed_count,
	p50_us, p90_us, p99_us, p999_us, max_us, has_response,
	response_p50_us, response_p90_us, response_p99_us, response_p999_us, response_max_us,
	target_per_sec, background`
	labelColumns = labelColumnsV1 + `, event_count, p9999_us, response_p9999_us`
	// p9999_us of rows stored before schema 6 (NULL) reads as 0: not kept, absent in reports.
	labelSelect = labelColumnsV1 + `, COALESCE(event_count, statement_count), COALESCE(p9999_us, 0), COALESCE(response_p9999_us, 0)`
)

const labelPlaceholders = `?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?`

func labelArgs(l metrics.LabelStats) []any {
	return []any{
		l.Label, l.Role, string(l.Unit), l.Statements, l.Rows, l.Errors, l.Late, l.Missed,
		l.Service.P50, l.Service.P90, l.Service.P99, l.Service.P999, l.Service.Max, l.HasResponse,
		l.Response.P50, l.Response.P90, l.Response.P99, l.Response.P999, l.Response.Max,
		l.TargetPerSec, l.Background, l.Events, l.Service.P9999, l.Response.P9999,
	}
}

// scanLabel scans labelSelect preceded by the given extra destinations.
func scanLabel(rows *sql.Rows, extra ...any) (metrics.LabelStats, error) {
	var l metrics.LabelStats
	var unit string
	dest := append(extra,
		&l.Label, &l.Role, &unit, &l.Statements, &l.Rows, &l.Errors, &l.Late, &l.Missed,
		&l.Service.P50, &l.Service.P90, &l.Service.P99, &l.Service.P999, &l.Service.Max, &l.HasResponse,
		&l.Response.P50, &l.Response.P90, &l.Response.P99, &l.Response.P999, &l.Response.Max,
		&l.TargetPerSec, &l.Background, &l.Events, &l.Service.P9999, &l.Response.P9999)
	if err := rows.Scan(dest...); err != nil {
		return metrics.LabelStats{}, err
	}
	l.Unit = metrics.Unit(unit)
	return l, nil
}

// writeLabelHists stores the step's latency histograms per label (schema 11).
func writeLabelHists(ctx context.Context, tx sqlTx, stepID int64, labels []metrics.LabelStats) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM step_label_hists WHERE step_id = ?`, stepID); err != nil {
		return err
	}
	for _, l := range labels {
		if l.Hist == nil || l.Hist.Service == nil {
			continue
		}
		resp := l.Hist.Response
		if resp == nil {
			resp = []byte{}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO step_label_hists (step_id, label, service, response) VALUES (?, ?, ?, ?)`,
			stepID, l.Label, l.Hist.Service, resp); err != nil {
			return fmt.Errorf("label %q histograms: %w", l.Label, err)
		}
	}
	return nil
}
