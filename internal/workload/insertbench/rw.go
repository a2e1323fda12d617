package insertbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

var _ workload.Step = (*rwStep)(nil)

// rwStep is a read-write step, qrN or qpN (spec "Steps", reference §1.9): per client one
// query actor as fast as it can (range or point queries), and insert and delete actors
// limited to N rows/s each. It runs for a fixed time, not a row count, so every engine is
// measured for the same duration and the achieved write rates are results (SLA).
type rwStep struct {
	stepBase
	point   bool
	rate    int // rows/s per client for the insert and the delete actor
	rpc     int
	deletes bool
	dur     time.Duration

	// gens and qrngs are each client's row generator and query stream, kept across
	// Loads: a step run as slices (workload.Steady) goes on generating the rows the audit
	// expects after the ones already inserted, and its queries do not repeat.
	gens  map[int]*RowGenerator
	qrngs map[int]*rand.Rand
}

func newRWStep(base stepBase, st stepSpec, ib *Params) *rwStep {
	// Reference §1.4 fixup_options: rows per commit never exceeds the rows per second.
	rpc := min(rpcOf(ib, st), st.rate)
	return &rwStep{
		stepBase: base, point: st.point,
		rate: st.rate, rpc: rpc, deletes: ib.Delete, dur: ib.Time,
	}
}

// SteadyTime: a read-write step runs for a fixed time at a constant table size
// (workload.Steady).
func (s *rwStep) SteadyTime() time.Duration { return s.dur }

// Prepare records the baseline if needed and marks the stored expectations open.
func (s *rwStep) Prepare(ctx context.Context, hh engine.Handle) error {
	h, sqlErr := engine.AsSQL(hh)
	if sqlErr != nil {
		return sqlErr
	}
	return s.prepareWrites(ctx, h)
}

// Verify audits every client's table, expecting the rows the insert actors generated.
func (s *rwStep) Verify(ctx context.Context, hh engine.Handle) (string, error) {
	h, sqlErr := engine.AsSQL(hh)
	if sqlErr != nil {
		return "", sqlErr
	}
	return s.p.auditAll(ctx, h, s.Name(), s.rpc)
}

func (s *rwStep) queryLabel() string {
	if s.point {
		return labelPointQuery
	}
	return labelRangeQuery
}

// Load has, per client, a closed-loop query actor and the background insert and delete
// actors on a schedule of rate/rpc statements per second (spec "Rate limiting"). The
// inserter never waits for the deleter here: its achieved rate is what is judged.
func (s *rwStep) Load(_ context.Context, hh engine.Handle) (workload.Load, error) {
	d, err := workload.SQLDialect(hh)
	if err != nil {
		return workload.Load{}, err
	}
	stmtsPerSec := float64(s.rate) / float64(s.rpc)
	q := workload.Group{Label: s.queryLabel(), Role: roleQuery, Unit: workload.UnitOps, ReadOnly: true}
	ins := workload.Group{Label: labelInsert, Role: labelInsert, Unit: workload.UnitRows,
		Rate: stmtsPerSec, RowsPerOp: s.rpc, Background: true}
	del := workload.Group{Label: labelDelete, Role: labelDelete, Unit: workload.UnitRows,
		Rate: stmtsPerSec, RowsPerOp: s.rpc, Background: true}
	var pairs []*pair
	for _, c := range s.p.clients {
		pr, err := newPair(s.deletes, false)
		if err != nil {
			closePairs(pairs)
			return workload.Load{}, fmt.Errorf("insertbench %s client %d: %w", s.Name(), c.id, err)
		}
		pairs = append(pairs, pr)
		qw := newQuerier(s.p, s.Name(), c, d, s.point)
		iw := newInserter(s.p, s.Name(), c, pr, d, s.rpc, 0)
		if s.gens == nil {
			s.gens, s.qrngs = map[int]*RowGenerator{}, map[int]*rand.Rand{}
		}
		if g, ok := s.gens[c.id]; ok {
			iw.gen, qw.rng = g, s.qrngs[c.id]
		} else {
			s.gens[c.id], s.qrngs[c.id] = iw.gen, qw.rng
		}
		q.Workers = append(q.Workers, qw)
		ins.Workers = append(ins.Workers, iw)
		if s.deletes {
			del.Workers = append(del.Workers, newDeleter(s.p, s.Name(), c, pr, d, s.rpc, 0))
		}
	}
	l := workload.Load{Kind: kindReadWrite, Primary: s.queryLabel(), Groups: []workload.Group{q, ins}, Duration: s.dur}
	if s.deletes {
		l.Groups = append(l.Groups, del)
	}
	return l, nil
}
