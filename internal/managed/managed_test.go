package managed

import (
	"errors"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/servertest"
)

// The server's options carry the cgroup hierarchies only when limits are set, and read
// them through Options.ReadCgroups.
func TestOptionsServer(t *testing.T) {
	reads := 0
	cg := &server.Cgroups{}
	o := Options{Engine: "postgres", Version: "16", Profile: "default", CacheDir: "/cache",
		ReadCgroups: func() (*server.Cgroups, error) { reads++; return cg, nil }}
	so := o.Server("/base")
	if so.WorkDir != "/base" || so.Version != "16" || so.Profile != "default" || so.CacheDir != "/cache" || so.Cgroups != nil || reads != 0 {
		t.Errorf("without limits: %+v, %d reads", so, reads)
	}
	o.Limits = server.Limits{CPUs: 1}
	if so := o.Server("/base"); so.Cgroups != cg || so.Limits != o.Limits || reads != 1 {
		t.Errorf("with limits: cgroups %p (want %p), limits %+v, %d reads", so.Cgroups, cg, so.Limits, reads)
	}
	o.ReadCgroups = func() (*server.Cgroups, error) { return nil, errors.New("no /proc") }
	if so := o.Server("/base"); so.Cgroups != nil {
		t.Error("unreadable cgroups: the server reads them itself")
	}
}

// CheckLimits refuses a memory limit below the engine's least (naming it) and limits in
// a cgroup tree dbperf may not write; no limits pass without reading any cgroup.
func TestCheckLimits(t *testing.T) {
	ro := servertest.ReadOnlyCgroupTree(t)
	read := func() (*server.Cgroups, error) { return ro, nil }
	if err := CheckLimits(Options{Engine: "postgres", ReadCgroups: func() (*server.Cgroups, error) {
		t.Error("read the cgroups without limits")
		return ro, nil
	}}); err != nil {
		t.Errorf("no limits: %v", err)
	}
	err := CheckLimits(Options{Engine: "mariadb", Limits: server.Limits{Memory: 256 * server.MiB}, ReadCgroups: read})
	var me *MemoryError
	if !errors.As(err, &me) || !strings.HasPrefix(err.Error(), "a memory limit of 256MiB is too small for mariadb, which needs at least 384MiB") {
		t.Fatalf("mariadb under 256MiB: %v, want a *MemoryError", err)
	}
	srv, err := catalog.Server("mariadb")
	if err != nil {
		t.Fatal(err)
	}
	if me.Least != LeastMemory(srv) || me.Least != 384*server.MiB {
		t.Errorf("least %d, want %d", me.Least, 384*server.MiB)
	}
	err = CheckLimits(Options{Engine: "postgres", Limits: server.Limits{Memory: 256 * server.MiB}, ReadCgroups: read})
	if err == nil || errors.As(err, &me) || !strings.HasPrefix(err.Error(), "cannot limit the server's memory: dbperf cannot create a cgroup in ") {
		t.Errorf("a read-only cgroup tree: %v", err)
	}
}

// What the run records of a server: settings with its DSN redacted, the profile lines
// left out; its limits' env; the notes, fitted settings first; no OOM warning without a
// cgroup.
func TestServerRecord(t *testing.T) {
	s := &Server{Instance: &server.Instance{
		Engine: "mariadb", Profile: "default", Config: "[mysqld]\n",
		DSN:            "root:secret@unix(/tmp/s/mysqld.sock)/ib",
		ProfileSkipped: []string{"a=1 (line 2): not a setting", "b=2 (line 3): not a setting"},
		Limits:         server.Limits{Memory: 512 * server.MiB},
		MemoryFitted:   []string{"innodb_buffer_pool_size 1G → 128M"},
	}}
	set := s.Settings()
	if set["dbperf.managed"] != "true" || set["dbperf.profile"] != "default" || set["dbperf.profile_text"] != "[mysqld]\n" ||
		strings.Contains(set["dbperf.dsn"], "secret") || set["dbperf.dsn"] == "" ||
		set["dbperf.profile_skipped"] != "a=1 (line 2): not a setting\nb=2 (line 3): not a setting" {
		t.Errorf("settings: %q", set)
	}
	env := s.Env()
	if len(env) != 1 || env[EnvServerMemoryFitted] != "innodb_buffer_pool_size 1G → 128M" {
		t.Errorf("env without a cgroup: %q", env)
	}
	want := []string{
		"note: --server-memory 512MiB: innodb_buffer_pool_size 1G → 128M",
		"note: profile default: left out a=1 (line 2): not a setting",
		"note: profile default: left out b=2 (line 3): not a setting",
	}
	if got := s.Notes(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if w := OOMWarning(s.Instance); w != "" {
		t.Errorf("OOM warning without a cgroup: %q", w)
	}
	s.ProfileSkipped = nil
	if _, ok := s.Settings()["dbperf.profile_skipped"]; ok {
		t.Error("dbperf.profile_skipped without lines left out")
	}
}
