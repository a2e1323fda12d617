package tpcc

import (
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
)

// table is one of TPC-C's nine tables: its columns, its primary key and its secondary
// index (clause 1.3; the indexes HammerDB builds).
type table struct {
	name  string
	cols  []string
	pk    []string
	index []string // the secondary index's columns, nil for none
}

// tables are the nine tables in the order the load fills them. The column types are
// HammerDB's; money is DECIMAL(12,2) (numeric on PostgreSQL), rates DECIMAL(4,4).
func tables(d engine.Dialect) []table {
	ts := d.DateTimeType()
	addr := func(p string) []string {
		return []string{p + "_street_1 varchar(20)", p + "_street_2 varchar(20)", p + "_city varchar(20)", p + "_state char(2)", p + "_zip char(9)"}
	}
	dists := make([]string, districtsPerW)
	for i := range dists {
		dists[i] = distCol(i+1) + " char(24)"
	}
	return []table{
		{name: "item", pk: []string{"i_id"}, cols: []string{"i_id int NOT NULL", "i_im_id int", "i_name varchar(24)", "i_price decimal(5,2)", "i_data varchar(50)"}},
		{name: "warehouse", pk: []string{"w_id"}, cols: append([]string{"w_id int NOT NULL", "w_ytd decimal(12,2)", "w_tax decimal(4,4)", "w_name varchar(10)"}, addr("w")...)},
		{name: "district", pk: []string{"d_w_id", "d_id"}, cols: append([]string{"d_id int NOT NULL", "d_w_id int NOT NULL", "d_ytd decimal(12,2)", "d_tax decimal(4,4)", "d_next_o_id int", "d_name varchar(10)"}, addr("d")...)},
		{name: "stock", pk: []string{"s_w_id", "s_i_id"}, cols: append(append([]string{"s_i_id int NOT NULL", "s_w_id int NOT NULL", "s_quantity int"}, dists...),
			"s_ytd int", "s_order_cnt int", "s_remote_cnt int", "s_data varchar(50)")},
		{name: "customer", pk: []string{"c_w_id", "c_d_id", "c_id"}, index: []string{"c_w_id", "c_d_id", "c_last", "c_first", "c_id"},
			cols: append(append([]string{"c_id int NOT NULL", "c_d_id int NOT NULL", "c_w_id int NOT NULL", "c_first varchar(16)", "c_middle char(2)", "c_last varchar(16)"}, addr("c")...),
				"c_phone char(16)", "c_since "+ts, "c_credit char(2)", "c_credit_lim decimal(12,2)", "c_discount decimal(4,4)", "c_balance decimal(12,2)",
				"c_ytd_payment decimal(12,2)", "c_payment_cnt int", "c_delivery_cnt int", "c_data varchar(500)")},
		{name: "history", cols: []string{"h_c_id int", "h_c_d_id int", "h_c_w_id int", "h_d_id int", "h_w_id int", "h_date " + ts, "h_amount decimal(6,2)", "h_data varchar(24)"}},
		{name: "orders", pk: []string{"o_w_id", "o_d_id", "o_id"}, index: []string{"o_w_id", "o_d_id", "o_c_id", "o_id"},
			cols: []string{"o_id int NOT NULL", "o_d_id int NOT NULL", "o_w_id int NOT NULL", "o_c_id int", "o_entry_d " + ts, "o_carrier_id int", "o_ol_cnt int", "o_all_local int"}},
		{name: "new_order", pk: []string{"no_w_id", "no_d_id", "no_o_id"}, cols: []string{"no_o_id int NOT NULL", "no_d_id int NOT NULL", "no_w_id int NOT NULL"}},
		{name: "order_line", pk: []string{"ol_w_id", "ol_d_id", "ol_o_id", "ol_number"},
			cols: []string{"ol_o_id int NOT NULL", "ol_d_id int NOT NULL", "ol_w_id int NOT NULL", "ol_number int NOT NULL", "ol_i_id int", "ol_supply_w_id int",
				"ol_delivery_d " + ts, "ol_quantity int", "ol_amount decimal(6,2)", "ol_dist_info char(24)"}},
	}
}

// distCol is stock's s_dist_NN column of district d.
func distCol(d int) string {
	if d < 10 {
		return "s_dist_0" + strconv.Itoa(d)
	}
	return "s_dist_" + strconv.Itoa(d)
}

// keysFirst: MariaDB's tables get their primary key when created (InnoDB and MyRocks
// cluster rows by it: adding it later rebuilds the table), PostgreSQL's and SQLite's in
// the index step, after the load.
func keysFirst(d engine.Dialect) bool { return d.Name() == "mysql" }

// createStmts drop and create the nine tables.
func createStmts(d engine.Dialect) []string {
	var out []string
	for _, t := range tables(d) {
		out = append(out, d.DropTable(t.name))
		cols := t.cols
		if keysFirst(d) && t.pk != nil {
			cols = append(append([]string(nil), cols...), "PRIMARY KEY ("+strings.Join(t.pk, ", ")+")")
		}
		out = append(out, d.CreateTable(t.name, cols)...)
	}
	return out
}

// indexStmts build a table's keys after the load: its primary key where the table was
// created without one, and its secondary index.
func indexStmts(d engine.Dialect, t table) []string {
	var out []string
	if t.pk != nil && !keysFirst(d) {
		if d.Name() == "sqlite" {
			out = append(out, "CREATE UNIQUE INDEX "+t.name+"_pk ON "+t.name+" ("+strings.Join(t.pk, ", ")+")")
		} else {
			out = append(out, "ALTER TABLE "+t.name+" ADD PRIMARY KEY ("+strings.Join(t.pk, ", ")+")")
		}
	}
	if t.index != nil {
		out = append(out, d.CreateIndexes(t.name, []engine.Index{{Name: t.name + "_i2", Columns: t.index}})...)
	}
	if d.Name() == "postgres" {
		out = append(out, "ANALYZE "+t.name)
	}
	return out
}

// sqlText renders a statement written with ? placeholders in the dialect's.
func sqlText(d engine.Dialect, q string) string {
	if d.Placeholder(1) == "?" {
		return q
	}
	var b strings.Builder
	n := 0
	for i := range len(q) {
		if q[i] == '?' {
			n++
			b.WriteString(d.Placeholder(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// forUpdate is the row lock a read that will write takes: FOR UPDATE (SQLite has none:
// BEGIN IMMEDIATE serializes its writers).
func forUpdate(d engine.Dialect) string {
	if d.Name() == "sqlite" {
		return ""
	}
	return " FOR UPDATE"
}

// money is a money parameter, its text cast to a decimal on every engine.
const money = "CAST(? AS DECIMAL(12,2))"
