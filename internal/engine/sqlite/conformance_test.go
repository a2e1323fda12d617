package sqlite

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/drvconn"
	"github.com/dbperf/dbperf/internal/engine/enginetest"
)

// TestConformance runs the engines' shared suite on an embedded database in a temporary
// directory per case.
func TestConformance(t *testing.T) {
	enginetest.Run(t, open, enginetest.Options{
		// SQLite has no sleep: a recursive count of about 5 million rows a second here.
		Slow: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ? * 5000000) " +
			"SELECT count(*) FROM c",
		StmtNotInterrupted: true,
		IndexExists:        "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name = ?",
		PlanIndex:          planIndex,
		Known: map[string]string{
			enginetest.CheckDDLRowsAffected: "mattn/go-sqlite3 reports sqlite3_changes(), " +
				"which DDL leaves at the count of the connection's last INSERT, UPDATE or DELETE",
		},
	})
}

// usingIndex finds the index in EXPLAIN QUERY PLAN's detail: "SCAN t USING INDEX i",
// "SEARCH t USING COVERING INDEX i (x>?)".
var usingIndex = regexp.MustCompile(`USING (?:COVERING )?INDEX (\S+)`)

// planIndex is the index SQLite's plan of query reads its table through.
func planIndex(t *testing.T, s engine.Session, query string) string {
	t.Helper()
	rows, err := s.(*drvconn.Session).QueryStrings(context.Background(), "EXPLAIN QUERY PLAN "+query)
	if err != nil {
		t.Fatalf("EXPLAIN QUERY PLAN %s: %v", query, err)
	}
	var details []string
	for _, r := range rows {
		detail := r[len(r)-1]
		details = append(details, detail)
		if m := usingIndex.FindStringSubmatch(detail); m != nil {
			return m[1]
		}
	}
	t.Logf("plan without an index: %s", strings.Join(details, "; "))
	return ""
}
