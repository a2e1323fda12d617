package mariadb

import (
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
)

var _ engine.Dialect = Dialect{}

// Storage engines dbperf runs on MariaDB, as given to New and on the command line.
const (
	InnoDB  = "innodb"
	RocksDB = "rocksdb"
)

// Dialect is the MySQL-family SQL of the reference (spec/reference-benchmarks.md §1.2–1.7).
// Tables are created with StorageEngine, whose idiom also decides how indexes are built.
type Dialect struct {
	// StorageEngine is InnoDB or RocksDB.
	StorageEngine string
}

// Name is "mysql".
func (Dialect) Name() string { return "mysql" }

// Placeholder is "?" for every argument.
func (Dialect) Placeholder(int) string { return "?" }

// AutoIncrementPK is the reference's key column (§1.2).
func (Dialect) AutoIncrementPK() string { return "bigint NOT NULL AUTO_INCREMENT PRIMARY KEY" }

// AutoIncrementPK32 is sysbench's key column (reference §3.1).
func (Dialect) AutoIncrementPK32() string { return "INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY" }

// DateTimeType is datetime (§1.2).
func (Dialect) DateTimeType() string { return "datetime" }

// engineClause is the ENGINE= value of the storage engine.
func (d Dialect) engineClause() string {
	if strings.EqualFold(d.StorageEngine, RocksDB) {
		return "ROCKSDB"
	}
	return "InnoDB"
}

// rocks says whether tables are MyRocks tables.
func (d Dialect) rocks() bool { return d.engineClause() == "ROCKSDB" }

// CreateTable is one CREATE TABLE … ENGINE=<InnoDB|ROCKSDB> (§1.2, without the reference's
// optional engine options and partitioning).
func (d Dialect) CreateTable(table string, columns []string) []string {
	return []string{"CREATE TABLE " + table + " (" + strings.Join(columns, ", ") + ") ENGINE=" + d.engineClause()}
}

// DropTable drops a table if it exists.
func (Dialect) DropTable(table string) string { return "DROP TABLE IF EXISTS " + table }

// CreateIndexes follows §1.3: InnoDB builds all indexes in one ALTER TABLE (one scan of the
// table); MyRocks gets one ALTER TABLE per index, because building several at once makes
// mysqld's memory grow too much (reference commit 27c5af24).
func (d Dialect) CreateIndexes(table string, idx []engine.Index) []string {
	add := func(ix engine.Index) string {
		return "ADD INDEX " + ix.Name + " (" + strings.Join(ix.Columns, ", ") + ")"
	}
	out := []string{}
	if len(idx) == 0 {
		return out
	}
	if d.rocks() {
		for _, ix := range idx {
			out = append(out, "ALTER TABLE "+table+" "+add(ix))
		}
		return out
	}
	parts := make([]string, 0, len(idx))
	for _, ix := range idx {
		parts = append(parts, add(ix))
	}
	return append(out, "ALTER TABLE "+table+" "+strings.Join(parts, ", "))
}

// FromIndex is "t FORCE INDEX (i)", as the reference's range queries (§1.7).
func (Dialect) FromIndex(table, index string) (string, bool) {
	return table + " FORCE INDEX (" + index + ")", true
}

// DeleteOrderLimit is true: DELETE … ORDER BY … LIMIT n.
func (Dialect) DeleteOrderLimit() bool { return true }

// AutoIncrementGaps is true. InnoDB reserves auto-increment values before rows are written and
// never gives them back: a rolled-back or failed insert leaves a gap whatever
// innodb_autoinc_lock_mode is; with lock mode 2 (interleaved, MySQL 8.0's default; MariaDB's
// is 1, consecutive) concurrent multi-row INSERTs may also reserve values they do not use.
// MyRocks likewise does not return the values of rolled-back inserts. So committed keys may
// have gaps, and the deleter resyncs its minimum (reference §1.5).
func (Dialect) AutoIncrementGaps() bool { return true }

// BeginWrite is BEGIN: row locks are taken as rows are written and waited for.
func (Dialect) BeginWrite() string { return "BEGIN" }
