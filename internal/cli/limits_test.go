package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// More clients than the engine accepts are refused before any session opens, at once,
// with one line naming the limit, and no results store is left behind: SQLite by
// dbperf's documented cap, a managed PostgreSQL and MariaDB by max_connections.
func TestTooManyClients(t *testing.T) {
	t.Parallel() // asserts refusals and a generous 30 s bound
	for _, tc := range []struct {
		engine string
		args   []string
		want   string
	}{
		{"sqlite", nil, "--clients 100000 needs 300001 sessions but sqlite accepts 1024 (dbperf's cap for embedded SQLite"},
		{"postgres", []string{"--managed"}, "needs 300001 sessions but postgres accepts"},
		{"mariadb", []string{"--managed"}, "needs 300001 sessions but mariadb accepts"},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			if tc.engine != "sqlite" {
				needServer(t, tc.engine)
			}
			tmp := serverWorkdir(t)
			results := filepath.Join(tmp, "r.db")
			start := time.Now()
			args := append([]string{"run", "insertbench", "--engine", tc.engine, "--clients", "100000", "--scale", "tiny",
				"--results", results, "--profiles-dir", "../../profiles", "--workdir", tmp}, tc.args...)
			code, stdout, stderr := runCLI(t, nil, args...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != ExitBadInput || len(lines) != 1 || !strings.Contains(lines[0], tc.want) || !strings.Contains(lines[0], "use at most --clients") {
				t.Fatalf("exit %d, stderr %q, stdout %q", code, stderr, stdout)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("took %v", d)
			}
			if _, err := os.Stat(results); !os.IsNotExist(err) {
				t.Errorf("a results store was left behind: %v", err)
			}
			waitNoServers(t, tmp)
		})
	}
}
