package cli

import (
	"os"
	"strings"
	"testing"
)

// TestResultsKeywordValueDSN (issue 40, M4): libpq's key=value form given to --results is
// a PostgreSQL store, as --dsn takes it: against a closed port it gives one clear error
// (exit 2) naming the store without its password, and creates no file (it was taken as
// a SQLite path: a file named with the password was made and the run exited 0).
func TestResultsKeywordValueDSN(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, dsn := range []string{
		"host=127.0.0.1 port=1 user=postgres password=SECRETPW dbname=ib connect_timeout=5",
		"dbname=ib host=127.0.0.1 port=1 user=postgres password='SECRET PW' connect_timeout=5",
	} {
		for _, args := range [][]string{
			{"run", "insertbench", "--engine", "sqlite", "--scale", "tiny", "--steps", "l.i0", "--results", dsn},
			{"runs", "--results", dsn},
			{"report", "--results", dsn},
			{"history", "--results", dsn},
		} {
			code, out, stderr := runCLI(t, nil, args...)
			if code != ExitBadInput || strings.Contains(out+stderr, "SECRET") || !strings.Contains(stderr, "127.0.0.1") ||
				strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("%v: exit %d (want 2), one line naming the store without its password:\n%s%s", args[0], code, out, stderr)
			}
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("files left behind: %v", ents)
	}
	code, _, stderr := runCLI(t, map[string]string{"DBPERF_RESULTS": "host=127.0.0.1 port=1 password=SECRETPW connect_timeout=5"}, "runs")
	if code != ExitBadInput || strings.Contains(stderr, "SECRETPW") {
		t.Errorf("DBPERF_RESULTS: exit %d %s", code, stderr)
	}
}
