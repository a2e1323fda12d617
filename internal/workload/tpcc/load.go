package tpcc

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"strconv"
	"sync/atomic"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

// The loader builds the schema as TPC-C's clause 4.3.3.1 populates it, in jobs that
// loaders take in turn (an atomic counter): the item table; per warehouse, its
// warehouse, districts and stock; per district, its customers with their history and
// its orders with their order lines and new orders. Each job draws from a stream of its
// own (workload.Stream of the seed and the job's name), so the data is the same
// whichever loader runs it and however many there are. An op is one multi-row INSERT.

const (
	batchRows  = 1000    // rows per INSERT at most
	batchBytes = 1 << 19 // bytes per INSERT at most (customer rows are ~700 bytes)
)

// job is one part of the load: a name (its stream's) and the INSERTs it sends.
type job struct {
	name string
	run  func(r *rand.Rand, yield func(sql string, rows int64) bool)
}

// jobs are every job of the load, in the order loaders take them.
func (pl *plan) jobs() []job {
	out := []job{{name: "item", run: pl.loadItems}}
	for w := 1; w <= pl.p.Warehouses; w++ {
		out = append(out, job{name: "warehouse " + strconv.Itoa(w), run: func(r *rand.Rand, y func(string, int64) bool) { pl.loadWarehouse(r, w, y) }})
		for d := 1; d <= districtsPerW; d++ {
			out = append(out, job{name: fmt.Sprintf("district %d/%d", w, d), run: func(r *rand.Rand, y func(string, int64) bool) { pl.loadDistrict(r, w, d, y) }})
		}
	}
	return out
}

// inserter accumulates the rows of one table's multi-row INSERT.
type inserter struct {
	head  string
	buf   []byte
	rows  int64
	yield func(string, int64) bool
	stop  bool
}

func newInserter(table string, y func(string, int64) bool) *inserter {
	return &inserter{head: "INSERT INTO " + table + " VALUES ", yield: y}
}

// row starts a row: the caller appends its values (without parentheses) to the buffer
// returned and passes it to end.
func (in *inserter) row() []byte {
	if in.rows == 0 {
		in.buf = append(in.buf[:0], in.head...)
	} else {
		in.buf = append(in.buf, ',')
	}
	return append(in.buf, '(')
}

// end ends the row started by row, and sends the INSERT once it is full.
func (in *inserter) end(b []byte) {
	in.buf = append(b, ')')
	in.rows++
	if in.rows >= batchRows || len(in.buf) >= batchBytes {
		in.flush()
	}
}

// flush sends the rows accumulated, if any.
func (in *inserter) flush() {
	if in.rows == 0 || in.stop {
		return
	}
	if !in.yield(string(in.buf), in.rows) {
		in.stop = true
	}
	in.rows = 0
}

func appendQ(b []byte, r *rand.Rand, lo, hi int) []byte {
	b = append(b, '\'')
	b = appendAString(b, r, lo, hi)
	return append(b, "',"...)
}

func appendAddr(b []byte, r *rand.Rand) []byte {
	b = appendQ(b, r, 10, 20)
	b = appendQ(b, r, 10, 20)
	b = appendQ(b, r, 10, 20)
	b = append(b, '\'', byte('A'+r.IntN(26)), byte('A'+r.IntN(26)), '\'', ',', '\'')
	b = appendNString(b, r, 4)
	return append(b, "11111'"...)
}

func appendInts(b []byte, vs ...int) []byte {
	for _, v := range vs {
		b = strconv.AppendInt(b, int64(v), 10)
		b = append(b, ',')
	}
	return b
}

func (pl *plan) loadItems(r *rand.Rand, y func(string, int64) bool) {
	in := newInserter("item", y)
	for i := 1; i <= pl.p.items && !in.stop; i++ {
		b := appendInts(in.row(), i, between(r, 1, 10000))
		b = appendQ(b, r, 14, 24)
		b = appendMoney(b, int64(between(r, 100, 10000)))
		b = append(b, ",'"...)
		b = appendData(b, r)
		in.end(append(b, '\''))
	}
	in.flush()
}

func (pl *plan) loadWarehouse(r *rand.Rand, w int, y func(string, int64) bool) {
	in := newInserter("warehouse", y)
	b := appendInts(in.row(), w)
	b = append(b, "300000.00,"...)
	b = appendFrac(b, between(r, 0, 2000))
	b = append(b, ',')
	b = appendQ(b, r, 6, 10)
	in.end(appendAddr(b, r))
	in.flush()
	in = newInserter("district", y)
	for d := 1; d <= districtsPerW; d++ {
		b := appendInts(in.row(), d, w)
		b = append(b, "30000.00,"...) // W_YTD is their sum
		b = appendFrac(b, between(r, 0, 2000))
		b = append(b, ',')
		b = appendInts(b, pl.p.customers+1)
		b = appendQ(b, r, 6, 10)
		in.end(appendAddr(b, r))
	}
	in.flush()
	in = newInserter("stock", y)
	for i := 1; i <= pl.p.items && !in.stop; i++ {
		b := appendInts(in.row(), i, w, between(r, 10, 100))
		for range districtsPerW {
			b = appendQ(b, r, 24, 24)
		}
		b = append(b, "0,0,0,'"...)
		b = appendData(b, r)
		in.end(append(b, '\''))
	}
	in.flush()
}

func (pl *plan) loadDistrict(r *rand.Rand, w, d int, y func(string, int64) bool) {
	nc := pl.p.customers
	in := newInserter("customer", y)
	for c := 1; c <= nc && !in.stop; c++ {
		b := appendInts(in.row(), c, d, w)
		b = appendQ(b, r, 8, 16)
		b = append(b, "'OE','"...)
		b = append(b, pl.loadLastName(r, c)...)
		b = append(b, "',"...)
		b = appendAddr(b, r)
		b = append(b, ",'"...)
		b = appendNString(b, r, 16)
		b = append(b, "',CURRENT_TIMESTAMP,"...)
		if r.IntN(10) == 0 {
			b = append(b, "'BC',"...)
		} else {
			b = append(b, "'GC',"...)
		}
		b = append(b, "50000.00,"...)
		b = appendFrac(b, between(r, 0, 5000))
		b = append(b, ",-10.00,10.00,1,0,"...)
		b = appendQ(b, r, 300, 500)
		in.end(b[:len(b)-1])
	}
	in.flush()
	in = newInserter("history", y)
	for c := 1; c <= nc && !in.stop; c++ {
		b := appendInts(in.row(), c, d, w, d, w)
		b = append(b, "CURRENT_TIMESTAMP,10.00,"...)
		b = appendQ(b, r, 12, 24)
		in.end(b[:len(b)-1])
	}
	in.flush()
	// Orders: the customers in a random permutation; the last 900 (of 3,000) undelivered.
	perm := r.Perm(nc)
	firstNew := nc - nc*newOrdersPerDis/stdCustomers + 1
	cnt := make([]int, nc+1)
	in = newInserter("orders", y)
	for o := 1; o <= nc && !in.stop; o++ {
		cnt[o] = between(r, 5, 15)
		b := appendInts(in.row(), o, d, w, perm[o-1]+1)
		b = append(b, "CURRENT_TIMESTAMP,"...)
		if o < firstNew {
			b = appendInts(b, between(r, 1, 10))
		} else {
			b = append(b, "NULL,"...)
		}
		b = appendInts(b, cnt[o])
		in.end(append(b, '1')) // o_all_local
	}
	in.flush()
	in = newInserter("order_line", y)
	for o := 1; o <= nc && !in.stop; o++ {
		for n := 1; n <= cnt[o]; n++ {
			b := appendInts(in.row(), o, d, w, n, between(r, 1, pl.p.items), w)
			if o < firstNew {
				b = append(b, "CURRENT_TIMESTAMP,5,0.00,"...)
			} else {
				b = append(b, "NULL,5,"...)
				b = appendMoney(b, int64(between(r, 1, 999999)))
				b = append(b, ',')
			}
			b = appendQ(b, r, 24, 24)
			in.end(b[:len(b)-1])
		}
	}
	in.flush()
	in = newInserter("new_order", y)
	for o := firstNew; o <= nc && !in.stop; o++ {
		b := appendInts(in.row(), o, d, w)
		in.end(b[:len(b)-1])
	}
	in.flush()
}

// loadLastName is customer c's last name at load: c-1 for the first 1,000, then
// NURand(255, 0, 999) with the load's C (clause 4.3.3.1), within the names there are
// when a test loads fewer customers.
func (pl *plan) loadLastName(r *rand.Rand, c int) string {
	if c <= 1000 {
		return lastName(c - 1)
	}
	return lastName(nuRand(r, 255, pl.c.lastLoad, 0, pl.names()-1))
}

// loadStep creates the nine tables and fills them.
type loadStep struct {
	workload.StepBase
	p *plan
}

var _ workload.Step = (*loadStep)(nil)

// Prepare drops and creates the tables.
func (s *loadStep) Prepare(ctx context.Context, hh engine.Handle) error {
	h, err := engine.AsSQL(hh)
	if err != nil {
		return err
	}
	sess, err := h.NewSession(ctx)
	if err != nil {
		return fmt.Errorf("%s %s: %w", Name, s.Name(), err)
	}
	defer sess.Close()
	for _, q := range createStmts(h.Dialect()) {
		if _, err := sess.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s %s: create tables: %w", Name, s.Name(), err)
		}
	}
	return nil
}

// Load has the loaders, each taking the next job until none is left.
func (s *loadStep) Load(context.Context, engine.Handle) (workload.Load, error) {
	jobs := s.p.jobs()
	next := new(atomic.Int64)
	g := workload.Group{Label: labelInsert, Role: "load", Unit: workload.UnitRows, UntilDone: true}
	for range s.p.loaders {
		g.Workers = append(g.Workers, &loader{step: s.Name(), jobs: jobs, next: next, seed: s.p.seed})
	}
	return workload.Load{Kind: "load", Primary: labelInsert, Groups: []workload.Group{g}}, nil
}

// Verify counts the rows of the tables TPC-C sizes exactly and checks the consistency
// conditions.
func (s *loadStep) Verify(ctx context.Context, hh engine.Handle) (string, error) {
	return s.p.verify(ctx, hh, s.Name(), true)
}

// loader is one loading client.
type loader struct {
	step string
	jobs []job
	next *atomic.Int64
	seed int64

	s    engine.Session
	cur  string // the job running
	pull func() (string, int64, bool)
	stop func()
}

func (l *loader) Init(_ context.Context, s engine.Session) error {
	l.s = s
	return nil
}

func (l *loader) Ready(context.Context) error { return nil }

// Op sends the next INSERT of its job, taking the next job when its own is done. An
// INSERT aborted by a conflict (SQLite's busy database) is sent again.
func (l *loader) Op(ctx context.Context) (int64, error) {
	for {
		if l.pull == nil {
			i := int(l.next.Add(1)) - 1
			if i >= len(l.jobs) {
				return 0, workload.ErrDone
			}
			j := l.jobs[i]
			r := workload.Stream(l.seed, Name, "load", j.name)
			l.cur = j.name
			l.pull, l.stop = iter.Pull2(func(y func(string, int64) bool) { j.run(r, y) })
		}
		q, rows, ok := l.pull()
		if !ok {
			l.stop()
			l.pull = nil
			continue
		}
		for attempt := 1; ; attempt++ {
			_, err := l.s.Exec(ctx, q)
			if err == nil {
				return rows, nil
			}
			if !errors.Is(err, engine.ErrConflict) || attempt >= maxAttempts || ctx.Err() != nil {
				return 0, fmt.Errorf("%s %s: load %s: %w", Name, l.step, l.cur, err)
			}
		}
	}
}

func (l *loader) Close() error {
	if l.stop != nil {
		l.stop()
		l.pull = nil
	}
	return nil
}
