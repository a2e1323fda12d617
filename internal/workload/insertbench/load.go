package insertbench

import (
	"context"
	"fmt"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

var _ workload.Step = (*writeStep)(nil)

// writeStep is l.i0, l.i1 or l.i2 (spec "Steps", reference §1.9): every client inserts
// quota rows, rpc per statement, as fast as it can; in l.i1 and l.i2 a delete actor per
// client removes as many rows from the head of the table, keeping its size constant.
type writeStep struct {
	stepBase
	// create: l.i0 drops and creates the tables (primary key only) in Prepare.
	create  bool
	deletes bool
	rpc     int
	quota   int64 // rows per client
}

// Prepare creates the tables for l.i0 (reference §1.2, `--setup`); other steps record the
// baseline if needed.
func (s *writeStep) Prepare(ctx context.Context, hh engine.Handle) error {
	h, sqlErr := engine.AsSQL(hh)
	if sqlErr != nil {
		return sqlErr
	}
	if !s.create {
		return s.prepareWrites(ctx, h)
	}
	sess, err := h.NewSession(ctx)
	if err != nil {
		return fmt.Errorf("insertbench %s: create tables: %w", s.Name(), err)
	}
	defer sess.Close()
	d := h.Dialect()
	for _, c := range s.p.clients {
		stmts := append([]string{d.DropTable(c.table)}, d.CreateTable(c.table, tableColumns(d))...)
		for _, q := range stmts {
			if _, err := sess.Exec(ctx, q); err != nil {
				return fmt.Errorf("insertbench %s client %d: create table %s: %w", s.Name(), c.id, c.table, err)
			}
		}
	}
	if err := clearStates(ctx, sess, d, s.p.tables); err != nil {
		return fmt.Errorf("insertbench %s: forget the old tables' expectations in %s: %w", s.Name(), stateTable, err)
	}
	s.p.resetTables()
	return nil
}

// Verify audits every client's table; the rows inserted in the step are expected as the
// insert actors generated them, rpc per statement.
func (s *writeStep) Verify(ctx context.Context, hh engine.Handle) (string, error) {
	h, sqlErr := engine.AsSQL(hh)
	if sqlErr != nil {
		return "", sqlErr
	}
	return s.p.auditAll(ctx, h, s.Name(), s.rpc)
}

// Load has one insert actor per client (closed loop, until its quota is done) and, for
// l.i1/l.i2 with deletes on, one delete actor per client (closed loop, deleting as many
// rows as the inserter inserts; the step ends when both are done). The step's throughput is the insert rate.
func (s *writeStep) Load(_ context.Context, hh engine.Handle) (workload.Load, error) {
	d, err := workload.SQLDialect(hh)
	if err != nil {
		return workload.Load{}, err
	}
	ins := workload.Group{Label: labelInsert, Role: labelInsert, Unit: workload.UnitRows, UntilDone: true}
	// The deleter deletes as many rows as the inserter inserts, so the table's size is the
	// same after the step as before it (the reference's queue, §1.5).
	del := workload.Group{Label: labelDelete, Role: labelDelete, Unit: workload.UnitRows, UntilDone: true}
	var pairs []*pair
	for _, c := range s.p.clients {
		pr, err := newPair(s.deletes, true)
		if err != nil {
			closePairs(pairs)
			return workload.Load{}, fmt.Errorf("insertbench %s client %d: %w", s.Name(), c.id, err)
		}
		pairs = append(pairs, pr)
		ins.Workers = append(ins.Workers, newInserter(s.p, s.Name(), c, pr, d, s.rpc, s.quota))
		if s.deletes {
			del.Workers = append(del.Workers, newDeleter(s.p, s.Name(), c, pr, d, s.rpc, s.quota))
		}
	}
	l := workload.Load{Kind: kindLoad, Primary: labelInsert, Groups: []workload.Group{ins}}
	if s.deletes {
		l.Groups = append(l.Groups, del)
	}
	return l, nil
}
