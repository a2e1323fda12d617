package mariadb

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/server"
)

// seedProfile is one of the built-in profiles of the configs the seeds toggle (issue 26
// item 3) and what shows it is in effect on a server that started with it.
type seedProfile struct {
	name string
	// innodb and rocksdb are the settings each storage engine's server must report:
	// query → the value. A MyRocks-only profile has no innodb settings: on InnoDB its
	// loose-rocksdb_ line is left out with a note (rocksdbOnly).
	innodb, rocksdb map[string]string
	rocksdbOnly     string // the option an InnoDB server leaves out
}

// cfOption is the query of an option of MyRocks' default column family as RocksDB
// applied it.
func cfOption(opt string) string {
	return "SELECT VALUE FROM information_schema.ROCKSDB_CF_OPTIONS WHERE CF_NAME='default' AND OPTION_TYPE='" + opt + "'"
}

func seedProfiles() []seedProfile {
	binlog := map[string]string{"SELECT @@log_bin": "1", "SELECT @@binlog_format": "ROW", "SELECT @@sync_binlog": "1",
		"SELECT @@server_id": "1",
		// The binlog lives in the instance's data directory.
		"SELECT @@log_bin_basename = CONCAT(@@datadir, 'binlog')": "1"}
	nobinlog := map[string]string{"SELECT @@log_bin": "0"}
	compaction := func(style, slow, stop string) map[string]string {
		return map[string]string{
			cfOption("COMPACTION_STYLE"):                   style,
			cfOption("LEVEL0_FILE_NUM_COMPACTION_TRIGGER"): "4",
			cfOption("LEVEL0_SLOWDOWN_WRITES_TRIGGER"):     slow,
			cfOption("LEVEL0_STOP_WRITES_TRIGGER"):         stop,
		}
	}
	return []seedProfile{
		{name: "binlog", innodb: binlog, rocksdb: binlog},
		{name: "nobinlog", innodb: nobinlog, rocksdb: nobinlog},
		{name: "trx1", innodb: map[string]string{"SELECT @@innodb_flush_log_at_trx_commit": "1", "SELECT @@log_bin": "0"},
			rocksdb: map[string]string{"SELECT @@rocksdb_flush_log_at_trx_commit": "1", "SELECT @@log_bin": "0"}},
		{name: "trx2", innodb: map[string]string{"SELECT @@innodb_flush_log_at_trx_commit": "2", "SELECT @@log_bin": "0"},
			rocksdb: map[string]string{"SELECT @@rocksdb_flush_log_at_trx_commit": "2", "SELECT @@log_bin": "0"}},
		{name: "leveled", rocksdb: compaction("kCompactionStyleLevel", "20", "30"), rocksdbOnly: "loose-rocksdb_default_cf_options"},
		{name: "leveled-l0-10", rocksdb: compaction("kCompactionStyleLevel", "10", "15"), rocksdbOnly: "loose-rocksdb_default_cf_options"},
		{name: "universal", rocksdb: compaction("kCompactionStyleUniversal", "20", "30"), rocksdbOnly: "loose-rocksdb_default_cf_options"},
	}
}

// Issue 26 item 3: every profile of the configs the seeds toggle starts on every MariaDB
// dbperf installs (Debian's 10.11 with InnoDB and with MyRocks, 11.4 from Maven Central,
// which has no RocksDB plugin), its key settings are in effect there, and a row written
// in the storage engine commits (through the binlog where it is on: MyRocks needs it
// row-based). A MyRocks-only profile on a server without MyRocks is the nobinlog profile
// but for its loose-rocksdb_ line, which is left out: the fitted config that server gets is
// checked to be nobinlog's, line for line, rather than started again (6 starts of 21,
// about 3 s of the test's 14 on a 2-core machine). The servers start concurrently, each in its own directory
// on its own port: goroutines rather than parallel subtests, which go test runs only
// GOMAXPROCS at a time (2 on a 2-core machine), while a start spends much of its time
// waiting.
func TestMariaDBSeedProfilesStart(t *testing.T) {
	needMariaDB(t)
	// Every profile listed here is built in, and every built-in profile but default and
	// cached is listed here.
	builtin, err := server.Profiles("", "mariadb")
	if err != nil {
		t.Fatal(err)
	}
	// galera is a cluster's profile: TestClusterMariaDB (internal/cli) starts three nodes on it.
	listed := map[string]bool{"default": true, "cached": true, "galera": true}
	for _, p := range seedProfiles() {
		listed[p.name] = true
	}
	for _, name := range builtin {
		if !listed[name] {
			t.Errorf("built-in profile %s is not started by this test", name)
		}
		delete(listed, name)
	}
	if len(listed) > 0 {
		t.Errorf("not built-in profiles: %v", listed)
	}

	servers := []struct{ name, version, storage string }{
		{"10.11", "", "innodb"},
		{"10.11-rocksdb", "", "rocksdb"},
		{"11.4", "11.4", "innodb"},
	}
	type start struct {
		name string
		p    seedProfile
		o    server.Options
		in   *server.Instance
		err  error
		took time.Duration
		// fitOnly: not started, its fitted config compared with nobinlog's.
		fitOnly bool
	}
	var starts []*start
	for _, srv := range servers {
		var cache string
		if srv.version != "" {
			// Installed once into the shared test cache; skipped (not failed) offline.
			if !t.Run("install-"+srv.name, func(t *testing.T) { cache = installRealMariaDB(t) }) || cache == "" {
				continue
			}
		}
		for _, p := range seedProfiles() {
			st := &start{name: srv.name + "/" + p.name, p: p,
				o: server.Options{Version: srv.version, CacheDir: cache, StorageEngine: srv.storage, Profile: p.name}}
			st.fitOnly = p.rocksdbOnly != "" && srv.storage != "rocksdb"
			if !st.fitOnly {
				st.o.WorkDir = t.TempDir()
			}
			starts = append(starts, st)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t0 := time.Now()
	var wg sync.WaitGroup
	// Six at a time: on a 2-core machine all 15 at once take longer (the servers' page
	// faults and disk writes contend), fewer leave the CPUs idle while starts wait.
	sem := make(chan struct{}, 6)
	started := 0
	for _, s := range starts {
		if s.fitOnly {
			continue
		}
		started++
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			t0 := time.Now()
			s.in, s.err = Start(ctx, s.o)
			s.took = time.Since(t0)
		})
	}
	wg.Wait()
	t.Logf("%d servers started in %v", started, time.Since(t0).Round(time.Millisecond))
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for _, s := range starts {
			if s.in != nil {
				wg.Go(func() { stopMariaDB(t, s.in) })
			}
		}
		wg.Wait()
	})
	for _, s := range starts {
		t.Run(s.name, func(t *testing.T) {
			if s.fitOnly {
				checkFitsAsNobinlog(t, s.p, s.o)
				return
			}
			if s.err != nil {
				t.Fatalf("%s did not start: %v", s.name, s.err)
			}
			t.Logf("MariaDB %s/%s with profile %s started in %v", s.in.Version, s.o.StorageEngine, s.p.name, s.took.Round(time.Millisecond))
			checkSeedProfile(t, s.p, s.o, s.in)
		})
	}
}

func checkSeedProfile(t *testing.T, p seedProfile, o server.Options, in *server.Instance) {
	db := mariadbDB(t, in)
	want := p.innodb
	if o.StorageEngine == "rocksdb" {
		want = p.rocksdb
		if got := queryString(t, db, "SELECT @@default_storage_engine"); got != "ROCKSDB" {
			t.Errorf("@@default_storage_engine = %q", got)
		}
	}
	for q, v := range want {
		if got := queryString(t, db, q); got != v {
			t.Errorf("%s = %q, want %q", q, got, v)
		}
	}
	// The only lines left out are the MyRocks ones of a server without MyRocks.
	for _, n := range in.ProfileSkipped {
		if o.StorageEngine == "rocksdb" || !strings.HasPrefix(n, "loose-rocksdb_") {
			t.Errorf("left out: %s", n)
		}
	}
	if p.rocksdbOnly != "" && o.StorageEngine != "rocksdb" {
		found := false
		for _, n := range in.ProfileSkipped {
			found = found || strings.HasPrefix(n, p.rocksdbOnly+"=")
		}
		if !found {
			t.Errorf("%s not noted as left out: %q", p.rocksdbOnly, in.ProfileSkipped)
		}
	}
	// A write commits, in the storage engine the server runs, through the binlog when on.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	binlog := want["SELECT @@log_bin"] == "1"
	binlogPos := func() (string, int64) {
		var file string
		var pos int64
		var rest [2]sql.NullString
		if err := conn.QueryRowContext(ctx, "SHOW MASTER STATUS").Scan(&file, &pos, &rest[0], &rest[1]); err != nil {
			t.Fatalf("SHOW MASTER STATUS: %v", err)
		}
		return file, pos
	}
	var file0 string
	var pos0 int64
	if binlog {
		file0, pos0 = binlogPos()
	}
	for _, q := range []string{"CREATE TABLE t (id BIGINT PRIMARY KEY, v INT, KEY (v))", "INSERT INTO t VALUES (1, 10), (2, 20)"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if got := connString(t, ctx, conn, "SELECT SUM(v) FROM t"); got != "30" {
		t.Errorf("SUM(v) = %q", got)
	}
	wantEngine := map[string]string{"rocksdb": "ROCKSDB", "innodb": "InnoDB"}[o.StorageEngine]
	if got := connString(t, ctx, conn, "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA='ib' AND TABLE_NAME='t'"); got != wantEngine {
		t.Errorf("table engine %q, want %q", got, wantEngine)
	}
	if binlog {
		// The binlog, in the data dir, grew by the create and the insert.
		file, pos := binlogPos()
		if file != file0 || !strings.HasPrefix(file, "binlog.") || pos <= pos0 {
			t.Errorf("binlog %s at %d before a create and an insert, %s at %d after", file0, pos0, file, pos)
		}
		if !server.IsFile(filepath.Join(in.DataDir, file)) {
			t.Errorf("binlog %s is not in the data dir %s", file, in.DataDir)
		}
	}
}

// checkFitsAsNobinlog checks that the server of o gets, from the MyRocks-only profile p, the
// config it gets from nobinlog (started by the test), but for p's MyRocks line, left out
// with a note.
func checkFitsAsNobinlog(t *testing.T, p seedProfile, o server.Options) {
	ctx := context.Background()
	bins, err := findMariaDB(ctx, o.Version, o.CacheDir)
	if err != nil {
		t.Fatal(err)
	}
	fit := func(name string) ([]string, []string) {
		text, _, err := server.ReadProfile("", "mariadb", name)
		if err != nil {
			t.Fatal(err)
		}
		fitted, notes, err := fitMariaDBProfile(ctx, bins, o.StorageEngine, text, o.CacheDir)
		if err != nil {
			t.Fatal(err)
		}
		var active []string
		for _, line := range strings.Split(fitted, "\n") {
			if l := strings.TrimSpace(line); l != "" && l[0] != '#' {
				active = append(active, l)
			}
		}
		return active, notes
	}
	got, notes := fit(p.name)
	want, nobinlogNotes := fit("nobinlog")
	if !slices.Equal(got, want) {
		t.Errorf("MariaDB %s/%s runs %s as\n%s\nnot as nobinlog:\n%s", bins.version, o.StorageEngine, p.name,
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Left out: nobinlog's MyRocks lines and p's own, with a note where another server
	// has the setting; on a server that has MyRocks as a plugin this run does not load
	// (10.11 for InnoDB), the loose- line is what loose- is for: no note (issue 42).
	i := slices.IndexFunc(notes, func(n string) bool { return strings.HasPrefix(n, p.rocksdbOnly+"=") })
	switch {
	case i >= 0 && len(notes) == len(nobinlogNotes)+1:
		t.Logf("MariaDB %s/%s runs %s as nobinlog; left out: %s", bins.version, o.StorageEngine, p.name, notes[i])
	case i < 0 && len(notes) == len(nobinlogNotes) && bins.basedir == "": // Debian's, with the plugin
		t.Logf("MariaDB %s/%s runs %s as nobinlog; its MyRocks line left out without a note", bins.version, o.StorageEngine, p.name)
	default:
		t.Fatalf("left out: %q, want nobinlog's %q and %s (MariaDB %s)", notes, nobinlogNotes, p.rocksdbOnly, bins.version)
	}
}

func connString(t *testing.T, ctx context.Context, conn *sql.Conn, q string) string {
	t.Helper()
	var s sql.NullString
	if err := conn.QueryRowContext(ctx, q).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s.String
}
