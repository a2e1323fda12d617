package insertbench

import (
	"slices"
	"strconv"
	"testing"

	"github.com/dbperf/dbperf/internal/engine/sqlite"
)

// Statements composed with the SQLite dialect (golden strings).
func TestSQLGolden(t *testing.T) {
	d := sqlite.Dialect{}
	var idx []string
	idx = append(idx, d.CreateIndexes("pi1", secondaryIndexes("pi1"))...)
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"create", d.CreateTable("pi1", tableColumns(d)), []string{
			"CREATE TABLE pi1 (transactionid INTEGER PRIMARY KEY AUTOINCREMENT, dateandtime TEXT, " +
				"cashregisterid int NOT NULL, customerid int NOT NULL, productid int NOT NULL, " +
				"price int NOT NULL, data varchar(4000))",
		}},
		{"indexes", idx, []string{
			"CREATE INDEX pi1_marketsegment ON pi1 (productid, customerid, price)",
			"CREATE INDEX pi1_registersegment ON pi1 (cashregisterid, customerid, price)",
			"CREATE INDEX pi1_pdc ON pi1 (price, dateandtime, customerid)",
		}},
		{"insert", []string{insertSQL(d, "pi1", 1), insertSQL(d, "pi2", 3)}, []string{
			"INSERT INTO pi1 (dateandtime,cashregisterid,customerid,productid,price,data) VALUES (?,?,?,?,?,?)",
			"INSERT INTO pi2 (dateandtime,cashregisterid,customerid,productid,price,data) VALUES " +
				"(?,?,?,?,?,?),(?,?,?,?,?,?),(?,?,?,?,?,?)",
		}},
		{"range", []string{
			rangeSQL(d, "pi1", rangeMarket, 10), rangeSQL(d, "pi1", rangeRegister, 10), rangeSQL(d, "pi1", rangePDC, 7),
		}, []string{
			"SELECT productid, customerid, price FROM pi1 INDEXED BY pi1_marketsegment " +
				"WHERE productid >= ? ORDER BY productid, customerid, price LIMIT 10",
			"SELECT cashregisterid, customerid, price FROM pi1 INDEXED BY pi1_registersegment " +
				"WHERE cashregisterid > ? ORDER BY cashregisterid, customerid, price LIMIT 10",
			"SELECT price, dateandtime, customerid FROM pi1 INDEXED BY pi1_pdc " +
				"WHERE price >= ? ORDER BY price, dateandtime, customerid LIMIT 7",
		}},
		{"point", []string{pointSQL(d, "pi3", 10)}, []string{
			"SELECT transactionid, productid, data FROM pi3 WHERE transactionid IN (?,?,?,?,?,?,?,?,?,?)",
		}},
		{"delete", []string{deleteSQL(d, "pi1", 50)}, []string{
			"DELETE FROM pi1 WHERE transactionid IN (SELECT transactionid FROM pi1 " +
				"WHERE transactionid >= ? ORDER BY transactionid ASC LIMIT 50)",
		}},
		{"audit", []string{
			countSQL("pi1"), minSQL("pi1"), maxSQL("pi1"), duplicatesSQL("pi1"), countThroughSQL(d, "pi1", secondaryIndexes("pi1")[2]),
		}, []string{
			"SELECT count(*) FROM pi1",
			"SELECT min(transactionid) FROM pi1",
			"SELECT max(transactionid) FROM pi1",
			"SELECT count(*) - count(DISTINCT transactionid) FROM pi1",
			"SELECT count(price) FROM pi1 INDEXED BY pi1_pdc",
		}},
	}
	for _, tc := range tests {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, tc.got, tc.want)
		}
	}
}

// numbered is a dialect with numbered placeholders, to check the numbering.
type numbered struct{ sqlite.Dialect }

func (numbered) Placeholder(n int) string { return "$" + strconv.Itoa(n) }

func TestSQLPlaceholderNumbering(t *testing.T) {
	d := numbered{}
	if got, want := insertSQL(d, "t", 2),
		"INSERT INTO t (dateandtime,cashregisterid,customerid,productid,price,data) VALUES "+
			"($1,$2,$3,$4,$5,$6),($7,$8,$9,$10,$11,$12)"; got != want {
		t.Errorf("insert:\n got %q\nwant %q", got, want)
	}
	if got, want := pointSQL(d, "t", 3), "SELECT transactionid, productid, data FROM t WHERE transactionid IN ($1,$2,$3)"; got != want {
		t.Errorf("point:\n got %q\nwant %q", got, want)
	}
}
