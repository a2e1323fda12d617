package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
)

// results reads runs in bulk: one query per table for all the runs, keyed by a JSON array
// of ids (json_each) so the number of runs never meets SQLite's limit on parameters. The
// queries read one snapshot of the store (Store.snapshot), so a run being written is read
// as it was at one instant: every interval with its HW figures and labels, never an
// interval's HW row without the interval a later commit added.
func (s *Store) results(ctx context.Context, ids []int64) ([]Run, error) {
	if len(ids) == 0 {
		return []Run{}, nil
	}
	idJSON, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("store: read runs: %w", err)
	}
	q, end, err := s.snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: read runs: %w", err)
	}
	defer end()
	runs, err := s.bulkRuns(ctx, q, string(idJSON))
	if err != nil {
		return nil, err
	}
	out := make([]Run, 0, len(ids))
	byID := make(map[int64]*Run, len(runs))
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	for _, id := range ids {
		if byID[id] == nil {
			return nil, fmt.Errorf("run %d not found: \"dbperf runs\" lists the stored runs", id)
		}
	}
	b := bulk{s: s, q: q, ctx: ctx, ids: string(idJSON), steps: map[int64]*Step{}}
	if err := b.read(byID); err != nil {
		return nil, err
	}
	for _, id := range ids {
		out = append(out, *byID[id])
	}
	return out, nil
}

// stepsOf is the steps of the runs whose ids are the query's one parameter.
func (s *Store) stepsOf() string {
	return `(SELECT id FROM steps WHERE run_id IN ` + s.db.d.idsIn() + `)`
}

func (s *Store) bulkRuns(ctx context.Context, q querier, ids string) ([]Run, error) {
	rows, err := q.QueryContext(ctx, `
SELECT id, workload, workload_version, engine, engine_version, engine_settings, label, seed,
	params, env, status, started_at, finished_at, pid, pid_start_ticks, boot_id, step_groups, origin, host
FROM runs WHERE id IN `+s.db.d.idsIn(), ids)
	if err != nil {
		return nil, fmt.Errorf("store: read runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		var settings, params, env, started, groups, host string
		var finished sql.NullString
		var proc procIdentity
		if err := rows.Scan(&r.ID, &r.Workload, &r.WorkloadVersion, &r.Engine, &r.EngineVersion,
			&settings, &r.Label, &r.Seed, &params, &env, &r.Status, &started, &finished,
			&proc.PID, &proc.StartTicks, &proc.BootID, &groups, &r.Origin, &host); err != nil {
			return nil, fmt.Errorf("store: read runs: %w", err)
		}
		if err := json.Unmarshal([]byte(settings), &r.EngineSettings); err != nil {
			return nil, fmt.Errorf("store: read run %d: engine settings: %w", r.ID, err)
		}
		dec := json.NewDecoder(strings.NewReader(params))
		dec.UseNumber() // keep 1000000 an integer, not 1e+06
		if err := dec.Decode(&r.Params); err != nil {
			return nil, fmt.Errorf("store: read run %d: params: %w", r.ID, err)
		}
		if err := json.Unmarshal([]byte(env), &r.Env); err != nil {
			return nil, fmt.Errorf("store: read run %d: env: %w", r.ID, err)
		}
		if err := json.Unmarshal([]byte(groups), &r.StepGroups); err != nil {
			return nil, fmt.Errorf("store: read run %d: step groups: %w", r.ID, err)
		}
		if len(r.StepGroups) == 0 {
			r.StepGroups = nil // '[]': as written from a nil slice
		}
		if r.StartedAt, err = parseTime(started); err != nil {
			return nil, fmt.Errorf("store: read run %d: %w", r.ID, err)
		}
		if finished.Valid {
			if r.FinishedAt, err = parseTime(finished.String); err != nil {
				return nil, fmt.Errorf("store: read run %d: %w", r.ID, err)
			}
		}
		r.Status = liveStatus(r.Status, proc, host)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: read runs: %w", err)
	}
	return out, nil
}

// bulk reads the steps of a set of runs and everything that hangs off them.
type bulk struct {
	s     *Store
	q     querier // every query of one read: one snapshot (Store.snapshot)
	ctx   context.Context
	ids   string // JSON array of run ids
	steps map[int64]*Step
	// ivIndex finds an interval by step id and seq.
	ivIndex map[[2]int64]*metrics.Interval
}

func (b *bulk) query(what, q string, each func(*sql.Rows) error) error {
	rows, err := b.q.QueryContext(b.ctx, q, b.ids)
	if err != nil {
		return fmt.Errorf("store: read %s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return fmt.Errorf("store: read %s: %w", what, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: read %s: %w", what, err)
	}
	return nil
}

func (b *bulk) read(runs map[int64]*Run) error {
	// Steps, in run and seq order, appended to their runs.
	type stepRef struct{ run, idx int64 }
	refs := map[int64]stepRef{}
	err := b.query("steps", `
SELECT run_id, id, seq, name, status, error, started_at, seconds, kind, primary_label,
	audit_status, audit_detail, client_cpu_sec, note, db_size_bytes, step_group
FROM steps WHERE run_id IN `+b.s.db.d.idsIn()+` ORDER BY run_id, seq`, func(rows *sql.Rows) error {
		var runID int64
		var st Step
		var status, started string
		var dbSize sql.NullInt64
		r := &st.Result
		if err := rows.Scan(&runID, &st.ID, &st.Seq, &r.Name, &status, &r.Error, &started, &r.Seconds, &r.Kind, &r.Primary,
			&r.Audit.Status, &r.Audit.Detail, &r.ClientCPUSec, &r.Note, &dbSize, &st.Group); err != nil {
			return err
		}
		r.Status = metrics.Status(status)
		r.DBSizeBytes, r.DBSizeKnown = dbSize.Int64, dbSize.Valid
		var err error
		if r.StartedAt, err = parseTime(started); err != nil {
			return fmt.Errorf("step %d: %w", st.Seq, err)
		}
		run := runs[runID]
		refs[st.ID] = stepRef{runID, int64(len(run.Steps))}
		run.Steps = append(run.Steps, st)
		return nil
	})
	if err != nil {
		return err
	}
	// Pointers into the runs' step slices are stable from here on.
	for id, ref := range refs {
		b.steps[id] = &runs[ref.run].Steps[ref.idx]
	}

	err = b.query("step labels", `SELECT step_id, `+labelSelect+` FROM step_labels WHERE step_id IN `+b.s.stepsOf()+` ORDER BY step_id, ord`,
		func(rows *sql.Rows) error {
			var stepID int64
			l, err := scanLabel(rows, &stepID)
			if err != nil {
				return err
			}
			st, err := b.step(stepID)
			if err != nil {
				return err
			}
			st.Result.Labels = append(st.Result.Labels, l)
			return nil
		})
	if err != nil {
		return err
	}

	err = b.query("step label histograms", `SELECT step_id, label, service, response FROM step_label_hists WHERE step_id IN `+b.s.stepsOf(),
		func(rows *sql.Rows) error {
			var stepID int64
			var label string
			var h metrics.LabelHist
			if err := rows.Scan(&stepID, &label, &h.Service, &h.Response); err != nil {
				return err
			}
			if len(h.Response) == 0 {
				h.Response = nil
			}
			st, err := b.step(stepID)
			if err != nil {
				return err
			}
			for i := range st.Result.Labels {
				if st.Result.Labels[i].Label == label {
					st.Result.Labels[i].Hist = &h
				}
			}
			return nil
		})
	if err != nil {
		return err
	}

	b.ivIndex = map[[2]int64]*metrics.Interval{}
	err = b.query("intervals", `SELECT step_id, seq, start_ns, end_ns, client_cpu_sec FROM intervals WHERE step_id IN `+b.s.stepsOf()+` ORDER BY step_id, seq`,
		func(rows *sql.Rows) error {
			var stepID, start, end int64
			var iv metrics.Interval
			if err := rows.Scan(&stepID, &iv.Seq, &start, &end, &iv.ClientCPUSec); err != nil {
				return err
			}
			iv.Start, iv.End = time.Duration(start), time.Duration(end)
			st, err := b.step(stepID)
			if err != nil {
				return err
			}
			st.Intervals = append(st.Intervals, iv)
			return nil
		})
	if err != nil {
		return err
	}
	for id, st := range b.steps {
		for i := range st.Intervals {
			b.ivIndex[[2]int64{id, int64(st.Intervals[i].Seq)}] = &st.Intervals[i]
		}
	}

	err = b.query("interval labels", `SELECT step_id, seq, `+labelSelect+` FROM interval_labels WHERE step_id IN `+b.s.stepsOf()+` ORDER BY step_id, seq, ord`,
		func(rows *sql.Rows) error {
			var stepID, seq int64
			l, err := scanLabel(rows, &stepID, &seq)
			if err != nil {
				return err
			}
			iv, err := b.interval(stepID, seq)
			if err != nil {
				return err
			}
			iv.Labels = append(iv.Labels, l)
			return nil
		})
	if err != nil {
		return err
	}

	err = b.query("interval hw", `SELECT step_id, seq, `+hwColumns+` FROM interval_hw WHERE step_id IN `+b.s.stepsOf(),
		func(rows *sql.Rows) error {
			var stepID, seq int64
			h, err := scanHW(rows, &stepID, &seq)
			if err != nil {
				return err
			}
			iv, err := b.interval(stepID, seq)
			if err != nil {
				return err
			}
			iv.HW = h
			return nil
		})
	if err != nil {
		return err
	}

	err = b.query("interval metrics", `SELECT step_id, seq, name, value FROM interval_metrics WHERE step_id IN `+b.s.stepsOf(),
		func(rows *sql.Rows) error {
			var stepID, seq int64
			var name string
			var v float64
			if err := rows.Scan(&stepID, &seq, &name, &v); err != nil {
				return err
			}
			iv, err := b.interval(stepID, seq)
			if err != nil {
				return err
			}
			if iv.Metrics == nil {
				iv.Metrics = map[string]float64{}
			}
			iv.Metrics[name] = v
			return nil
		})
	if err != nil {
		return err
	}

	err = b.query("step hw", `SELECT step_id, `+hwColumns+` FROM step_hw WHERE step_id IN `+b.s.stepsOf(),
		func(rows *sql.Rows) error {
			var stepID int64
			h, err := scanHW(rows, &stepID)
			if err != nil {
				return err
			}
			st, err := b.step(stepID)
			if err != nil {
				return err
			}
			st.Result.HW = h
			return nil
		})
	if err != nil {
		return err
	}

	err = b.query("connection CPU", `SELECT step_id, role, sessions, cpu_sec FROM step_conn_cpu WHERE step_id IN `+b.s.stepsOf()+` ORDER BY step_id, `+b.s.db.d.insertOrder(),
		func(rows *sql.Rows) error {
			var stepID int64
			var c metrics.ConnCPU
			if err := rows.Scan(&stepID, &c.Role, &c.Sessions, &c.CPUSec); err != nil {
				return err
			}
			st, err := b.step(stepID)
			if err != nil {
				return err
			}
			st.Result.ConnCPU = append(st.Result.ConnCPU, c)
			return nil
		})
	if err != nil {
		return err
	}

	err = b.query("metrics", `SELECT step_id, name, value FROM step_metrics WHERE step_id IN `+b.s.stepsOf(),
		func(rows *sql.Rows) error {
			var stepID int64
			var name string
			var v float64
			if err := rows.Scan(&stepID, &name, &v); err != nil {
				return err
			}
			st, err := b.step(stepID)
			if err != nil {
				return err
			}
			if st.Result.Metrics == nil {
				st.Result.Metrics = map[string]float64{}
			}
			st.Result.Metrics[name] = v
			return nil
		})
	if err != nil {
		return err
	}

	if err := b.readProfiles(); err != nil {
		return err
	}
	if err := b.readDiag(); err != nil {
		return err
	}

	// A step left running reads back as interrupted once its run is no longer running,
	// with Seconds set to the end of its last interval.
	for _, r := range runs {
		if r.Status == RunRunning {
			continue
		}
		for i := range r.Steps {
			st := &r.Steps[i]
			if st.Result.Status == stepRunning {
				st.Result.Status = metrics.StatusInterrupted
				if n := len(st.Intervals); n > 0 {
					st.Result.Seconds = st.Intervals[n-1].End.Seconds()
				}
			}
		}
	}
	return nil
}

func (b *bulk) step(id int64) (*Step, error) {
	st, ok := b.steps[id]
	if !ok {
		return nil, fmt.Errorf("no step %d", id)
	}
	return st, nil
}

func (b *bulk) interval(stepID, seq int64) (*metrics.Interval, error) {
	iv, ok := b.ivIndex[[2]int64{stepID, seq}]
	if !ok {
		return nil, errors.New("no interval " + fmt.Sprint(seq) + " in step " + fmt.Sprint(stepID))
	}
	return iv, nil
}

// querier runs a read's queries in the store's dialect: the pool, a transaction or one
// connection's snapshot.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// sqlConn is one pooled connection running this package's queries in the store's dialect.
type sqlConn struct {
	*sql.Conn
	d dialect
}

func (x sqlConn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return x.Conn.QueryContext(ctx, x.d.rebind(q), x.d.args(args)...)
}

// snapshot opens a read of one consistent state of the store; end finishes it. PostgreSQL:
// a read-only REPEATABLE READ transaction (one snapshot for all its statements). SQLite: a
// DEFERRED transaction on one connection, begun by hand because the pool's transactions
// are BEGIN IMMEDIATE (they would take the write lock and make a reader wait for a run's
// writes, and a run's writes for the reader); in WAL mode its first SELECT fixes the
// snapshot and writers go on. A Store bound to a transaction reads in it.
func (s *Store) snapshot(ctx context.Context) (querier, func(), error) {
	if s.tx != nil {
		return *s.tx, func() {}, nil
	}
	if s.db.d == postgresDialect {
		tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
		if err != nil {
			return nil, nil, err
		}
		return tx, func() { _ = tx.Rollback() }, nil
	}
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, err := conn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		conn.Close()
		return nil, nil, err
	}
	return sqlConn{Conn: conn, d: s.db.d}, func() {
		// Rolled back even when ctx is done: the connection goes back to the pool idle.
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // drop it, not reuse it mid-transaction
		}
		conn.Close()
	}, nil
}
