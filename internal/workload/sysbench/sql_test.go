package sysbench

import (
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/mariadb"
	"github.com/dbperf/dbperf/internal/engine/postgres"
	"github.com/dbperf/dbperf/internal/engine/sqlite"
)

// The statements of §3.3 per dialect: only placeholders and the key column differ.
func TestStatementShapes(t *testing.T) {
	type shapes struct{ columns, point, inlist, between, updateInlist, delete, insertID, insert2 string }
	for _, tc := range []struct {
		d    engine.Dialect
		want shapes
	}{
		{sqlite.Dialect{}, shapes{
			columns:      "id INTEGER PRIMARY KEY AUTOINCREMENT|k INTEGER DEFAULT 0 NOT NULL|c CHAR(120) DEFAULT '' NOT NULL|pad CHAR(60) DEFAULT '' NOT NULL",
			point:        "SELECT c FROM sbtest3 WHERE id=?",
			inlist:       "SELECT k, c FROM sbtest3 WHERE k IN (?,?,?)",
			between:      "SELECT DISTINCT c FROM sbtest3 WHERE id BETWEEN ? AND ? ORDER BY c",
			updateInlist: "UPDATE sbtest3 SET c=? WHERE id IN (?,?)",
			delete:       "DELETE FROM sbtest3 WHERE id=? RETURNING k",
			insertID:     "INSERT INTO sbtest3 (id, k, c, pad) VALUES (?,?,?,?)",
			insert2:      "INSERT INTO sbtest3 (k, c, pad) VALUES (?,?,?),(?,?,?)",
		}},
		{postgres.Dialect{}, shapes{
			columns:      "id serial PRIMARY KEY|k INTEGER DEFAULT 0 NOT NULL|c CHAR(120) DEFAULT '' NOT NULL|pad CHAR(60) DEFAULT '' NOT NULL",
			point:        "SELECT c FROM sbtest3 WHERE id=$1",
			inlist:       "SELECT k, c FROM sbtest3 WHERE k IN ($1,$2,$3)",
			between:      "SELECT DISTINCT c FROM sbtest3 WHERE id BETWEEN $1 AND $2 ORDER BY c",
			updateInlist: "UPDATE sbtest3 SET c=$1 WHERE id IN ($2,$3)",
			delete:       "DELETE FROM sbtest3 WHERE id=$1 RETURNING k",
			insertID:     "INSERT INTO sbtest3 (id, k, c, pad) VALUES ($1,$2,$3,$4)",
			insert2:      "INSERT INTO sbtest3 (k, c, pad) VALUES ($1,$2,$3),($4,$5,$6)",
		}},
		{mariadb.Dialect{StorageEngine: mariadb.RocksDB}, shapes{
			columns:      "id INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY|k INTEGER DEFAULT 0 NOT NULL|c CHAR(120) DEFAULT '' NOT NULL|pad CHAR(60) DEFAULT '' NOT NULL",
			point:        "SELECT c FROM sbtest3 WHERE id=?",
			inlist:       "SELECT k, c FROM sbtest3 WHERE k IN (?,?,?)",
			between:      "SELECT DISTINCT c FROM sbtest3 WHERE id BETWEEN ? AND ? ORDER BY c",
			updateInlist: "UPDATE sbtest3 SET c=? WHERE id IN (?,?)",
			delete:       "DELETE FROM sbtest3 WHERE id=? RETURNING k",
			insertID:     "INSERT INTO sbtest3 (id, k, c, pad) VALUES (?,?,?,?)",
			insert2:      "INSERT INTO sbtest3 (k, c, pad) VALUES (?,?,?),(?,?,?)",
		}},
	} {
		tb := tableName(3)
		got := shapes{
			columns:      strings.Join(tableColumns(tc.d), "|"),
			point:        pointSQL(tc.d, tb),
			inlist:       inlistSQL(tc.d, tb, "k, c", "k", 3),
			between:      betweenSQL(tc.d, tb, "DISTINCT c", "id", " ORDER BY c"),
			updateInlist: updateInlistSQL(tc.d, tb, 2),
			delete:       deleteSQL(tc.d, tb),
			insertID:     insertIDSQL(tc.d, tb),
			insert2:      insertSQL(tc.d, tb, 2),
		}
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.d.Name(), got, tc.want)
		}
	}
	d := sqlite.Dialect{}
	for got, want := range map[string]string{
		scanSQL("sbtest1"):              "SELECT * FROM sbtest1 WHERE LENGTH(c) < 0",
		updateIndexSQL(d, "sbtest1"):    "UPDATE sbtest1 SET k=k+1 WHERE id=?",
		updateNonIndexSQL(d, "sbtest1"): "UPDATE sbtest1 SET c=? WHERE id=?",
		sumKSQL("sbtest1"):              "SELECT COALESCE(SUM(k), 0) FROM sbtest1",
		indexName(2):                    "k_2",
		d.BeginWrite():                  "BEGIN IMMEDIATE",
		postgres.Dialect{}.BeginWrite(): "BEGIN",
		mariadb.Dialect{}.BeginWrite():  "BEGIN",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
