package insertbench

import (
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
)

// Statement shapes, composed from the engine's Dialect (reference §1.2–§1.7).

// keyColumn is the server-assigned primary key.
const keyColumn = "transactionid"

// insertColumnList is the INSERT's column list, in the reference's value order (§1.4).
const insertColumnList = "dateandtime,cashregisterid,customerid,productid,price,data"

// insertColumns is the number of values per inserted row.
const insertColumns = 6

// tableColumns is the schema of reference §1.2 in the engine's types.
func tableColumns(d engine.Dialect) []string {
	return []string{
		keyColumn + " " + d.AutoIncrementPK(),
		"dateandtime " + d.DateTimeType(),
		"cashregisterid int NOT NULL",
		"customerid int NOT NULL",
		"productid int NOT NULL",
		"price int NOT NULL",
		"data varchar(4000)",
	}
}

// Secondary index names (reference §1.3).
func marketIndex(table string) string   { return table + "_marketsegment" }
func registerIndex(table string) string { return table + "_registersegment" }
func pdcIndex(table string) string      { return table + "_pdc" }

// secondaryIndexes are the three indexes of reference §1.3, in creation order.
func secondaryIndexes(table string) []engine.Index {
	return []engine.Index{
		{Name: marketIndex(table), Columns: []string{"productid", "customerid", "price"}},
		{Name: registerIndex(table), Columns: []string{"cashregisterid", "customerid", "price"}},
		{Name: pdcIndex(table), Columns: []string{"price", "dateandtime", "customerid"}},
	}
}

// insertSQL is the multi-row INSERT of rows rows (reference §1.4), one statement = one
// transaction in autocommit.
func insertSQL(d engine.Dialect, table string, rows int) string {
	var b strings.Builder
	b.Grow(64 + rows*insertColumns*4)
	b.WriteString("INSERT INTO ")
	b.WriteString(table)
	b.WriteString(" (" + insertColumnList + ") VALUES ")
	n := 1
	for r := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for c := range insertColumns {
			if c > 0 {
				b.WriteByte(',')
			}
			b.WriteString(d.Placeholder(n))
			n++
		}
		b.WriteByte(')')
	}
	return b.String()
}

// from renders a table read through index when the engine has an index hint.
func from(d engine.Dialect, table, index string) string {
	if f, ok := d.FromIndex(table, index); ok {
		return f
	}
	return table
}

// Range query generators (reference §1.7), in the order a query picks among them.
const (
	rangeMarket = iota
	rangeRegister
	rangePDC
	rangeKinds
)

// rangeSQL is one of the three covering, index-ordered range queries of reference §1.7.
// The register query's strict '>' is the reference's.
func rangeSQL(d engine.Dialect, table string, kind, limit int) string {
	lim := strconv.Itoa(limit)
	p := d.Placeholder(1)
	switch kind {
	case rangeMarket:
		return "SELECT productid, customerid, price FROM " + from(d, table, marketIndex(table)) +
			" WHERE productid >= " + p + " ORDER BY productid, customerid, price LIMIT " + lim
	case rangeRegister:
		return "SELECT cashregisterid, customerid, price FROM " + from(d, table, registerIndex(table)) +
			" WHERE cashregisterid > " + p + " ORDER BY cashregisterid, customerid, price LIMIT " + lim
	default:
		return "SELECT price, dateandtime, customerid FROM " + from(d, table, pdcIndex(table)) +
			" WHERE price >= " + p + " ORDER BY price, dateandtime, customerid LIMIT " + lim
	}
}

// pointSQL is the point query of reference §1.7: an IN-list of n ids on the primary key.
func pointSQL(d engine.Dialect, table string, n int) string {
	var b strings.Builder
	b.WriteString("SELECT transactionid, productid, data FROM " + table + " WHERE transactionid IN (")
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		b.WriteString(d.Placeholder(i))
	}
	b.WriteByte(')')
	return b.String()
}

// deleteSQL deletes the limit lowest ids ≥ the argument, in the reference's shape for the
// engine (§1.5): MySQL's DELETE … WHERE id >= ? ORDER BY id LIMIT n, elsewhere the
// Postgres form, the n lowest ids picked in a subselect.
func deleteSQL(d engine.Dialect, table string, limit int) string {
	n := strconv.Itoa(limit)
	if d.DeleteOrderLimit() {
		return "DELETE FROM " + table + " WHERE " + keyColumn + " >= " + d.Placeholder(1) +
			" ORDER BY " + keyColumn + " ASC LIMIT " + n
	}
	return "DELETE FROM " + table + " WHERE " + keyColumn + " IN (SELECT " + keyColumn + " FROM " + table +
		" WHERE " + keyColumn + " >= " + d.Placeholder(1) + " ORDER BY " + keyColumn + " ASC LIMIT " + n + ")"
}

// Single-value queries of the actors and the audit.
func countSQL(table string) string { return "SELECT count(*) FROM " + table }
func minSQL(table string) string   { return "SELECT min(" + keyColumn + ") FROM " + table }
func maxSQL(table string) string   { return "SELECT max(" + keyColumn + ") FROM " + table }

// duplicatesSQL is count(*) − count(DISTINCT transactionid): rows whose id another row has.
func duplicatesSQL(table string) string {
	return "SELECT count(*) - count(DISTINCT " + keyColumn + ") FROM " + table
}

// countThroughSQL counts a table's rows through one of its indexes. It counts the index's
// first column (NOT NULL, so the same number as count(*)) because a bare count(*) may be
// answered from another b-tree whatever the hint says (SQLite's count optimization ignores
// INDEXED BY); counting a column makes the engine scan the forced, covering index.
func countThroughSQL(d engine.Dialect, table string, ix engine.Index) string {
	return "SELECT count(" + ix.Columns[0] + ") FROM " + from(d, table, ix.Name)
}
