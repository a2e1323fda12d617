package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// StepStatement is one statement shape's cost over a step (schema 10): the difference of
// the server's counters at the step's start and end, and the shape's plan at its end.
// Times are seconds; counters the server does not keep are 0.
type StepStatement struct {
	QueryID string
	Query   string
	Calls   int64
	Plans   int64
	PlanSec float64
	ExecSec float64
	Rows    int64
	// RowsExamined is MariaDB's; the blocks and WAL bytes are PostgreSQL's.
	RowsExamined                                        int64
	BlocksHit, BlocksRead, BlocksDirtied, BlocksWritten int64
	WALBytes                                            int64
	JITSec                                              float64
	// Plan is EXPLAIN's JSON ("" when none: PlanNote says why).
	Plan     string
	PlanNote string
	// CustomPlan is EXPLAIN's JSON with the parameters of one of the step's executions
	// (schema 12; "" when none); CustomPlanNote names those parameters, or says why there
	// is none.
	CustomPlan     string
	CustomPlanNote string
}

// StepWait is how many of a step's wait samples found a role's sessions in one wait class
// (CPU, Client:ClientRead, IO:DataFileRead, …), sampled Hz times a second.
type StepWait struct {
	Role    string
	Wait    string
	Samples int64
	Hz      float64
}

// PutStepDiag stores a step's statements and waits, replacing those an earlier call
// stored.
func (s *Store) PutStepDiag(ctx context.Context, stepID int64, stmts []StepStatement, waits []StepWait) error {
	err := s.inTx(ctx, func(tx sqlTx) error {
		for _, t := range []string{"step_statements", "step_waits"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE step_id = ?`, stepID); err != nil {
				return err
			}
		}
		for _, st := range stmts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO step_statements (step_id, query_id, query, calls, plans, plan_sec, exec_sec, rows, rows_examined,
	shared_blks_hit, shared_blks_read, shared_blks_dirtied, shared_blks_written, wal_bytes, jit_sec, plan, plan_note, custom_plan, custom_plan_note)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				stepID, st.QueryID, st.Query, st.Calls, st.Plans, st.PlanSec, st.ExecSec, st.Rows, st.RowsExamined,
				st.BlocksHit, st.BlocksRead, st.BlocksDirtied, st.BlocksWritten, st.WALBytes, st.JITSec, st.Plan, st.PlanNote,
				st.CustomPlan, st.CustomPlanNote); err != nil {
				return fmt.Errorf("statement %s: %w", st.QueryID, err)
			}
		}
		for _, w := range waits {
			if _, err := tx.ExecContext(ctx, `INSERT INTO step_waits (step_id, role, wait, samples, hz) VALUES (?, ?, ?, ?, ?)`,
				stepID, w.Role, w.Wait, w.Samples, w.Hz); err != nil {
				return fmt.Errorf("wait %s/%s: %w", w.Role, w.Wait, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: step %d statements and waits: %w", stepID, err)
	}
	return nil
}

// readDiag reads the steps' statements and waits (bulk.read).
func (b *bulk) readDiag() error {
	err := b.query("statements", `SELECT step_id, query_id, query, calls, plans, plan_sec, exec_sec, rows, rows_examined,
	shared_blks_hit, shared_blks_read, shared_blks_dirtied, shared_blks_written, wal_bytes, jit_sec, plan, plan_note,
	custom_plan, custom_plan_note
FROM step_statements WHERE step_id IN `+b.s.stepsOf(),
		func(rows *sql.Rows) error {
			var stepID int64
			var st StepStatement
			if err := rows.Scan(&stepID, &st.QueryID, &st.Query, &st.Calls, &st.Plans, &st.PlanSec, &st.ExecSec, &st.Rows, &st.RowsExamined,
				&st.BlocksHit, &st.BlocksRead, &st.BlocksDirtied, &st.BlocksWritten, &st.WALBytes, &st.JITSec, &st.Plan, &st.PlanNote,
				&st.CustomPlan, &st.CustomPlanNote); err != nil {
				return err
			}
			step, err := b.step(stepID)
			if err != nil {
				return err
			}
			step.Statements = append(step.Statements, st)
			return nil
		})
	if err != nil {
		return err
	}
	err = b.query("waits", `SELECT step_id, role, wait, samples, hz FROM step_waits WHERE step_id IN `+b.s.stepsOf(),
		func(rows *sql.Rows) error {
			var stepID int64
			var w StepWait
			if err := rows.Scan(&stepID, &w.Role, &w.Wait, &w.Samples, &w.Hz); err != nil {
				return err
			}
			step, err := b.step(stepID)
			if err != nil {
				return err
			}
			step.Waits = append(step.Waits, w)
			return nil
		})
	if err != nil {
		return err
	}
	for _, st := range b.steps {
		SortStatements(st.Statements)
		slices.SortFunc(st.Waits, func(a, b StepWait) int {
			return cmp.Or(strings.Compare(a.Role, b.Role), strings.Compare(a.Wait, b.Wait))
		})
	}
	return nil
}

// SortStatements orders statements most execution plus planning time first, then by id.
func SortStatements(s []StepStatement) {
	slices.SortFunc(s, func(a, b StepStatement) int {
		return cmp.Or(cmp.Compare(b.ExecSec+b.PlanSec, a.ExecSec+a.PlanSec), strings.Compare(a.QueryID, b.QueryID))
	})
}
