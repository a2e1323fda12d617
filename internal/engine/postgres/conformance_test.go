package postgres

import (
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/enginetest"
)

// TestConformance runs the engines' shared suite on the package's managed server.
func TestConformance(t *testing.T) {
	enginetest.Run(t, open, enginetest.Options{
		Slow:        "SELECT pg_sleep($1)",
		IndexExists: "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1 AND indexname = $2",
		AfterCancel: noSleepLeft,
		Known: map[string]string{
			enginetest.CheckEmptyText: "engine.Args.TextAt of an empty text is a nil slice while the " +
				"Args' text buffer is nil, and a nil Bind value is NULL on the wire",
		},
	})
}

// noSleepLeft checks that the server stopped running the cancelled statement: the session
// sent a cancel request besides shutting its socket down.
func noSleepLeft(t *testing.T, h engine.SQL) {
	t.Helper()
	s := enginetest.NewSession(t, h)
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, _ := enginetest.QueryInt(t, s, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%' AND state = 'active'")
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server still runs the cancelled statement (%d sessions)", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
