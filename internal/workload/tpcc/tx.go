package tpcc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

// The five transactions (clauses 2.4–2.8) and their mix. Each is one op of a client,
// timed as one event under its own label (workload.Mixer); a rolled-back new-order (1%,
// an unused item number, clause 2.4.2.3) is timed under a label of its own, so the
// new-order label counts committed new orders only: its throughput × 60 is NOPM.

// The kinds of transaction, indexes into txLabels.
const (
	txNewOrder = iota
	txPayment
	txOrderStatus
	txDelivery
	txStockLevel
	txNewOrderRollback
	nKinds
)

var txLabels = [nKinds]string{"new-order", "payment", "order-status", "delivery", "stock-level", "new-order-rollback"}

// pick chooses a transaction with TPC-C's minimum mix as HammerDB's default runs it:
// 45% new-order, 43% payment, 4% each order-status, delivery and stock-level.
func pick(r *rand.Rand) int {
	switch n := r.IntN(100); {
	case n < 45:
		return txNewOrder
	case n < 88:
		return txPayment
	case n < 92:
		return txOrderStatus
	case n < 96:
		return txDelivery
	}
	return txStockLevel
}

// maxAttempts bounds how often one transaction is run again after conflicts.
const maxAttempts = 100

// errRollback is new-order's rollback on an unused item number: not a failure.
var errRollback = errors.New("new-order: unused item number, rolled back")

// stmts are a client's prepared statements.
type stmts struct {
	begin, beginRO, commit, rollback engine.Stmt

	noCust, noDist, noDistUpd, noOrder, noNew, noItem, noStockUpd, noLine engine.Stmt
	noStock                                                               [districtsPerW]engine.Stmt

	payWh, payWhSel, payDist, payDistSel, custCount, custByName, payCust, payCustData, payCustUpd, payCustUpdBC, payHist engine.Stmt

	osCust, osOrder, osLines engine.Stmt

	dlMin, dlDel, dlCust, dlOrd, dlLines, dlBal engine.Stmt

	slNext, slCount engine.Stmt
}

func (st *stmts) all() []engine.Stmt {
	out := []engine.Stmt{st.begin, st.beginRO, st.commit, st.rollback,
		st.noCust, st.noDist, st.noDistUpd, st.noOrder, st.noNew, st.noItem, st.noStockUpd, st.noLine,
		st.payWh, st.payWhSel, st.payDist, st.payDistSel, st.custCount, st.custByName, st.payCust, st.payCustData, st.payCustUpd, st.payCustUpdBC, st.payHist,
		st.osCust, st.osOrder, st.osLines, st.dlMin, st.dlDel, st.dlCust, st.dlOrd, st.dlLines, st.dlBal, st.slNext, st.slCount}
	return append(out, st.noStock[:]...)
}

// prepare prepares every statement on s.
func (st *stmts) prepare(ctx context.Context, s engine.Session, d engine.Dialect) error {
	fu := forUpdate(d)
	prep := func(dst *engine.Stmt, q string) error {
		var err error
		if *dst, err = s.Prepare(ctx, sqlText(d, q)); err != nil {
			return fmt.Errorf("prepare %s: %w", q, err)
		}
		return nil
	}
	text := func(dst *engine.Stmt, q string) error {
		var err error
		if *dst, err = s.PrepareClient(ctx, q); err != nil {
			return fmt.Errorf("prepare %s: %w", q, err)
		}
		return nil
	}
	custCols := "c_w_id = ? AND c_d_id = ? AND c_id = ?"
	errs := []error{
		text(&st.begin, d.BeginWrite()), text(&st.beginRO, "BEGIN"), text(&st.commit, "COMMIT"), text(&st.rollback, "ROLLBACK"),
		prep(&st.noCust, "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?"),
		prep(&st.noDist, "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ?"+fu),
		prep(&st.noDistUpd, "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?"),
		prep(&st.noOrder, "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)"),
		prep(&st.noNew, "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)"),
		prep(&st.noItem, "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?"),
		prep(&st.noStockUpd, "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?"),
		prep(&st.noLine, "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, "+money+", ?)"),
		prep(&st.payWh, "UPDATE warehouse SET w_ytd = w_ytd + "+money+" WHERE w_id = ?"),
		prep(&st.payWhSel, "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?"),
		prep(&st.payDist, "UPDATE district SET d_ytd = d_ytd + "+money+" WHERE d_w_id = ? AND d_id = ?"),
		prep(&st.payDistSel, "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?"),
		prep(&st.custCount, "SELECT count(*) FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?"),
		prep(&st.custByName, "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first LIMIT 1 OFFSET ?"),
		prep(&st.payCust, "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE "+custCols+fu),
		prep(&st.payCustData, "SELECT c_data FROM customer WHERE "+custCols),
		prep(&st.payCustUpd, "UPDATE customer SET c_balance = c_balance - "+money+", c_ytd_payment = c_ytd_payment + "+money+", c_payment_cnt = c_payment_cnt + 1 WHERE "+custCols),
		prep(&st.payCustUpdBC, "UPDATE customer SET c_balance = c_balance - "+money+", c_ytd_payment = c_ytd_payment + "+money+", c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE "+custCols),
		prep(&st.payHist, "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, "+money+", ?)"),
		prep(&st.osCust, "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE "+custCols),
		prep(&st.osOrder, "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1"),
		prep(&st.osLines, "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"),
		prep(&st.dlMin, "SELECT min(no_o_id) FROM new_order WHERE no_w_id = ? AND no_d_id = ?"),
		prep(&st.dlDel, "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?"),
		prep(&st.dlCust, "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"),
		prep(&st.dlOrd, "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"),
		prep(&st.dlLines, "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"),
		prep(&st.dlBal, "UPDATE customer SET c_balance = c_balance + (SELECT sum(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?), c_delivery_cnt = c_delivery_cnt + 1 WHERE "+custCols),
		prep(&st.slNext, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?"),
		prep(&st.slCount, "SELECT count(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?"),
	}
	for i := range st.noStock {
		errs = append(errs, prep(&st.noStock[i], "SELECT s_quantity, s_data, "+distCol(i+1)+" FROM stock WHERE s_i_id = ? AND s_w_id = ?"+fu))
	}
	return errors.Join(errs...)
}

// client is one TPROC-C virtual user: a home warehouse, the district its stock-levels
// look at, its statements and its random stream. Not safe for concurrent use.
type client struct {
	pl    *plan
	stats *txStats
	w     int // home warehouse
	slD   int // stock-level's district (fixed per terminal, clause 2.8.1.1)
	src   *rand.PCG
	r     *rand.Rand
	d     engine.Dialect
	st    stmts
	a     engine.Args
	row   engine.Row
	last  int
	wait  workload.Waiter // the backoff before a retry
	lines []orderLine
	buf   []byte
	// inTx: a transaction is open (BEGIN succeeded, no COMMIT yet), so a failure rolls
	// it back.
	inTx bool
}

var (
	_ workload.Worker = (*client)(nil)
	_ workload.Mixer  = (*client)(nil)
)

// OpLabels are the transactions' labels.
func (c *client) OpLabels() []string { return txLabels[:] }

// LastLabel is the kind of the last transaction.
func (c *client) LastLabel() int { return c.last }

// Init prepares the statements.
func (c *client) Init(ctx context.Context, s engine.Session) error {
	if s == nil {
		return errors.New("tproc-c: no SQL session")
	}
	if err := c.st.prepare(ctx, s, c.d); err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	return nil
}

// Ready never waits: keying and thinking times are off, as HammerDB runs by default.
func (c *client) Ready(context.Context) error { return nil }

// Close closes the statements.
func (c *client) Close() error {
	c.wait.Stop()
	var all []engine.Stmt
	for _, s := range c.st.all() {
		if s != nil {
			all = append(all, s)
		}
	}
	c.st = stmts{}
	return workload.CloseStmts(all...)
}

// Op runs one transaction of the mix. One aborted by a conflict with another client's
// (deadlock, serialization failure, lock wait timeout) is rolled back and run again with
// the same input, counted as a retry; any other error fails the step.
func (c *client) Op(ctx context.Context) (int64, error) {
	if c.stats.start.Load() == 0 {
		c.stats.start.CompareAndSwap(0, time.Now().UnixNano())
	}
	kind := pick(c.r)
	saved := *c.src
	for attempt := 1; ; attempt++ {
		rows, err := c.run(ctx, kind)
		if err == nil {
			c.last = kind
			c.stats.committed[kind].Add(1)
			return rows, nil
		}
		if c.inTx {
			c.inTx = false
			if _, rerr := c.st.rollback.Exec(ctx, nil); rerr != nil && ctx.Err() == nil {
				return 0, fmt.Errorf("%s %s: %w; then ROLLBACK: %w", Name, txLabels[kind], err, rerr)
			}
		}
		if errors.Is(err, errRollback) {
			c.last = txNewOrderRollback
			c.stats.committed[txNewOrderRollback].Add(1)
			return 1, nil // the order, rolled back: an op that did its work, not a no-op
		}
		if !errors.Is(err, engine.ErrConflict) || attempt >= maxAttempts || ctx.Err() != nil {
			return 0, fmt.Errorf("%s %s: %w", Name, txLabels[kind], err)
		}
		c.stats.retries[kind].Add(1)
		*c.src = saved
		if err := c.wait.Backoff(ctx, attempt); err != nil {
			return 0, err
		}
	}
}

func (c *client) run(ctx context.Context, kind int) (int64, error) {
	switch kind {
	case txNewOrder:
		return c.newOrder(ctx)
	case txPayment:
		return c.payment(ctx)
	case txOrderStatus:
		return c.orderStatus(ctx)
	case txDelivery:
		return c.delivery(ctx)
	}
	return c.stockLevel(ctx)
}

// ints fills the client's arguments with vs.
func (c *client) ints(vs ...int) *engine.Args {
	c.a.Reset()
	for _, v := range vs {
		c.a.Int(int64(v))
	}
	return &c.a
}

// queryRow runs st and keeps its first row in c.row; found says there was one.
func (c *client) queryRow(ctx context.Context, st engine.Stmt, a *engine.Args) (bool, error) {
	n, err := st.(engine.RowQuerier).QueryRow(ctx, a, &c.row)
	return n > 0, err
}

// col is column i of the last row as an integer (0 when NULL).
func (c *client) col(i int) int {
	if c.row.Null[i] {
		return 0
	}
	n, _ := strconv.Atoi(string(c.row.Values[i]))
	return n
}

// otherWarehouse is a warehouse other than the home one (the home one when alone).
func (c *client) otherWarehouse() int {
	n := c.pl.p.Warehouses
	if n == 1 {
		return c.w
	}
	w := between(c.r, 1, n-1)
	if w >= c.w {
		w++
	}
	return w
}

// customer picks a customer of district (w, d): by last name 60% of the time (the one
// in the middle of those of that name, ordered by first name), else by number.
func (c *client) customer(ctx context.Context, w, d int) (int, error) {
	if c.r.IntN(100) >= 60 {
		return nuRand(c.r, 1023, c.pl.c.id, 1, c.pl.p.customers), nil
	}
	name := lastName(nuRand(c.r, 255, c.pl.c.lastRun, 0, c.pl.names()-1))
	c.a.Reset()
	c.a.Int(int64(w))
	c.a.Int(int64(d))
	c.a.Text(name)
	n, _, err := c.st.custCount.QueryInt(ctx, &c.a)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("no customer named %s in district %d/%d", name, w, d)
	}
	c.a.Int((n - 1) / 2)
	found, err := c.queryRow(ctx, c.st.custByName, &c.a)
	if err != nil || !found {
		return 0, errors.Join(err, fmt.Errorf("customer %s of district %d/%d is gone", name, w, d))
	}
	return c.col(0), nil
}

// begin starts a transaction with st (BEGIN, or the engine's BeginWrite).
func (c *client) begin(ctx context.Context, st engine.Stmt) error {
	if _, err := st.Exec(ctx, nil); err != nil {
		return err
	}
	c.inTx = true
	return nil
}

// commit commits the open transaction.
func (c *client) commit(ctx context.Context) error {
	if _, err := c.st.commit.Exec(ctx, nil); err != nil {
		return err
	}
	c.inTx = false
	return nil
}

// exec runs a statement that must change exactly want rows (0: any).
func exec(ctx context.Context, st engine.Stmt, a *engine.Args, want int64, what string) (int64, error) {
	n, err := st.Exec(ctx, a)
	if err != nil {
		return n, fmt.Errorf("%s: %w", what, err)
	}
	if want > 0 && n != want {
		return n, fmt.Errorf("%s: %d rows changed, want %d", what, n, want)
	}
	return n, nil
}

// orderLine is one line of a new order.
type orderLine struct {
	item, supplyW, qty int
}
