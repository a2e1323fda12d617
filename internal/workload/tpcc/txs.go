package tpcc

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
)

// newOrder is clause 2.4: an order of 5–15 lines in a district of the home warehouse,
// each line's stock taken from the home warehouse or, 1% of the time, another. The
// lines are processed in the order of their stock rows (warehouse, item), so that two
// new-orders never wait for each other's stock rows in opposite orders; 1% of the
// orders end on an unused item number and are rolled back (errRollback).
func (c *client) newOrder(ctx context.Context) (int64, error) {
	w, d := c.w, between(c.r, 1, districtsPerW)
	cid := nuRand(c.r, 1023, c.pl.c.id, 1, c.pl.p.customers)
	n := between(c.r, 5, 15)
	rollback := c.r.IntN(100) == 0
	c.lines = c.lines[:0]
	allLocal := 1
	for i := range n {
		l := orderLine{item: nuRand(c.r, 8191, c.pl.c.item, 1, c.pl.p.items), supplyW: w, qty: between(c.r, 1, 10)}
		if c.r.IntN(100) == 0 {
			l.supplyW = c.otherWarehouse()
		}
		if l.supplyW != w {
			allLocal = 0
		}
		if rollback && i == n-1 {
			l.item = c.pl.p.items + 1
		}
		c.lines = append(c.lines, l)
	}
	last := len(c.lines)
	if rollback {
		last-- // the unused item stays last
	}
	slices.SortFunc(c.lines[:last], func(a, b orderLine) int {
		return cmp.Or(cmp.Compare(a.supplyW, b.supplyW), cmp.Compare(a.item, b.item))
	})
	if err := c.begin(ctx, c.st.begin); err != nil {
		return 0, err
	}
	if found, err := c.queryRow(ctx, c.st.noCust, c.ints(w, d, cid)); err != nil || !found {
		return 0, notFound(err, "customer %d/%d/%d", w, d, cid)
	}
	if found, err := c.queryRow(ctx, c.st.noDist, c.ints(w, d)); err != nil || !found {
		return 0, notFound(err, "district %d/%d", w, d)
	}
	oid := c.col(0)
	if _, err := exec(ctx, c.st.noDistUpd, c.ints(w, d), 1, "update district"); err != nil {
		return 0, err
	}
	if _, err := exec(ctx, c.st.noOrder, c.ints(oid, d, w, cid, n, allLocal), 1, "insert orders"); err != nil {
		return 0, err
	}
	if _, err := exec(ctx, c.st.noNew, c.ints(oid, d, w), 1, "insert new_order"); err != nil {
		return 0, err
	}
	for i, l := range c.lines {
		found, err := c.queryRow(ctx, c.st.noItem, c.ints(l.item))
		if err != nil {
			return 0, err
		}
		if !found {
			return 0, errRollback
		}
		price := parseCents(c.row.Values[0])
		if found, err := c.queryRow(ctx, c.st.noStock[d-1], c.ints(l.item, l.supplyW)); err != nil || !found {
			return 0, notFound(err, "stock %d/%d", l.supplyW, l.item)
		}
		qty := c.col(0)
		if qty >= l.qty+10 {
			qty -= l.qty
		} else {
			qty += 91 - l.qty
		}
		remote := 0
		if l.supplyW != w {
			remote = 1
		}
		if _, err := exec(ctx, c.st.noStockUpd, c.ints(qty, l.qty, remote, l.item, l.supplyW), 1, "update stock"); err != nil {
			return 0, err
		}
		c.a.Reset()
		for _, v := range []int{oid, d, w, i + 1, l.item, l.supplyW, l.qty} {
			c.a.Int(int64(v))
		}
		c.buf = appendMoney(c.buf[:0], price*int64(l.qty))
		c.a.Text(string(c.buf))
		c.a.Text(string(c.row.Values[2])) // s_dist_NN
		if _, err := exec(ctx, c.st.noLine, &c.a, 1, "insert order_line"); err != nil {
			return 0, err
		}
	}
	return int64(len(c.lines)), c.commit(ctx)
}

// payment is clause 2.5: a payment of 1.00–5,000.00 to the home warehouse and one of its
// districts by a customer of that district (85%) or of a district of another warehouse.
func (c *client) payment(ctx context.Context) (int64, error) {
	w, d := c.w, between(c.r, 1, districtsPerW)
	cw, cd := w, d
	if c.r.IntN(100) >= 85 {
		cw, cd = c.otherWarehouse(), between(c.r, 1, districtsPerW)
	}
	amount := int64(between(c.r, 100, 500000))
	c.buf = appendMoney(c.buf[:0], amount)
	amt := string(c.buf)
	if err := c.begin(ctx, c.st.begin); err != nil {
		return 0, err
	}
	c.a.Reset()
	c.a.Text(amt)
	c.a.Int(int64(w))
	if _, err := exec(ctx, c.st.payWh, &c.a, 1, "update warehouse"); err != nil {
		return 0, err
	}
	if found, err := c.queryRow(ctx, c.st.payWhSel, c.ints(w)); err != nil || !found {
		return 0, notFound(err, "warehouse %d", w)
	}
	hData := string(c.row.Values[0]) + "    "
	if !c.pl.p.brokenPayment {
		c.a.Reset()
		c.a.Text(amt)
		c.a.Int(int64(w))
		c.a.Int(int64(d))
		if _, err := exec(ctx, c.st.payDist, &c.a, 1, "update district"); err != nil {
			return 0, err
		}
	}
	if found, err := c.queryRow(ctx, c.st.payDistSel, c.ints(w, d)); err != nil || !found {
		return 0, notFound(err, "district %d/%d", w, d)
	}
	hData += string(c.row.Values[0])
	cid, err := c.customer(ctx, cw, cd)
	if err != nil {
		return 0, err
	}
	if found, err := c.queryRow(ctx, c.st.payCust, c.ints(cw, cd, cid)); err != nil || !found {
		return 0, notFound(err, "customer %d/%d/%d", cw, cd, cid)
	}
	c.a.Reset()
	c.a.Text(amt)
	c.a.Text(amt)
	upd := c.st.payCustUpd
	if bytes.Equal(c.row.Values[10], []byte("BC")) {
		// Bad credit: the payment is noted at the head of C_DATA, kept to 500 characters.
		c.a.Reset()
		c.a.Int(int64(cw))
		c.a.Int(int64(cd))
		c.a.Int(int64(cid))
		if found, err := c.queryRow(ctx, c.st.payCustData, &c.a); err != nil || !found {
			return 0, notFound(err, "customer %d/%d/%d", cw, cd, cid)
		}
		data := fmt.Appendf(nil, "%d %d %d %d %d %s | %s", cid, cd, cw, d, w, amt, c.row.Values[0])
		c.a.Reset()
		c.a.Text(amt)
		c.a.Text(amt)
		c.a.Text(string(data[:min(len(data), 500)]))
		upd = c.st.payCustUpdBC
	}
	c.a.Int(int64(cw))
	c.a.Int(int64(cd))
	c.a.Int(int64(cid))
	if _, err := exec(ctx, upd, &c.a, 1, "update customer"); err != nil {
		return 0, err
	}
	c.a.Reset()
	for _, v := range []int{cid, cd, cw, d, w} {
		c.a.Int(int64(v))
	}
	c.a.Text(amt)
	c.a.Text(hData)
	if _, err := exec(ctx, c.st.payHist, &c.a, 1, "insert history"); err != nil {
		return 0, err
	}
	return 1, c.commit(ctx)
}

// orderStatus is clause 2.6: a customer of the home warehouse's last order and its lines.
func (c *client) orderStatus(ctx context.Context) (int64, error) {
	w, d := c.w, between(c.r, 1, districtsPerW)
	if err := c.begin(ctx, c.st.beginRO); err != nil {
		return 0, err
	}
	cid, err := c.customer(ctx, w, d)
	if err != nil {
		return 0, err
	}
	if found, err := c.queryRow(ctx, c.st.osCust, c.ints(w, d, cid)); err != nil || !found {
		return 0, notFound(err, "customer %d/%d/%d", w, d, cid)
	}
	found, err := c.queryRow(ctx, c.st.osOrder, c.ints(w, d, cid))
	if err != nil {
		return 0, err
	}
	var rows int64
	if found {
		if rows, err = c.st.osLines.Query(ctx, c.ints(w, d, c.col(0))); err != nil {
			return 0, err
		}
	}
	return rows, c.commit(ctx)
}

// delivery is clause 2.7, in one transaction as HammerDB runs it: in each district of
// the home warehouse, the oldest undelivered order is delivered by a carrier. A district
// with none is skipped, as is one whose oldest order another delivery took meanwhile.
func (c *client) delivery(ctx context.Context) (int64, error) {
	w, carrier := c.w, between(c.r, 1, 10)
	if err := c.begin(ctx, c.st.begin); err != nil {
		return 0, err
	}
	var delivered int64
	for d := 1; d <= districtsPerW; d++ {
		oid, ok, err := c.st.dlMin.QueryInt(ctx, c.ints(w, d))
		if err != nil {
			return 0, err
		}
		if !ok {
			continue
		}
		n, err := exec(ctx, c.st.dlDel, c.ints(w, d, int(oid)), 0, "delete new_order")
		if err != nil {
			return 0, err
		}
		if n == 0 {
			continue
		}
		cid, ok, err := c.st.dlCust.QueryInt(ctx, c.ints(w, d, int(oid)))
		if err != nil || !ok {
			return 0, notFound(err, "order %d/%d/%d", w, d, oid)
		}
		if _, err := exec(ctx, c.st.dlOrd, c.ints(carrier, w, d, int(oid)), 1, "update orders"); err != nil {
			return 0, err
		}
		if _, err := exec(ctx, c.st.dlLines, c.ints(w, d, int(oid)), 0, "update order_line"); err != nil {
			return 0, err
		}
		if _, err := exec(ctx, c.st.dlBal, c.ints(w, d, int(oid), w, d, int(cid)), 1, "update customer"); err != nil {
			return 0, err
		}
		delivered++
	}
	return delivered, c.commit(ctx)
}

// stockLevel is clause 2.8: how many distinct items of the district's last 20 orders
// have a stock below a threshold of 10–20.
func (c *client) stockLevel(ctx context.Context) (int64, error) {
	w, d := c.w, c.slD
	threshold := between(c.r, 10, 20)
	if err := c.begin(ctx, c.st.beginRO); err != nil {
		return 0, err
	}
	next, ok, err := c.st.slNext.QueryInt(ctx, c.ints(w, d))
	if err != nil || !ok {
		return 0, notFound(err, "district %d/%d", w, d)
	}
	if _, _, err := c.st.slCount.QueryInt(ctx, c.ints(w, d, int(next), int(next)-20, w, threshold)); err != nil {
		return 0, err
	}
	return 1, c.commit(ctx)
}

// notFound is err, or the error of a row that must exist and was not found.
func notFound(err error, format string, args ...any) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("no "+format, args...)
}
