package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	mariadbserver "github.com/dbperf/dbperf/internal/server/mariadb"
	"github.com/dbperf/dbperf/internal/server/servertest"
)

// mariadb114Cache is the cache dir the server package's tests install MariaDB 11.4 into
// ($DBPERF_CACHE_DIR or the user cache dir), with 11.4 installed there: downloaded from
// Maven Central once. The test is skipped only when that download is impossible.
func mariadb114Cache(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts database servers")
	}
	return servertest.InstallReal(t, mariadbserver.New(), "11.4")
}

// The Insert Benchmark at tiny scale on managed MariaDB 11.4 from Maven Central, through
// the cli: the run is stored with the server's version and the profile lines 11.4 lacks.
func TestManagedMariaDB114(t *testing.T) {
	cache := mariadb114Cache(t)
	// Beside the other parallel tests (installed first): it asserts what is stored.
	t.Parallel()
	tmp := serverWorkdir(t)
	results := filepath.Join(tmp, "r.db")
	code, stdout, stderr := runCLI(t, nil, "run", "insertbench", "--engine", "mariadb", "--managed", "--engine-version", "11.4",
		"--scale", "tiny", "--time", "1", "--results", results, "--workdir", tmp, "--profiles-dir", "../../profiles", "--cache-dir", cache)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	waitNoServers(t, tmp)
	if !strings.Contains(stdout, "note: profile default: left out loose-rocksdb_block_cache_size=128M") {
		t.Errorf("no note of the profile line left out:\n%s", stdout)
	}
	run := reportJSON(t, results).Runs[0]
	if run.Status != "ok" || run.Engine != "mariadb/innodb" || !strings.HasPrefix(run.EngineVersion, "11.4.") {
		t.Fatalf("run %s %s %q", run.Status, run.Engine, run.EngineVersion)
	}
	if v := run.Params["engine_version"]; v != "11.4" {
		t.Errorf("params engine_version = %v", v)
	}
	skipped := run.Settings["dbperf.profile_skipped"]
	if !strings.HasPrefix(skipped, "loose-rocksdb_block_cache_size=128M (line ") || !strings.Contains(skipped, "not a setting of MariaDB 11.4.5") {
		t.Errorf("dbperf.profile_skipped = %q", skipped)
	}
	if !strings.Contains(run.Settings["dbperf.profile_text"], "# dbperf left this out") {
		t.Errorf("the stored profile text does not show the line left out:\n%s", run.Settings["dbperf.profile_text"])
	}
	if len(run.Steps) != len(allSteps) {
		t.Fatalf("%d steps", len(run.Steps))
	}
	for _, st := range run.Steps {
		if st.Status != "ok" || st.Audit.Status != "ok" {
			t.Errorf("%s: %s, audit %s: %s %s", st.Name, st.Status, st.Audit.Status, st.Audit.Detail, st.Error)
		}
	}
	checkHW(t, run.Env, run.Steps)
}

// By hand: install (already there: no download), list, start, status, stop.
func TestServerCommandsMariaDB114(t *testing.T) {
	t.Parallel() // asserts the server commands' output
	cache := mariadb114Cache(t)
	work := serverWorkdir(t)
	for _, v := range []string{"11.4", "11.4.5"} {
		code, out, stderr := runCLI(t, nil, "server", "install", "mariadb@"+v, "--cache-dir", cache)
		if code != 0 || !strings.HasPrefix(out, "installed mariadb 11.4.5 in "+filepath.Join(cache, "mariadb", "11.4.5")) {
			t.Errorf("install mariadb@%s: exit %d %q %s", v, code, out, stderr)
		}
	}
	code, out, _ := runCLI(t, nil, "server", "list", "--cache-dir", cache)
	if code != 0 || !strings.Contains(out, "mariadb 11.4.5 ("+cache+")") {
		t.Errorf("list: exit %d:\n%s", code, out)
	}
	code, out, stderr := runCLI(t, nil, "server", "start", "mariadb", "--engine-version", "11.4", "--workdir", work,
		"--cache-dir", cache, "--profiles-dir", "../../profiles")
	if code != 0 {
		t.Fatalf("start: exit %d: %s", code, stderr)
	}
	defer runCLI(t, nil, "server", "stop", "mariadb", "--workdir", work)
	if !strings.Contains(out, "mariadb 11.4.5-MariaDB running (pid ") || !strings.Contains(out, "note: profile default: left out loose-rocksdb") {
		t.Errorf("start printed:\n%s", out)
	}
	code, out, _ = runCLI(t, nil, "server", "status", "mariadb", "--workdir", work)
	if code != 0 || !strings.Contains(out, "mariadb 11.4.5-MariaDB: running") {
		t.Errorf("status: exit %d: %s", code, out)
	}
	code, out, stderr = runCLI(t, nil, "server", "stop", "mariadb", "--workdir", work)
	if code != 0 || out != "mariadb stopped\n" {
		t.Errorf("stop: exit %d %q %s", code, out, stderr)
	}
	waitNoServers(t, work)
}

// MyRocks on 11.4, and installing what Maven Central does not provide, are bad input: one
// line, exit 2, nothing started or downloaded.
func TestMariaDB114BadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "insertbench", "--engine", "mariadb", "--managed", "--engine-version", "11.4", "--mysql-storage-engine", "rocksdb",
			"--scale", "tiny", "--results", filepath.Join(dir, "r.db"), "--cache-dir", dir},
			"--mysql-storage-engine rocksdb needs MariaDB 10.11 (Debian's, with mariadb-plugin-rocksdb): MariaDB 11.4 from Maven Central has no RocksDB plugin"},
		{[]string{"server", "start", "mariadb", "--engine-version", "11.4", "--mysql-storage-engine", "rocksdb", "--workdir", dir, "--cache-dir", dir},
			"MariaDB 11.4 from Maven Central has no RocksDB plugin"},
		{[]string{"server", "install", "mariadb@10.11", "--cache-dir", dir}, "MariaDB 10.11 is Debian's package"},
		{[]string{"server", "install", "mariadb@11.4-beta", "--cache-dir", dir}, `install mariadb: invalid version "11.4-beta" (want e.g. 11.4 or 11.4.5)`},
	} {
		code, stdout, stderr := runCLI(t, nil, tc.args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != ExitBadInput || len(lines) != 1 || !strings.Contains(lines[0], tc.want) || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant one line containing %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("bad input left %v in %s", ents, dir)
	}
}
