package insertbench

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

// maxRefreshQueries is how often a point-query actor re-reads max(transactionid)
// (reference §1.7: at thread start and every 100 queries).
const maxRefreshQueries = 100

var _ workload.Worker = (*querier)(nil)

// querier is a client's query actor in the read-write steps (reference §1.7), closed loop.
// Range queries pick the market, register or pdc query uniformly; point queries look up
// RowsPerQuery ids drawn uniformly in [min, max), where min is the deleter's published
// estimate (or the minimum read at Init, whichever is larger) and max is re-read in Ready.
type querier struct {
	step  string
	c     *client
	d     engine.Dialect
	point bool
	ib    queryShape
	rng   *rand.Rand

	ranges         [rangeKinds]engine.Stmt
	ids            engine.Stmt
	getMin, getMax engine.Stmt
	args           engine.Args
	lo, hi         int64 // id range of point queries: [lo, hi)
	sinceMax       int
}

// queryShape holds the bounds the queries draw from.
type queryShape struct {
	rowsPerQuery                  int
	products, cashregisters, maxP int
}

func newQuerier(p *plan, step string, c *client, d engine.Dialect, point bool) *querier {
	return &querier{
		step: step, c: c, d: d, point: point,
		ib: queryShape{
			rowsPerQuery: p.ib.RowsPerQuery,
			products:     p.ib.Products, cashregisters: p.ib.Cashregisters, maxP: p.ib.MaxPrice,
		},
		rng: stream(p.seed, step, roleQuery, c.id),
	}
}

// Init prepares the queries; point-query actors also read the id range.
func (w *querier) Init(ctx context.Context, s engine.Session) error {
	var err error
	if !w.point {
		for k := range w.ranges {
			if w.ranges[k], err = s.Prepare(ctx, rangeSQL(w.d, w.c.table, k, w.ib.rowsPerQuery)); err != nil {
				return w.fail("prepare range query", err)
			}
		}
		return nil
	}
	if w.ids, err = s.Prepare(ctx, pointSQL(w.d, w.c.table, w.ib.rowsPerQuery)); err != nil {
		return w.fail("prepare point query", err)
	}
	if w.getMin, err = s.Prepare(ctx, minSQL(w.c.table)); err != nil {
		return w.fail("prepare min", err)
	}
	if w.getMax, err = s.Prepare(ctx, maxSQL(w.c.table)); err != nil {
		return w.fail("prepare max", err)
	}
	if w.lo, _, err = w.getMin.QueryInt(ctx, nil); err != nil {
		return w.fail("read min", err)
	}
	return w.readMax(ctx)
}

func (w *querier) readMax(ctx context.Context) error {
	v, _, err := w.getMax.QueryInt(ctx, nil)
	if err != nil {
		return w.fail("read max", err)
	}
	w.hi, w.sinceMax = v, 0
	return nil
}

// Ready re-reads max(transactionid) every 100 point queries, outside the timed op.
func (w *querier) Ready(ctx context.Context) error {
	if w.point && w.sinceMax >= maxRefreshQueries {
		return w.readMax(ctx)
	}
	return nil
}

// Op runs one query and returns the rows it fetched.
func (w *querier) Op(ctx context.Context) (int64, error) {
	var (
		rows int64
		err  error
	)
	if w.point {
		lo := max(w.lo, w.c.minEst.Load())
		w.args.Reset()
		for range w.ib.rowsPerQuery {
			id := lo
			if w.hi > lo {
				id += w.rng.Int64N(w.hi - lo)
			}
			w.args.Int(id)
		}
		w.sinceMax++
		rows, err = w.ids.Query(ctx, &w.args)
	} else {
		k := w.rng.IntN(rangeKinds)
		var bound int
		switch k {
		case rangeMarket:
			bound = w.ib.products
		case rangeRegister:
			bound = w.ib.cashregisters
		default:
			bound = w.ib.maxP
		}
		w.args.Reset()
		w.args.Int(int64(w.rng.IntN(bound)))
		rows, err = w.ranges[k].Query(ctx, &w.args)
	}
	if err != nil {
		return rows, w.fail("query", err)
	}
	return rows, nil
}

// Close releases the statements.
func (w *querier) Close() error {
	return workload.CloseStmts(w.ranges[0], w.ranges[1], w.ranges[2], w.ids, w.getMin, w.getMax)
}

func (w *querier) fail(what string, err error) error {
	return fmt.Errorf("insertbench %s client %d: %s: %w", w.step, w.c.id, what, err)
}
