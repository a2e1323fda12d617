package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/servertest"
)

func needMariaDB(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(mariadbd); err != nil {
		t.Skipf("MariaDB not installed (%v): apt-get install mariadb-server mariadb-plugin-rocksdb", err)
	}
}

// startMariaDB starts a server for the test and stops it when the test ends.
func startMariaDB(t *testing.T, o server.Options) *server.Instance {
	t.Helper()
	needMariaDB(t)
	if o.WorkDir == "" {
		o.WorkDir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	in, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopMariaDB(t, in) })
	return in
}

// stopMariaDB stops the server and checks that its process is gone.
func stopMariaDB(t *testing.T, in *server.Instance) {
	t.Helper()
	pid := in.PID()
	if err := in.Stop(context.Background()); err != nil {
		t.Error(err)
	}
	if in.Alive() {
		t.Errorf("server %d still alive after stop", pid)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still exists after stop (kill 0: %v)", pid, err)
	}
}

// mariadbDB opens the instance's DSN (mysql://… → driver DSN).
func mariadbDB(t *testing.T, in *server.Instance) *sql.DB {
	t.Helper()
	dsn, ok := strings.CutPrefix(in.DSN, "mysql://")
	if !ok {
		t.Fatalf("DSN %q has no mysql:// prefix", in.DSN)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func queryString(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	var s sql.NullString
	if err := db.QueryRow(q).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s.String
}

// processesUsing lists the pids whose command line mentions s (our instance dirs).
func processesUsing(t *testing.T, s string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), s) {
			pids = append(pids, filepath.Base(filepath.Dir(f)))
		}
	}
	return pids
}

func TestMariaDBStartStopInnoDB(t *testing.T) {
	in := startMariaDB(t, server.Options{})
	if in.Engine != "mariadb" || in.Host != "127.0.0.1" || in.Port == 0 || in.Profile != "default" {
		t.Errorf("instance = %+v", in)
	}
	if !strings.HasPrefix(in.Version, mariadbSeries+".") {
		t.Errorf("Version = %q", in.Version)
	}
	// Clients connect through the unix socket, as the reference's MySQL client does.
	if want := "mysql://root:" + in.Password() + "@unix(" + in.Socket + ")/ib"; in.DSN != want || len(in.Password()) < 32 {
		t.Errorf("DSN = %q, want %q", in.DSN, want)
	}
	if !strings.Contains(in.Config, "innodb_buffer_pool_size=128M") || !strings.Contains(in.Config, "bind-address=127.0.0.1") {
		t.Errorf("Config lacks the profile or dbperf's lines:\n%s", in.Config)
	}
	if in.LogPath != filepath.Join(in.Dir, "mariadbd.log") {
		t.Errorf("LogPath = %q", in.LogPath)
	}
	db := mariadbDB(t, in)
	if got := queryString(t, db, "SELECT @@bind_address"); got != "127.0.0.1" {
		t.Errorf("@@bind_address = %q", got)
	}
	if got := queryString(t, db, "SELECT @@default_storage_engine"); got != "InnoDB" {
		t.Errorf("@@default_storage_engine = %q", got)
	}
	if got := queryString(t, db, "SELECT DATABASE()"); got != "ib" {
		t.Errorf("DATABASE() = %q", got)
	}
	if got := queryString(t, db, "SELECT @@performance_schema"); got != "1" {
		t.Errorf("@@performance_schema = %q", got)
	}
	if got := queryString(t, db, "SELECT @@datadir"); filepath.Clean(got) != in.DataDir {
		t.Errorf("@@datadir = %q, want %q", got, in.DataDir)
	}
	// The unix socket works too.
	sock, err := sql.Open("mysql", "root:"+in.Password()+"@unix("+in.Socket+")/ib")
	if err != nil {
		t.Fatal(err)
	}
	if err := sock.Ping(); err != nil {
		t.Errorf("socket %s: %v", in.Socket, err)
	}
	sock.Close()

	stopMariaDB(t, in)
	if pids := processesUsing(t, in.Dir); len(pids) > 0 {
		t.Errorf("processes left using %s: %v", in.Dir, pids)
	}
}

func TestMariaDBStartStopMyRocks(t *testing.T) {
	in := startMariaDB(t, server.Options{StorageEngine: "rocksdb", Profile: "default"})
	db := mariadbDB(t, in)
	if got := queryString(t, db, "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE='ROCKSDB'"); got != "YES" && got != "DEFAULT" {
		t.Errorf("ROCKSDB SUPPORT = %q", got)
	}
	if got := queryString(t, db, "SELECT @@default_storage_engine"); got != "ROCKSDB" {
		t.Errorf("@@default_storage_engine = %q", got)
	}
	if got := queryString(t, db, "SELECT @@bind_address"); got != "127.0.0.1" {
		t.Errorf("@@bind_address = %q", got)
	}
	// The loose- MyRocks line of the profile took effect.
	if got := queryString(t, db, "SELECT @@rocksdb_block_cache_size"); got != "134217728" {
		t.Errorf("@@rocksdb_block_cache_size = %q", got)
	}
	stopMariaDB(t, in)
}

func TestMariaDBCachedProfileStartsWithoutRocksDB(t *testing.T) {
	// cached.cnf carries loose-rocksdb_* lines; an InnoDB server must start anyway. The
	// 4G pool is reserved, not touched, and the 8G redo log is preallocated, not written,
	// so this runs on a small test machine (it needs the disk space, though).
	in := startMariaDB(t, server.Options{Profile: "cached"})
	db := mariadbDB(t, in)
	if got := queryString(t, db, "SELECT @@innodb_buffer_pool_size"); got != "4294967296" {
		t.Errorf("@@innodb_buffer_pool_size = %q", got)
	}
}

func TestMariaDBLongWorkDirSocket(t *testing.T) {
	work := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))
	in := startMariaDB(t, server.Options{WorkDir: work})
	if len(in.Socket) >= server.MaxSocketPath || !strings.HasPrefix(in.Socket, "/tmp/dbperf-my-") {
		t.Fatalf("Socket = %q (%d bytes)", in.Socket, len(in.Socket))
	}
	servertest.CheckPrivateDir(t, filepath.Dir(in.Socket))
	sock, err := sql.Open("mysql", "root:"+in.Password()+"@unix("+in.Socket+")/ib")
	if err != nil {
		t.Fatal(err)
	}
	if err := sock.Ping(); err != nil {
		t.Errorf("socket %s: %v", in.Socket, err)
	}
	sock.Close()
	stopMariaDB(t, in)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := os.Stat(filepath.Dir(in.Socket))
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("socket dir %s left after stop (%v)", filepath.Dir(in.Socket), err)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// badProfile writes a profiles dir with mariadb/bad.cnf.
func badProfile(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "mariadb"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mariadb", "bad.cnf"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestMariaDBBadProfile(t *testing.T) {
	needMariaDB(t)
	tests := []struct {
		name, cnf, want string
	}{
		// Fails in mariadb-install-db already.
		{"unknown option", "[mysqld]\nno_such_option_dbperf=1\n", "no_such_option_dbperf"},
		// Passes mariadb-install-db (bootstrap does not read init-file) and fails on start,
		// after the process is running.
		{"init-file missing", "[mysqld]\ninit-file=/nonexistent/dbperf-init.sql\n", "dbperf-init.sql"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			in, err := Start(ctx, server.Options{WorkDir: work, ProfilesDir: badProfile(t, tc.cnf), Profile: "bad"})
			if err == nil {
				stopMariaDB(t, in)
				t.Fatal("server started with a bad profile")
			}
			t.Logf("error: %v", err)
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "mariadbd.log") {
				t.Errorf("error lacks the log tail (%q):\n%v", tc.want, err)
			}
			if pids := processesUsing(t, work); len(pids) > 0 {
				t.Errorf("processes left using %s: %v", work, pids)
			}
		})
	}
}

func TestMariaDBUnknownProfile(t *testing.T) {
	needMariaDB(t)
	_, err := Start(context.Background(), server.Options{WorkDir: t.TempDir(), Profile: "nope"})
	if err == nil || !strings.Contains(err.Error(), `unknown mariadb profile "nope"`) || !strings.Contains(err.Error(), "cached, default") {
		t.Fatalf("err = %v", err)
	}
}

func TestMariaDBOptionsErrors(t *testing.T) {
	needMariaDB(t)
	for _, o := range []server.Options{
		{StorageEngine: "myisam"},
		{Version: "11.4"},
	} {
		o.WorkDir = t.TempDir()
		if in, err := Start(context.Background(), o); err == nil {
			stopMariaDB(t, in)
			t.Errorf("%+v: started", o)
		}
	}
}

func TestMariaDBVersionCheck(t *testing.T) {
	for _, tc := range []struct {
		want, installed string
		ok              bool
	}{
		{"", "10.11.19", true},
		{"", "11.4.2", true},
		{"10.11", "10.11.19", true},
		{"10.11.19", "10.11.19", true},
		{"10.1", "10.11.19", false},
		{"10.11.2", "10.11.19", false},
		{"11.4", "11.4.2", false},
		{"10.6", "10.11.19", false},
	} {
		err := checkMariaDBVersion(tc.want, tc.installed)
		if (err == nil) != tc.ok {
			t.Errorf("check(%q, %q) = %v, want ok=%v", tc.want, tc.installed, err, tc.ok)
		}
	}
}
