package sysbench

import (
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
)

// Statement shapes of reference §3.1 and §3.3 (sysbench's oltp_*.lua), composed from the
// engine's Dialect: only the placeholders and the key column's definition differ.

// tableName is sysbench's sbtest<n> (1-based).
func tableName(n int) string { return "sbtest" + strconv.Itoa(n) }

// indexName is the secondary index on k, k_<n> (§3.1).
func indexName(n int) string { return "k_" + strconv.Itoa(n) }

// tableColumns is the schema of §3.1. The key is sysbench's 32-bit auto-increment
// primary key (INTEGER AUTO_INCREMENT, SERIAL on PostgreSQL), the dialect's
// AutoIncrementPK32; on SQLite the rowid.
func tableColumns(d engine.Dialect) []string {
	return []string{
		"id " + d.AutoIncrementPK32(),
		"k INTEGER DEFAULT 0 NOT NULL",
		"c CHAR(120) DEFAULT '' NOT NULL",
		"pad CHAR(60) DEFAULT '' NOT NULL",
	}
}

// placeholders appends n placeholders from the first'th, comma-separated.
func placeholders(b *strings.Builder, d engine.Dialect, first, n int) {
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(d.Placeholder(first + i))
	}
}

// pointSQL is the point select of point-query and of read-only's ten (oltp_common's
// point_selects).
func pointSQL(d engine.Dialect, table string) string {
	return "SELECT c FROM " + table + " WHERE id=" + d.Placeholder(1)
}

// inlistSQL selects cols of the rows whose col is one of n values: random-points and
// hot-points (c by id), points-covered/notcovered-pk/si (id or k, with c when not covered).
func inlistSQL(d engine.Dialect, table, cols, col string, n int) string {
	var b strings.Builder
	b.WriteString("SELECT " + cols + " FROM " + table + " WHERE " + col + " IN (")
	placeholders(&b, d, 1, n)
	b.WriteByte(')')
	return b.String()
}

// betweenSQL selects what over col BETWEEN two values, then tail: the range tests
// (range-covered/notcovered-pk/si) and read-only's four range queries.
func betweenSQL(d engine.Dialect, table, what, col, tail string) string {
	return "SELECT " + what + " FROM " + table + " WHERE " + col + " BETWEEN " + d.Placeholder(1) +
		" AND " + d.Placeholder(2) + tail
}

// scanSQL is oltp_scan's full scan that returns no row (§3.3).
func scanSQL(table string) string { return "SELECT * FROM " + table + " WHERE LENGTH(c) < 0" }

// updateIndexSQL changes the indexed column: k = k + 1 (update-index, write-only).
func updateIndexSQL(d engine.Dialect, table string) string {
	return "UPDATE " + table + " SET k=k+1 WHERE id=" + d.Placeholder(1)
}

// updateNonIndexSQL sets c (update-nonindex/-one/-zipf, write-only).
func updateNonIndexSQL(d engine.Dialect, table string) string {
	return "UPDATE " + table + " SET c=" + d.Placeholder(1) + " WHERE id=" + d.Placeholder(2)
}

// updateInlistSQL sets c on n rows by id (update-inlist).
func updateInlistSQL(d engine.Dialect, table string, n int) string {
	var b strings.Builder
	b.WriteString("UPDATE " + table + " SET c=" + d.Placeholder(1) + " WHERE id IN (")
	placeholders(&b, d, 2, n)
	b.WriteByte(')')
	return b.String()
}

// deleteSQL deletes one row by id (delete, write-only). Unlike sysbench's it returns the
// deleted row's k, so the data check knows how sum(k) changed: PostgreSQL, SQLite (3.35+)
// and MariaDB (10.0.5+) all have DELETE … RETURNING, and the row is read anyway.
func deleteSQL(d engine.Dialect, table string) string {
	return "DELETE FROM " + table + " WHERE id=" + d.Placeholder(1) + " RETURNING k"
}

// insertIDSQL inserts a row with its id (write-only's insert of the id it deleted).
func insertIDSQL(d engine.Dialect, table string) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (id, k, c, pad) VALUES (")
	placeholders(&b, d, 1, 4)
	b.WriteByte(')')
	return b.String()
}

// insertSQL inserts rows rows with auto-assigned ids: the insert test (one row) and the
// load's multi-row batches.
func insertSQL(d engine.Dialect, table string, rows int) string {
	var b strings.Builder
	b.Grow(48 + rows*16)
	b.WriteString("INSERT INTO " + table + " (k, c, pad) VALUES ")
	for r := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		placeholders(&b, d, 1+3*r, 3)
		b.WriteByte(')')
	}
	return b.String()
}

// The data check's two figures per table.
func countSQL(table string) string { return "SELECT count(*) FROM " + table }
func sumKSQL(table string) string  { return "SELECT COALESCE(SUM(k), 0) FROM " + table }
