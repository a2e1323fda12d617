package mariadb

import (
	"context"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/drvconn"
	"github.com/dbperf/dbperf/internal/engine/enginetest"
)

// TestConformance runs the engines' shared suite on the package's managed servers, one per
// storage engine (MyRocks skips when its plugin is not installed).
func TestConformance(t *testing.T) {
	for _, storage := range []string{InnoDB, RocksDB} {
		t.Run(storage, func(t *testing.T) {
			enginetest.Run(t, func(t *testing.T) engine.SQL { return open(t, storage) }, enginetest.Options{
				Slow: "SELECT SLEEP(?)",
				IndexExists: "SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS " +
					"WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND INDEX_NAME = ?",
				PlanIndex: planIndex,
			})
		})
	}
}

// planIndex is the key column of EXPLAIN (id, select_type, table, type, possible_keys,
// key, …): the index the query reads its one table through.
func planIndex(t *testing.T, s engine.Session, query string) string {
	t.Helper()
	plan, err := s.(*drvconn.Session).QueryStrings(context.Background(), "EXPLAIN "+query)
	if err != nil || len(plan) != 1 || len(plan[0]) < 6 {
		t.Fatalf("EXPLAIN %s: %v %q", query, err, plan)
	}
	return plan[0][5]
}
