package sysbench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

var (
	_ workload.Step   = (*testStep)(nil)
	_ workload.Noter  = (*testStep)(nil)
	_ workload.Worker = (*tester)(nil)
)

// maxAttempts bounds how often one event is run again after conflicts (deadlocks, lock
// wait timeouts, …) before the step fails.
const maxAttempts = 100

// testStep is one test of the catalogue (§3.3) at one range and thread count: --threads
// workers (sysbench's threads, one connection each) running the test's event as fast as
// they can, or at --rate events per second over all of them, for the test's duration.
// Its primary label is the test's name and counts statements as sysbench's "queries"
// (BEGIN and COMMIT included), so its throughput is QPS; the label's events are
// sysbench's transactions. scan counts the rows it scans instead (the reference's Krps).
type testStep struct {
	stepBase
	t       test
	variant string
	rng     int // the range, for the tests that take one
	threads int
	dur     time.Duration

	// retries counts events run again after a conflict with another thread's.
	retries atomic.Int64
	// rngs are the threads' random streams, kept across Loads: a test run as slices
	// (workload.Steady) continues each thread's events instead of repeating them.
	rngs map[int]*rand.Rand
}

// SteadyTime: a test runs for a fixed time (workload.Steady).
func (s *testStep) SteadyTime() time.Duration { return s.dur }

// Load has one group of --threads testers.
func (s *testStep) Load(_ context.Context, hh engine.Handle) (workload.Load, error) {
	h, sqlErr := engine.AsSQL(hh)
	if sqlErr != nil {
		return workload.Load{}, sqlErr
	}
	g := workload.Group{Label: s.t.name, Role: roleQuery, Unit: workload.UnitOps,
		StatementsPerOp: s.t.statements(), ReadOnly: !s.t.writes()}
	if s.t.kind == kScan {
		g.Unit, g.RowsPerOp = workload.UnitRows, int(s.p.p.TableSize)
	}
	if s.p.p.Rate > 0 {
		g.Rate = s.p.p.Rate / float64(s.threads)
	}
	d := h.Dialect()
	for i := 1; i <= s.threads; i++ {
		g.Workers = append(g.Workers, newTester(s, d, i))
	}
	kind := kindRead
	if s.t.writes() {
		kind = kindWrite
	}
	return workload.Load{Kind: kind, Primary: s.t.name, Groups: []workload.Group{g}, Duration: s.dur}, nil
}

// Verify is the data check after a test that writes; a read test checks nothing.
func (s *testStep) Verify(ctx context.Context, hh engine.Handle) (string, error) {
	h, sqlErr := engine.AsSQL(hh)
	if sqlErr != nil {
		return "", sqlErr
	}
	if !s.t.writes() {
		return "", nil
	}
	return s.p.checkAll(ctx, h, s.Name())
}

// Note says how many events were run again after a conflict.
func (s *testStep) Note() string {
	if n := s.retries.Load(); n > 0 {
		return fmt.Sprintf("%d events rolled back and run again after a conflict with another thread's (deadlock, lock wait timeout, serialization failure, busy database, or a row deleted and inserted again concurrently); sysbench ignores the same errors", n)
	}
	return ""
}

// Statements of a tester, per table (index in tableStmts).
const (
	sPoint    = iota // SELECT c … id=?
	sInlist          // SELECT … IN (…)
	sSel             // SELECT c/… BETWEEN (read-only's simple range, range-*)
	sSum             // SELECT SUM(k) … BETWEEN
	sOrder           // SELECT c … BETWEEN … ORDER BY c
	sDistinct        // SELECT DISTINCT c … BETWEEN … ORDER BY c
	sCount           // SELECT count(c) … BETWEEN
	sScan            // SELECT * … LENGTH(c) < 0
	sUpdIdx          // UPDATE … k=k+1
	sUpdNon          // UPDATE … c=?
	sUpdIn           // UPDATE … c=? … IN (…)
	sDel             // DELETE … RETURNING k
	sInsID           // INSERT (id, k, c, pad)
	sIns             // INSERT (k, c, pad)
	nStmts
)

type tableStmts [nStmts]engine.Stmt

// delta is what an event did to a table, applied to the table's expectation only once
// the event committed.
type delta struct{ count, sum int64 }

// tester is one sysbench thread: its own session, random stream and reused buffers.
type tester struct {
	s    *testStep
	id   int // 1-based
	d    engine.Dialect
	rng  *rand.Rand
	zipf *zipf
	size int64
	ntab int

	st                      []tableStmts
	begin, commit, rollback engine.Stmt
	inTx                    bool
	args                    engine.Args
	wait                    workload.Waiter // the backoff before a retry
	text                    []byte
	pend                    []delta
}

func newTester(s *testStep, d engine.Dialect, id int) *tester {
	if s.rngs == nil {
		s.rngs = map[int]*rand.Rand{}
	}
	rng, ok := s.rngs[id]
	if !ok {
		rng = workload.Stream(s.p.seed, Name, s.Name(), "thread", strconv.Itoa(id))
		s.rngs[id] = rng
	}
	w := &tester{s: s, id: id, d: d, size: s.p.p.TableSize, ntab: len(s.p.tables), rng: rng}
	if s.t.kind == kUpdateNonIndex && s.t.ids == idsZipf {
		w.zipf = newZipf(w.size, zipfExp)
	}
	w.pend = make([]delta, w.ntab)
	return w
}

// Init prepares the statements the test sends, on every table: server-side (--prepared,
// the default) where sysbench prepares them, on the client (sent as text) for BEGIN,
// COMMIT, ROLLBACK, the insert test's INSERT and scan, as sysbench sends those.
func (w *tester) Init(ctx context.Context, s engine.Session) error {
	t := w.s.t
	prep := func(q string, server bool) (engine.Stmt, error) {
		if server && w.s.p.p.Prepared {
			return s.Prepare(ctx, q)
		}
		return s.PrepareClient(ctx, q)
	}
	var err error
	fail := func(err error) error { return w.fail(fmt.Errorf("prepare: %w", err)) }
	txn := t.kind == kReadOnly || t.kind == kWriteOnly || t.kind == kReadWrite
	if txn {
		// Transactions that write begin as the engine needs them to queue for its write
		// lock (SQLite: BEGIN IMMEDIATE); elsewhere sysbench's BEGIN.
		begin := "BEGIN"
		if t.writes() {
			begin = w.d.BeginWrite()
		}
		if w.begin, err = prep(begin, false); err != nil {
			return fail(err)
		}
		if w.commit, err = prep("COMMIT", false); err != nil {
			return fail(err)
		}
		if w.rollback, err = prep("ROLLBACK", false); err != nil {
			return fail(err)
		}
	}
	// cols and col of the points-* and range-* tests (oltp_points_covered,
	// oltp_range_covered: --on-id, --covered).
	col, cols := "k", "k"
	if t.onID {
		col, cols = "id", "id"
	}
	if !t.covered {
		cols += ", c"
	}
	w.st = make([]tableStmts, w.ntab)
	for i, tb := range w.s.p.tables {
		need := map[int]string{}
		switch t.kind {
		case kPointQuery:
			need[sPoint] = pointSQL(w.d, tb.name)
		case kRandomPoints:
			need[sInlist] = inlistSQL(w.d, tb.name, "c", "id", w.s.rng)
		case kHotPoints:
			need[sInlist] = inlistSQL(w.d, tb.name, "c", "id", fixedPoints)
		case kPoints:
			need[sInlist] = inlistSQL(w.d, tb.name, cols, col, fixedPoints)
		case kRange:
			need[sSel] = betweenSQL(w.d, tb.name, cols, col, "")
		case kReadOnlyCount:
			need[sCount] = betweenSQL(w.d, tb.name, "count(c)", "id", "")
		case kUpdateIndex:
			need[sUpdIdx] = updateIndexSQL(w.d, tb.name)
		case kUpdateNonIndex:
			need[sUpdNon] = updateNonIndexSQL(w.d, tb.name)
		case kUpdateInlist:
			need[sUpdIn] = updateInlistSQL(w.d, tb.name, fixedPoints)
		case kDelete:
			need[sDel] = deleteSQL(w.d, tb.name)
		}
		if t.kind == kReadOnly || t.kind == kReadWrite {
			need[sPoint] = pointSQL(w.d, tb.name)
			need[sSel] = betweenSQL(w.d, tb.name, "c", "id", "")
			need[sSum] = betweenSQL(w.d, tb.name, "SUM(k)", "id", "")
			need[sOrder] = betweenSQL(w.d, tb.name, "c", "id", " ORDER BY c")
			need[sDistinct] = betweenSQL(w.d, tb.name, "DISTINCT c", "id", " ORDER BY c")
		}
		if t.kind == kWriteOnly || t.kind == kReadWrite {
			need[sUpdIdx] = updateIndexSQL(w.d, tb.name)
			need[sUpdNon] = updateNonIndexSQL(w.d, tb.name)
			need[sDel] = deleteSQL(w.d, tb.name)
			need[sInsID] = insertIDSQL(w.d, tb.name)
		}
		for k, q := range need {
			if w.st[i][k], err = prep(q, true); err != nil {
				return fail(err)
			}
		}
		// Never prepared by sysbench: scan's full scan and the insert test's INSERT.
		switch t.kind {
		case kScan:
			w.st[i][sScan], err = prep(scanSQL(tb.name), false)
		case kInsert:
			w.st[i][sIns], err = prep(insertSQL(w.d, tb.name, 1), false)
		}
		if err != nil {
			return fail(err)
		}
	}
	return nil
}

// Ready never waits.
func (w *tester) Ready(context.Context) error { return nil }

// Op runs one event and returns the rows it read or changed (scan: the rows it scanned).
// An event aborted by a conflict with another thread's is rolled back and run again (up
// to maxAttempts times), as sysbench does with its ignorable errors; what an event did to
// the tables counts for the data check only once it committed.
func (w *tester) Op(ctx context.Context) (int64, error) {
	for attempt := 1; ; attempt++ {
		rows, err := w.event(ctx)
		if err == nil {
			w.apply()
			return rows, nil
		}
		clear(w.pend)
		if w.inTx {
			w.inTx = false
			if _, rerr := w.rollback.Exec(ctx, nil); rerr != nil {
				return 0, w.fail(fmt.Errorf("%w; then ROLLBACK: %w", err, rerr))
			}
		}
		if !w.retryable(err) || attempt >= maxAttempts || ctx.Err() != nil {
			return 0, w.fail(err)
		}
		w.s.retries.Add(1)
		if err := w.wait.Backoff(ctx, attempt); err != nil {
			return 0, w.fail(err)
		}
	}
}

// retryable: conflicts always; a duplicate key where the event deletes a row and inserts
// it again by id (write-only, read-write), which PostgreSQL reports when two threads do
// so to the same row at once.
func (w *tester) retryable(err error) bool {
	if errors.Is(err, engine.ErrConflict) {
		return true
	}
	k := w.s.t.kind
	return (k == kWriteOnly || k == kReadWrite) && errors.Is(err, engine.ErrDuplicateKey)
}

// apply adds the committed event's changes to the tables' expectations.
func (w *tester) apply() {
	for i := range w.pend {
		if p := w.pend[i]; p != (delta{}) {
			w.s.p.tables[i].count.Add(p.count)
			w.s.p.tables[i].sumK.Add(p.sum)
			w.pend[i] = delta{}
		}
	}
}

// event runs the test's statements once (§3.3).
func (w *tester) event(ctx context.Context) (int64, error) {
	t := w.s.t
	switch t.kind {
	case kPointQuery:
		return w.point(ctx)
	case kRandomPoints:
		return w.inlist(ctx, w.s.rng, false)
	case kHotPoints:
		return w.inlist(ctx, fixedPoints, true)
	case kPoints:
		return w.inlist(ctx, fixedPoints, false)
	case kRange:
		return w.between(ctx, sSel, fixedRange+1)
	case kScan:
		return w.scan(ctx)
	case kReadOnlyCount:
		return w.between(ctx, sCount, int64(w.s.rng))
	case kReadOnly, kWriteOnly, kReadWrite:
		return w.transaction(ctx)
	case kUpdateIndex:
		return w.updateIndex(ctx)
	case kUpdateNonIndex:
		return w.updateNonIndex(ctx)
	case kUpdateInlist:
		return w.updateInlist(ctx)
	case kDelete:
		return w.deleteRow(ctx, w.table(), w.randID())
	case kInsert:
		return w.insert(ctx)
	}
	return 0, fmt.Errorf("test %s has no event", t.name)
}

// table picks a table uniformly, as sysbench's get_table_num, for every statement.
func (w *tester) table() int {
	if w.ntab == 1 {
		return 0
	}
	return w.rng.IntN(w.ntab)
}

// randID picks an id uniformly in [1, table size] (--rand-type=uniform).
func (w *tester) randID() int64 { return 1 + w.rng.Int64N(w.size) }

// appendC appends a new c value (§3.1) to the arguments; appendPad a pad value.
func (w *tester) appendC() {
	w.text = appendDigits(w.text[:0], w.rng, cGroups)
	w.args.Text(view(w.text))
}

func (w *tester) appendPad() {
	w.text = appendDigits(w.text[:0], w.rng, padGroups)
	w.args.Text(view(w.text))
}

func (w *tester) point(ctx context.Context) (int64, error) {
	t := w.table()
	w.args.Reset()
	w.args.Int(w.randID())
	return w.st[t][sPoint].Query(ctx, &w.args)
}

// inlist looks up n ids (or k values) at once; hot: always the 100 ids from the middle
// of the table (hot-points).
func (w *tester) inlist(ctx context.Context, n int, hot bool) (int64, error) {
	t := w.table()
	w.args.Reset()
	for i := range n {
		if hot {
			w.args.Int(w.size/2 + 1 + int64(i))
		} else {
			w.args.Int(w.randID())
		}
	}
	return w.st[t][sInlist].Query(ctx, &w.args)
}

// between runs statement which over [x, x+span−1], x uniform.
func (w *tester) between(ctx context.Context, which int, span int64) (int64, error) {
	t := w.table()
	x := w.randID()
	w.args.Reset()
	w.args.Int(x)
	w.args.Int(x + span - 1)
	return w.st[t][which].Query(ctx, &w.args)
}

// scan scans thread i's table (i mod tables, as oltp_scan) and returns its rows: the
// statement matches none, so the rows scanned are the table's.
func (w *tester) scan(ctx context.Context) (int64, error) {
	t := (w.id - 1) % w.ntab
	if _, err := w.st[t][sScan].Query(ctx, nil); err != nil {
		return 0, err
	}
	return w.s.p.tables[t].count.Load(), nil
}

// transaction is read-only, write-only or read-write: BEGIN, the reads, the writes, COMMIT.
func (w *tester) transaction(ctx context.Context) (int64, error) {
	if _, err := w.begin.Exec(ctx, nil); err != nil {
		return 0, err
	}
	w.inTx = true
	var rows int64
	t := w.s.t
	if t.kind != kWriteOnly {
		n, err := w.reads(ctx, t.ro, int64(w.s.rng))
		rows += n
		if err != nil {
			return rows, err
		}
	}
	if t.kind != kReadOnly {
		n, err := w.writes(ctx)
		rows += n
		if err != nil {
			return rows, err
		}
	}
	if _, err := w.commit.Exec(ctx, nil); err != nil {
		return rows, err
	}
	w.inTx = false
	return rows, nil
}

// reads are read-only's: ten point selects, then the range queries of ro over span ids.
func (w *tester) reads(ctx context.Context, ro int, span int64) (int64, error) {
	var rows int64
	for range pointSelect {
		n, err := w.point(ctx)
		rows += n
		if err != nil {
			return rows, err
		}
	}
	for _, q := range [...]struct{ bit, stmt int }{{roSimple, sSel}, {roSum, sSum}, {roOrder, sOrder}, {roDistinct, sDistinct}} {
		if ro&q.bit == 0 {
			continue
		}
		n, err := w.between(ctx, q.stmt, span)
		rows += n
		if err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// writes are write-only's: an index update, a non-index update, and a delete and an
// insert of the same id on one table.
func (w *tester) writes(ctx context.Context) (int64, error) {
	rows, err := w.updateIndex(ctx)
	if err != nil {
		return rows, err
	}
	n, err := w.updateNonIndexID(ctx, w.randID())
	rows += n
	if err != nil {
		return rows, err
	}
	t, x := w.table(), w.randID()
	n, err = w.deleteRow(ctx, t, x)
	rows += n
	if err != nil {
		return rows, err
	}
	k := w.randID()
	w.args.Reset()
	w.args.Int(x)
	w.args.Int(k)
	w.appendC()
	w.appendPad()
	n, err = w.st[t][sInsID].Exec(ctx, &w.args)
	w.pend[t].count += n
	w.pend[t].sum += n * k
	return rows + n, err
}

// updateIndex is k = k+1 on one row: sum(k) grows by the rows changed.
func (w *tester) updateIndex(ctx context.Context) (int64, error) {
	t := w.table()
	w.args.Reset()
	w.args.Int(w.randID())
	n, err := w.st[t][sUpdIdx].Exec(ctx, &w.args)
	w.pend[t].sum += n
	return n, err
}

// updateNonIndex sets c on one row: uniform ids, always id 1 (update-one) or zipfian
// ids (update-zipf).
func (w *tester) updateNonIndex(ctx context.Context) (int64, error) {
	var id int64
	switch w.s.t.ids {
	case idsOne:
		id = 1
	case idsZipf:
		id = w.zipf.next(w.rng)
	default:
		id = w.randID()
	}
	return w.updateNonIndexID(ctx, id)
}

func (w *tester) updateNonIndexID(ctx context.Context, id int64) (int64, error) {
	t := w.table()
	w.args.Reset()
	w.appendC()
	w.args.Int(id)
	return w.st[t][sUpdNon].Exec(ctx, &w.args)
}

// updateInlist sets c on 100 rows by id.
func (w *tester) updateInlist(ctx context.Context) (int64, error) {
	t := w.table()
	w.args.Reset()
	w.appendC()
	for range fixedPoints {
		w.args.Int(w.randID())
	}
	return w.st[t][sUpdIn].Exec(ctx, &w.args)
}

// deleteRow deletes id x of table t; the row's k (RETURNING k) leaves sum(k).
func (w *tester) deleteRow(ctx context.Context, t int, x int64) (int64, error) {
	w.args.Reset()
	w.args.Int(x)
	k, ok, err := w.st[t][sDel].QueryInt(ctx, &w.args)
	if err != nil || !ok {
		return 0, err
	}
	w.pend[t].count--
	w.pend[t].sum -= k
	return 1, nil
}

// insert inserts one row with an engine-assigned id (oltp_insert).
func (w *tester) insert(ctx context.Context) (int64, error) {
	t := w.table()
	k := w.randID()
	w.args.Reset()
	w.args.Int(k)
	w.appendC()
	w.appendPad()
	n, err := w.st[t][sIns].Exec(ctx, &w.args)
	w.pend[t].count += n
	w.pend[t].sum += n * k
	return n, err
}

// Close releases the statements.
func (w *tester) Close() error {
	w.wait.Stop()
	var all []engine.Stmt
	for i := range w.st {
		all = append(all, w.st[i][:]...)
	}
	return workload.CloseStmts(append(all, w.begin, w.commit, w.rollback)...)
}

func (w *tester) fail(err error) error {
	return fmt.Errorf("sysbench %s thread %d: %w", w.s.Name(), w.id, err)
}
