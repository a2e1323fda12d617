package sysbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"unsafe"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

var (
	_ workload.Step   = (*loadStep)(nil)
	_ workload.Worker = (*loader)(nil)
)

// loadStep is the load (§3.1, sysbench's prepare; run.sh's setup=1 before
// point-query.warm): it drops and creates the tables, inserts --table-size rows into each
// in multi-row INSERTs of 1,000 rows with ids assigned by the engine (1..N), k uniform in
// [1, N] and c and pad as §3.1 says, then creates the secondary index k_<n> on k. One
// loader per table runs at once (sysbench prepares them one after the other on one
// thread), each followed by its table's index. The step's throughput is inserted rows
// per second over the whole step, index builds included, as the reference's "Load
// seconds … ips" line.
type loadStep struct {
	stepBase
}

// Prepare drops and creates the tables (primary key only).
func (s *loadStep) Prepare(ctx context.Context, hh engine.Handle) error {
	h, sqlErr := engine.AsSQL(hh)
	if sqlErr != nil {
		return sqlErr
	}
	sess, err := h.NewSession(ctx)
	if err != nil {
		return fmt.Errorf("sysbench %s: create tables: %w", s.Name(), err)
	}
	defer sess.Close()
	d := h.Dialect()
	for _, t := range s.p.tables {
		stmts := append([]string{d.DropTable(t.name)}, d.CreateTable(t.name, tableColumns(d))...)
		for _, q := range stmts {
			if _, err := sess.Exec(ctx, q); err != nil {
				return fmt.Errorf("sysbench %s: create table %s: %w", s.Name(), t.name, err)
			}
		}
	}
	// The tables are (re)created empty: that is the baseline.
	s.p.baseline.Reset(func() {
		for _, t := range s.p.tables {
			t.count.Store(0)
			t.sumK.Store(0)
		}
	})
	return nil
}

// Load has one loader per table and one index builder per table that waits for its
// loader; the step ends when every index exists.
func (s *loadStep) Load(_ context.Context, hh engine.Handle) (workload.Load, error) {
	d, err := workload.SQLDialect(hh)
	if err != nil {
		return workload.Load{}, err
	}
	ins := workload.Group{Label: labelInsert, Role: roleInsert, Unit: workload.UnitRows, UntilDone: true}
	idx := workload.Group{Label: labelIndex, Role: roleIndex, Unit: workload.UnitRows, UntilDone: true}
	for _, t := range s.p.tables {
		loaded := make(chan struct{})
		ins.Workers = append(ins.Workers, &loader{
			step: s.Name(), t: t, d: d, size: s.p.p.TableSize, loaded: loaded,
			rng: workload.Stream(s.p.seed, Name, s.Name(), "table", strconv.Itoa(t.n)),
		})
		idx.Workers = append(idx.Workers, &workload.Indexer{
			Who: Name + " " + s.Name() + " " + t.name, After: loaded, Indexed: t.count.Load,
			Stmts: d.CreateIndexes(t.name, []engine.Index{{Name: indexName(t.n), Columns: []string{"k"}}}),
		})
	}
	return workload.Load{Kind: kindLoad, Primary: labelInsert, Groups: []workload.Group{ins, idx}}, nil
}

// Verify is the data check: every table holds its rows and their sum(k).
func (s *loadStep) Verify(ctx context.Context, hh engine.Handle) (string, error) {
	h, sqlErr := engine.AsSQL(hh)
	if sqlErr != nil {
		return "", sqlErr
	}
	return s.p.checkAll(ctx, h, s.Name())
}

// loader inserts one table's rows, loadBatch per statement, then closes loaded.
type loader struct {
	step   string
	t      *table
	d      engine.Dialect
	size   int64
	rng    *rand.Rand
	loaded chan struct{}

	full, tail engine.Stmt
	args       engine.Args
	buf        []byte
	inserted   int64
}

// Init prepares the batch INSERT and the smaller last one.
func (w *loader) Init(ctx context.Context, s engine.Session) error {
	var err error
	if w.full, err = s.Prepare(ctx, insertSQL(w.d, w.t.name, int(min(loadBatch, w.size)))); err != nil {
		return fmt.Errorf("sysbench %s %s: prepare insert: %w", w.step, w.t.name, err)
	}
	if n := w.size % loadBatch; n != 0 && w.size > loadBatch {
		if w.tail, err = s.Prepare(ctx, insertSQL(w.d, w.t.name, int(n))); err != nil {
			return fmt.Errorf("sysbench %s %s: prepare insert: %w", w.step, w.t.name, err)
		}
	}
	return nil
}

// Ready never waits.
func (w *loader) Ready(context.Context) error { return nil }

// Op inserts one batch and returns its rows; once the table is full it lets the index
// builder go and returns ErrDone.
func (w *loader) Op(ctx context.Context) (int64, error) {
	left := w.size - w.inserted
	if left <= 0 {
		if w.loaded != nil {
			close(w.loaded)
			w.loaded = nil
		}
		return 0, workload.ErrDone
	}
	st, n := w.full, min(left, loadBatch)
	if n < loadBatch && w.tail != nil {
		st = w.tail
	}
	w.args.Reset()
	var sum int64
	for range n {
		k := 1 + w.rng.Int64N(w.size)
		sum += k
		w.args.Int(k)
		w.buf = appendDigits(w.buf[:0], w.rng, cGroups)
		w.args.Text(view(w.buf))
		w.buf = appendDigits(w.buf[:0], w.rng, padGroups)
		w.args.Text(view(w.buf))
	}
	rows, err := st.Exec(ctx, &w.args)
	if err != nil {
		return 0, fmt.Errorf("sysbench %s %s: insert: %w", w.step, w.t.name, err)
	}
	if rows != n {
		return 0, fmt.Errorf("sysbench %s %s: an INSERT of %d rows reported %d", w.step, w.t.name, n, rows)
	}
	w.inserted += n
	w.t.count.Add(n)
	w.t.sumK.Add(sum)
	return n, nil
}

// Close releases the statements.
func (w *loader) Close() error { return workload.CloseStmts(w.full, w.tail) }

// view is b as a string without copying: for engine.Args.Text, which copies it.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
