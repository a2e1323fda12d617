package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
)

// HasOrigin reports the id of the run with this origin in the store, if there is one.
func (s *Store) HasOrigin(ctx context.Context, origin string) (int64, bool, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, `SELECT id FROM runs WHERE origin = ? AND origin <> '' ORDER BY id LIMIT 1`, origin).Scan(&id)
	switch {
	case err == nil:
		return id, true, nil
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("store: find run %s: %w", origin, err)
}

// Import writes a finished run read from another store (Results) into this one, through
// the writer, so it reads back the same: its meta, steps (with their groups, totals, HW,
// connection CPU and metrics), intervals, status and times; only the ids are this store's.
// A run whose origin is already here is not written again (copied twice adds nothing):
// Import then returns that run's id and false. The origin is set when the run is
// complete, so a copy interrupted half-way is copied again, not taken as done.
func (s *Store) Import(ctx context.Context, r Run) (int64, bool, error) {
	if r.Status == RunRunning {
		return 0, false, fmt.Errorf("store: import run %d: it is still running", r.ID)
	}
	if r.Origin == "" {
		return 0, false, fmt.Errorf("store: import run %d: it has no origin", r.ID)
	}
	if id, ok, err := s.HasOrigin(ctx, r.Origin); err != nil || ok {
		return id, false, err
	}
	meta := r.RunMeta
	meta.Origin = "pending:" + r.Origin
	id, err := s.BeginRun(ctx, meta)
	if err != nil {
		return 0, false, err
	}
	var last time.Time // the end of the last step, for a run that has no finish time
	for _, st := range r.Steps {
		sid, err := s.BeginStep(ctx, id, st.Seq, st.Result.Name, st.Group, st.Result.StartedAt)
		if err != nil {
			return 0, false, err
		}
		if err := s.AppendIntervals(ctx, sid, st.Intervals); err != nil {
			return 0, false, err
		}
		res := st.Result
		if res.Status == metrics.Status(stepRunning) {
			res.Status = metrics.StatusInterrupted // as it reads back once its run ended
		}
		if err := s.FinishStep(ctx, sid, res); err != nil {
			return 0, false, err
		}
		if stepEnd := res.StartedAt.Add(time.Duration(res.Seconds * float64(time.Second))); stepEnd.After(last) {
			last = stepEnd
		}
	}
	end := r.FinishedAt
	if end.IsZero() {
		end = r.StartedAt
		if last.After(end) {
			end = last
		}
	}
	status := r.Status
	if status != RunOK && status != RunFailed {
		status = RunInterrupted
	}
	if err := s.FinishRun(ctx, id, status, end); err != nil {
		return 0, false, err
	}
	// FinishRun always stores a finish time; a run that had none (its process died)
	// keeps none, and the origin marks the copy complete.
	var finished any
	if !r.FinishedAt.IsZero() {
		finished = formatTime(r.FinishedAt)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE runs SET origin = ?, finished_at = ? WHERE id = ?`, r.Origin, finished, id); err != nil {
		return 0, false, fmt.Errorf("store: import run %d: %w", r.ID, err)
	}
	return id, true, nil
}
