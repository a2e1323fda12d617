package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
)

// HasOrigin reports the id of the run with this origin in the store, if there is one.
func (s *Store) HasOrigin(ctx context.Context, origin string) (int64, bool, error) {
	return hasOrigin(ctx, s.db, origin)
}

func hasOrigin(ctx context.Context, q queryRower, origin string) (int64, bool, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM runs WHERE origin = ? AND origin <> '' ORDER BY id LIMIT 1`, origin).Scan(&id)
	switch {
	case err == nil:
		return id, true, nil
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("store: find run %s: %w", origin, err)
}

// importHook, when set (by tests), is called after each write of Import's transaction
// with the number of writes made so far; an error aborts the copy as a killed one would
// stop.
var importHook func(ctx context.Context, writes int) error

// Import writes a finished run read from another store (Results) into this one, through
// the writer, so it reads back the same: its meta, steps (with their groups, totals, HW,
// connection CPU, metrics and CPU profiles), intervals, status and times; only the ids are this store's.
//
// The run is written in one transaction, so readers (and a copy killed half-way) see it
// whole or not at all, and it is keyed by its origin: the transaction first claims the
// origin (SQLite: the write lock, taken at BEGIN; PostgreSQL: an advisory lock on the
// origin) and looks for it, so a run already here, or copied by a concurrent Import of
// any process, is not written again: Import then returns that run's id and false. The
// schema holds one run per origin (a unique index) whatever writes.
func (s *Store) Import(ctx context.Context, r Run) (int64, bool, error) {
	if r.Status == RunRunning {
		return 0, false, fmt.Errorf("store: import run %d: it is still running", r.ID)
	}
	if r.Origin == "" {
		return 0, false, fmt.Errorf("store: import run %d: it has no origin", r.ID)
	}
	// Most runs of a repeated copy are here already: say so without taking the write lock.
	if id, ok, err := s.HasOrigin(ctx, r.Origin); err != nil || ok {
		return id, false, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, fmt.Errorf("store: import run %d: %w", r.ID, err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op once committed
	id, added, err := s.importTx(ctx, tx, r)
	if err != nil || !added {
		return id, false, err
	}
	if err := tx.Commit(); err != nil {
		return 0, false, fmt.Errorf("store: import run %d: commit: %w", r.ID, err)
	}
	return id, true, nil
}

// importTx claims r's origin in tx and, when no run has it, writes r through a Store
// bound to tx.
func (s *Store) importTx(ctx context.Context, tx sqlTx, r Run) (int64, bool, error) {
	if s.db.d == postgresDialect {
		// Held until the transaction ends: a concurrent Import of the same run waits here,
		// then finds it below.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?::bigint)`, originLockKey(r.Origin)); err != nil {
			return 0, false, fmt.Errorf("store: import run %d: lock its origin: %w", r.ID, err)
		}
	}
	if id, ok, err := hasOrigin(ctx, tx, r.Origin); err != nil || ok {
		return id, false, err
	}
	w := &Store{db: s.db, path: s.path, tx: &tx}
	writes := 0
	wrote := func() error {
		writes++
		if importHook != nil {
			return importHook(ctx, writes)
		}
		return nil
	}
	id, err := w.BeginRun(ctx, r.RunMeta) // with r's origin
	if err != nil {
		return 0, false, err
	}
	if err := wrote(); err != nil {
		return 0, false, err
	}
	var last time.Time // the end of the last step, for a run that has no finish time
	for _, st := range r.Steps {
		sid, err := w.BeginStep(ctx, id, st.Seq, st.Result.Name, st.Group, st.Result.StartedAt)
		if err != nil {
			return 0, false, err
		}
		if err := wrote(); err != nil {
			return 0, false, err
		}
		if err := w.AppendIntervals(ctx, sid, st.Intervals); err != nil {
			return 0, false, err
		}
		if err := wrote(); err != nil {
			return 0, false, err
		}
		res := st.Result
		if res.Status == metrics.Status(stepRunning) {
			res.Status = metrics.StatusInterrupted // as it reads back once its run ended
		}
		if err := w.FinishStep(ctx, sid, res); err != nil {
			return 0, false, err
		}
		if err := wrote(); err != nil {
			return 0, false, err
		}
		if len(st.Profiles) > 0 {
			if err := w.PutStepProfiles(ctx, sid, st.Profiles); err != nil {
				return 0, false, err
			}
			if err := wrote(); err != nil {
				return 0, false, err
			}
		}
		if len(st.Statements) > 0 || len(st.Waits) > 0 {
			if err := w.PutStepDiag(ctx, sid, st.Statements, st.Waits); err != nil {
				return 0, false, err
			}
			if err := wrote(); err != nil {
				return 0, false, err
			}
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
	if err := w.FinishRun(ctx, id, status, end); err != nil {
		return 0, false, err
	}
	if err := wrote(); err != nil {
		return 0, false, err
	}
	// FinishRun always stores a finish time; a run that had none (its process died)
	// keeps none.
	if r.FinishedAt.IsZero() {
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET finished_at = NULL WHERE id = ?`, id); err != nil {
			return 0, false, fmt.Errorf("store: import run %d: %w", r.ID, err)
		}
	}
	return id, true, nil
}

// originLockKey is the PostgreSQL advisory lock key of a run's origin.
func originLockKey(origin string) int64 {
	h := fnv.New64a()
	h.Write([]byte("dbperf import\x00" + origin))
	return int64(h.Sum64())
}
