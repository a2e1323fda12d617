package postgres

import (
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
)

var _ engine.Dialect = Dialect{}

// Dialect is PostgreSQL's SQL, in the reference's shapes (reference §1.2–§1.7).
type Dialect struct{}

// Name is "postgres".
func (Dialect) Name() string { return "postgres" }

// Placeholder is $n.
func (Dialect) Placeholder(n int) string { return "$" + strconv.Itoa(n) }

// AutoIncrementPK is the reference's `bigserial primary key` (§1.2): a bigint fed by the
// sequence <table>_<column>_seq.
func (Dialect) AutoIncrementPK() string { return "bigserial PRIMARY KEY" }

// AutoIncrementPK32 is sysbench's `SERIAL` key (reference §3.1): an integer fed by a
// sequence with sysbench's default cache of 1 (CreateTable changes only the bigserial's).
func (Dialect) AutoIncrementPK32() string { return "serial PRIMARY KEY" }

// DateTimeType is the reference's `timestamp without time zone` (§1.2).
func (Dialect) DateTimeType() string { return "timestamp without time zone" }

// CreateTable is CREATE TABLE followed, as in the reference (§1.2), by
// `ALTER SEQUENCE <table>_transactionid_seq CACHE 1000` when the first column is the
// bigserial key: each session then takes 1000 ids at a time from the sequence. The
// sequence's name is derived from the first column's name.
func (d Dialect) CreateTable(table string, columns []string) []string {
	out := []string{"CREATE TABLE " + table + " (" + strings.Join(columns, ", ") + ")"}
	if len(columns) > 0 {
		if col, ok := strings.CutSuffix(columns[0], " "+d.AutoIncrementPK()); ok && !strings.ContainsAny(col, " \t") {
			out = append(out, "ALTER SEQUENCE "+table+"_"+col+"_seq CACHE "+strconv.Itoa(sequenceCache))
		}
	}
	return out
}

// sequenceCache is the reference's sequence cache (§1.2; its comment: "TODO: what is a good
// value for cache").
const sequenceCache = 1000

// DropTable drops a table if it exists (its owned sequence goes with it).
func (Dialect) DropTable(table string) string { return "DROP TABLE IF EXISTS " + table }

// CreateIndexes is one CREATE INDEX per index (reference §1.3).
func (Dialect) CreateIndexes(table string, idx []engine.Index) []string {
	out := make([]string, 0, len(idx))
	for _, ix := range idx {
		out = append(out, "CREATE INDEX "+ix.Name+" ON "+table+" ("+strings.Join(ix.Columns, ", ")+")")
	}
	return out
}

// FromIndex has no hint to render: PostgreSQL has no index hints (reference §1.7).
func (Dialect) FromIndex(string, string) (string, bool) { return "", false }

// DeleteOrderLimit is false: PostgreSQL's DELETE has no ORDER BY or LIMIT.
func (Dialect) DeleteOrderLimit() bool { return false }

// AutoIncrementGaps is true: with CACHE 1000 every session takes the next block of 1000 ids
// from the sequence and the ids it does not use are lost when it closes, so a new session
// (every step opens new ones) starts above a gap of up to 999 ids. Sequences are also not
// transactional: a failed or rolled-back insert consumes its ids.
func (Dialect) AutoIncrementGaps() bool { return true }

// BeginWrite is BEGIN: row locks are taken as rows are written and waited for.
func (Dialect) BeginWrite() string { return "BEGIN" }
