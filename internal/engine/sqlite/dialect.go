package sqlite

import (
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
)

var _ engine.Dialect = Dialect{}

// Dialect is SQLite's SQL. SQLite takes the Postgres statement shapes (spec/insert-benchmark.md
// "Shape"), with SQLite's own key column and index hint.
type Dialect struct{}

// Name is "sqlite".
func (Dialect) Name() string { return "sqlite" }

// Placeholder is "?" for every argument.
func (Dialect) Placeholder(int) string { return "?" }

// AutoIncrementPK is an alias of the 64-bit rowid. AUTOINCREMENT makes SQLite never reuse
// an id, even after the highest rows are deleted, so the deleter's queue (delete the
// lowest, insert above the highest) behaves as on the server engines.
func (Dialect) AutoIncrementPK() string { return "INTEGER PRIMARY KEY AUTOINCREMENT" }

// AutoIncrementPK32 is AutoIncrementPK: an INTEGER PRIMARY KEY is the rowid, 64 bits
// whatever is declared, and an integer is stored in as few bytes as its value needs.
func (d Dialect) AutoIncrementPK32() string { return d.AutoIncrementPK() }

// DateTimeType is TEXT: SQLite has no date type, and values written as
// 'YYYY-MM-DD HH:MM:SS' sort chronologically as text. TEXT rather than DATETIME because
// DATETIME gives NUMERIC affinity (SQLite tries to convert every value to a number first)
// and makes mattn/go-sqlite3 parse the column into a time.Time on every fetch, a client
// cost the other engines' drivers do not pay the same way.
func (Dialect) DateTimeType() string { return "TEXT" }

// CreateTable is one CREATE TABLE statement.
func (Dialect) CreateTable(table string, columns []string) []string {
	return []string{"CREATE TABLE " + table + " (" + strings.Join(columns, ", ") + ")"}
}

// DropTable drops a table if it exists (with AUTOINCREMENT, its sqlite_sequence row too).
func (Dialect) DropTable(table string) string { return "DROP TABLE IF EXISTS " + table }

// CreateIndexes is one CREATE INDEX per index (reference §1.3, the Postgres idiom).
func (Dialect) CreateIndexes(table string, idx []engine.Index) []string {
	out := make([]string, 0, len(idx))
	for _, ix := range idx {
		out = append(out, "CREATE INDEX "+ix.Name+" ON "+table+" ("+strings.Join(ix.Columns, ", ")+")")
	}
	return out
}

// FromIndex uses SQLite's INDEXED BY, which makes a query fail rather than run without the
// index: the counterpart of MySQL's FORCE INDEX (reference §1.7).
func (Dialect) FromIndex(table, index string) (string, bool) {
	return table + " INDEXED BY " + index, true
}

// DeleteOrderLimit is false: SQLite's DELETE … ORDER BY … LIMIT needs a compile option.
func (Dialect) DeleteOrderLimit() bool { return false }

// AutoIncrementGaps is false: with AUTOINCREMENT the next id comes from sqlite_sequence, which
// is updated in the inserting statement's own transaction. A failed or rolled-back insert
// rolls the sequence back too, and there is no id cache, so committed ids have no gaps.
func (Dialect) AutoIncrementGaps() bool { return false }

// BeginWrite is BEGIN IMMEDIATE: it takes the database's write lock at once, waiting in
// the busy timeout while another connection writes. A deferred BEGIN would take it at the
// transaction's first write, and a transaction that read first then fails at once with
// SQLITE_BUSY (its snapshot may be stale; the busy handler is not called), so concurrent
// read-then-write transactions would fail instead of queueing on SQLite's single writer.
func (Dialect) BeginWrite() string { return "BEGIN IMMEDIATE" }
