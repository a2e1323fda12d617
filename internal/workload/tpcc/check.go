package tpcc

import (
	"context"
	"fmt"
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
)

// condition is one of TPC-C's consistency conditions (clause 3.3.2): a query returning
// the first warehouse (and district) that violates it, with the values compared, or no
// row.
type condition struct {
	n     int
	what  string
	query string
	// district: the row names a district (w, d, values…), else a warehouse (w, values…).
	district bool
}

// conditions are conditions 1–4. Money is compared to the cent, so that SQLite's
// floating-point sums compare as PostgreSQL's and MariaDB's decimals.
var conditions = []condition{
	{n: 1, what: "W_YTD = sum(D_YTD)",
		query: `SELECT w.w_id, w.w_ytd, d.s FROM warehouse w JOIN (SELECT d_w_id, sum(d_ytd) AS s FROM district GROUP BY d_w_id) d ON d.d_w_id = w.w_id
 WHERE abs(w.w_ytd - d.s) > 0.005 ORDER BY w.w_id LIMIT 1`},
	{n: 2, what: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)", district: true,
		query: `SELECT d.d_w_id, d.d_id, d.d_next_o_id - 1, o.m, n.m FROM district d
 JOIN (SELECT o_w_id, o_d_id, max(o_id) AS m FROM orders GROUP BY o_w_id, o_d_id) o ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id
 LEFT JOIN (SELECT no_w_id, no_d_id, max(no_o_id) AS m FROM new_order GROUP BY no_w_id, no_d_id) n ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id
 WHERE d.d_next_o_id - 1 <> o.m OR n.m IS NOT NULL AND n.m <> o.m ORDER BY d.d_w_id, d.d_id LIMIT 1`},
	{n: 3, what: "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER", district: true,
		query: `SELECT no_w_id, no_d_id, max(no_o_id) - min(no_o_id) + 1, count(*) FROM new_order GROUP BY no_w_id, no_d_id
 HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*) ORDER BY no_w_id, no_d_id LIMIT 1`},
	{n: 4, what: "sum(O_OL_CNT) = rows in ORDER-LINE", district: true,
		query: `SELECT o.o_w_id, o.o_d_id, o.s, l.c FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS s FROM orders GROUP BY o_w_id, o_d_id) o
 LEFT JOIN (SELECT ol_w_id, ol_d_id, count(*) AS c FROM order_line GROUP BY ol_w_id, ol_d_id) l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
 WHERE l.c IS NULL OR o.s <> l.c ORDER BY o.o_w_id, o.o_d_id LIMIT 1`},
}

// verify is every step's audit: after the load, the row counts TPC-C fixes; then
// consistency conditions 1–4. The first violation is the error, naming the condition,
// the warehouse and the district, and the values that differ.
func (pl *plan) verify(ctx context.Context, hh engine.Handle, step string, counts bool) (string, error) {
	h, err := engine.AsSQL(hh)
	if err != nil {
		return "", err
	}
	sess, err := h.NewSession(ctx)
	if err != nil {
		return "", fmt.Errorf("%s %s: check: %w", Name, step, err)
	}
	defer sess.Close()
	var detail []string
	if counts {
		w := int64(pl.p.Warehouses)
		for _, t := range []struct {
			table string
			want  int64
		}{{"item", int64(pl.p.items)}, {"warehouse", w}, {"district", w * districtsPerW},
			{"stock", w * int64(pl.p.items)}, {"customer", w * districtsPerW * int64(pl.p.customers)},
			{"orders", w * districtsPerW * int64(pl.p.customers)}} {
			n, err := queryInt(ctx, sess, "SELECT count(*) FROM "+t.table)
			if err != nil {
				return "", fmt.Errorf("%s %s: count %s: %w", Name, step, t.table, err)
			}
			if n != t.want {
				return "", fmt.Errorf("%s %s: %s has %d rows, want %d (%d warehouses)", Name, step, t.table, n, t.want, w)
			}
		}
		detail = append(detail, fmt.Sprintf("row counts of item, warehouse, district, stock, customer and orders as TPC-C's for --warehouses %d", w))
	}
	var held []string
	for _, c := range conditions {
		st, err := sess.Prepare(ctx, c.query)
		if err != nil {
			return "", fmt.Errorf("%s %s: consistency condition %d: %w", Name, step, c.n, err)
		}
		var row engine.Row
		n, err := st.(engine.RowQuerier).QueryRow(ctx, nil, &row)
		_ = st.Close()
		if err != nil {
			return "", fmt.Errorf("%s %s: consistency condition %d: %w", Name, step, c.n, err)
		}
		if n > 0 {
			return "", violation(step, c, &row)
		}
		held = append(held, fmt.Sprint(c.n))
	}
	detail = append(detail, "TPC-C consistency conditions "+strings.Join(held, ", ")+" hold in every warehouse and district")
	return strings.Join(detail, "; "), nil
}

// violation is the error of condition c's first violating row.
func violation(step string, c condition, row *engine.Row) error {
	val := func(i int) string {
		if row.Null[i] {
			return "NULL"
		}
		return string(row.Values[i])
	}
	where := "warehouse " + val(0)
	vals := row.Values[1:]
	first := 1
	if c.district {
		where += " district " + val(1)
		vals = row.Values[2:]
		first = 2
	}
	got := make([]string, len(vals))
	for i := range vals {
		got[i] = val(first + i)
	}
	return fmt.Errorf("%s %s: TPC-C consistency condition %d (%s) fails in %s: %s", Name, step, c.n, c.what, where, strings.Join(got, " vs "))
}
