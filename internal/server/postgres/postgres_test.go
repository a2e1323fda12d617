package postgres

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/servertest"

	"github.com/jackc/pgx/v5"
	"github.com/ulikunitz/xz"
)

// needDebianPostgres skips the test when no PostgreSQL server binaries are installed.
func needDebianPostgres(t *testing.T) {
	t.Helper()
	if m, _ := filepath.Glob(filepath.Join(pgDebianRoot, "*", "bin", "postgres")); len(m) == 0 {
		t.Skipf("no PostgreSQL binaries under %s (apt-get install postgresql)", pgDebianRoot)
	}
	if !server.IsFile(filepath.Join(pgDebianRoot, pgDefaultMajor, "bin", "postgres")) {
		t.Fatalf("PostgreSQL is installed but not version %s, the default", pgDefaultMajor)
	}
}

func startPG(t *testing.T, o server.Options) *server.Instance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	in, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := in.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return in
}

func pgShow(t *testing.T, dsn string, names ...string) []string {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var out []string
	for _, n := range names {
		var v string
		if err := c.QueryRow(ctx, "SHOW "+n).Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func TestPostgresProfiles(t *testing.T) {
	got, err := server.Profiles("", "postgres")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cached", "default"} {
		if !slices.Contains(got, want) {
			t.Errorf("Profiles = %v, missing %s", got, want)
		}
	}
	for _, name := range got {
		text, src, err := server.ReadProfile("", "postgres", name)
		if err != nil {
			t.Fatal(err)
		}
		if src.Source() != server.BuiltinProfiles {
			t.Errorf("profile %s comes from %s, want the built-in one", name, src.Source())
		}
		// Every setting line carries a comment saying why.
		for _, line := range strings.Split(text, "\n") {
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") && !strings.Contains(l, "#") {
				t.Errorf("profile %s: setting without a comment: %q", name, l)
			}
		}
	}
	_, _, err = server.ReadProfile("", "postgres", "nosuch")
	if err == nil || !strings.Contains(err.Error(), "cached, default") {
		t.Errorf("unknown profile error = %v", err)
	}
	if _, _, err := server.ReadProfile("", "postgres", "../postgres/default"); err == nil {
		t.Error("a profile name with a path was accepted")
	}
}

func TestPostgresVersionMatching(t *testing.T) {
	vs := []string{"13.9.0", "13.18.0", "13.2.1", "14.1.0", "130.1.0"}
	for want, got := range map[string]string{
		"13": "13.18.0", "13.9": "13.9.0", "13.2.1": "13.2.1", "14": "14.1.0", "12": "", "13.1": "",
	} {
		if m := server.NewestMatch(vs, want); m != got {
			t.Errorf("server.NewestMatch(%s) = %q, want %q", want, m, got)
		}
	}
	for _, v := range []string{"13", "13.18.0"} {
		if !server.ValidVersion(v) {
			t.Errorf("server.ValidVersion(%q) = false", v)
		}
	}
	for _, v := range []string{"", "13.", "x", "13.1-rc1", "../13"} {
		if server.ValidVersion(v) {
			t.Errorf("server.ValidVersion(%q) = true", v)
		}
	}
}

// A managed Debian server: initialised from the profile, on loopback and a socket, with
// database ib; Stop leaves no process, Remove no directory.
func TestPostgresStartStop(t *testing.T) {
	needDebianPostgres(t)
	in := startPG(t, server.Options{WorkDir: servertest.WorkDir(t)})
	if !strings.HasPrefix(in.Version, pgDefaultMajor+".") || in.Engine != "postgres" || in.Profile != "default" {
		t.Errorf("instance %+v", in)
	}
	if !strings.Contains(in.Config, "shared_buffers = 128MB") {
		t.Errorf("Config = %q", in.Config)
	}
	if want := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/ib?sslmode=disable", in.Password(), in.Port); in.DSN != want || len(in.Password()) < 32 {
		t.Errorf("DSN = %q, want %q", in.DSN, want)
	}
	got := pgShow(t, in.DSN, "listen_addresses", "shared_buffers", "unix_socket_directories")
	if want := []string{"127.0.0.1", "128MB", in.Dir}; !slices.Equal(got, want) {
		t.Errorf("SHOW = %q, want %q", got, want)
	}
	if st, err := os.Stat(in.Socket); err != nil || st.Mode()&fs.ModeSocket == 0 {
		t.Errorf("socket %s: %v", in.Socket, err)
	}
	pid := in.PID()
	if err := in.Remove(); err == nil {
		t.Error("Remove of a running server succeeded")
	}
	if err := in.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if in.Alive() || syscall.Kill(pid, 0) == nil {
		t.Errorf("server %d still running after Stop", pid)
	}
	if !strings.Contains(in.LogTail(5), "shut") {
		t.Errorf("log tail after stop:\n%s", in.LogTail(5))
	}
	if err := in.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(in.Dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("instance dir after Remove: %v", err)
	}
}

// A work dir too long for a socket path puts the socket in a short temp dir, removed by Stop;
// the cached profile applies.
func TestPostgresLongWorkDirAndCachedProfile(t *testing.T) {
	needDebianPostgres(t)
	long := filepath.Join(servertest.WorkDir(t), strings.Repeat("d", 60), strings.Repeat("e", 40))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	for p := long; p != filepath.Dir(long); p = filepath.Dir(p) {
		if strings.HasPrefix(filepath.Base(p), "d") || strings.HasPrefix(filepath.Base(p), "e") {
			_ = os.Chmod(p, 0o755)
		}
	}
	in := startPG(t, server.Options{WorkDir: long, Profile: "cached"})
	sockDir := filepath.Dir(in.Socket)
	if strings.HasPrefix(sockDir, in.Dir) || len(in.Socket) >= server.MaxSocketPath {
		t.Errorf("socket %s for instance %s", in.Socket, in.Dir)
	}
	servertest.CheckPrivateDir(t, sockDir)
	if got := pgShow(t, in.DSN, "shared_buffers", "max_wal_size"); !slices.Equal(got, []string{"4GB", "16GB"}) {
		t.Errorf("cached profile: SHOW = %q", got)
	}
	if err := in.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sockDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket dir %s after Stop: %v", sockDir, err)
	}
	if err := in.Remove(); err != nil {
		t.Fatal(err)
	}
}

// A server that cannot start: the error holds the log's tail; nothing is left behind.
func TestPostgresStartFailure(t *testing.T) {
	needDebianPostgres(t)
	profiles := t.TempDir()
	if err := os.MkdirAll(filepath.Join(profiles, "postgres"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profiles, "postgres", "bad.conf"), []byte("shared_buffers = lots # bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wd := servertest.WorkDir(t)
	_, err := Start(context.Background(), server.Options{WorkDir: wd, ProfilesDir: profiles, Profile: "bad"})
	if err == nil || !strings.Contains(err.Error(), "shared_buffers") {
		t.Fatalf("err = %v, want the log's complaint about shared_buffers", err)
	}
	if ents, _ := os.ReadDir(wd); len(ents) != 0 {
		t.Errorf("left behind in the work dir: %v", ents)
	}
	if _, err := Start(context.Background(), server.Options{WorkDir: wd, Profile: "nosuch"}); err == nil ||
		!strings.Contains(err.Error(), "available") {
		t.Errorf("unknown profile: %v", err)
	}
	if _, err := Start(context.Background(), server.Options{WorkDir: wd, Version: "9.1", CacheDir: t.TempDir()}); err == nil ||
		!strings.Contains(err.Error(), `run "dbperf server install postgres@9.1"`) {
		t.Errorf("uninstalled version: %v", err)
	}
}

// newFakeMaven serves a tiny artifact repository: metadata listing versions, and one jar
// per version (fakeJar).
func newFakeMaven(t *testing.T, versions ...string) *servertest.FakeMaven {
	jar := fakeJar(t)
	return servertest.NewFakeMaven(pgArtifactPath, func(string) []byte { return jar }, versions...)
}

// fakeJar is a jar holding a .txz with a fake bin/postgres, a library and its symlink.
func fakeJar(t *testing.T) []byte {
	t.Helper()
	var tb bytes.Buffer
	xw, err := xz.NewWriter(&tb)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(xw)
	entries := []struct {
		hdr  tar.Header
		body string
	}{
		{tar.Header{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755}, ""},
		{tar.Header{Name: "bin/postgres", Typeflag: tar.TypeReg, Mode: 0o755}, "#!/bin/sh\necho fake\n"},
		{tar.Header{Name: "lib/libpq.so.5.13", Typeflag: tar.TypeReg, Mode: 0o644}, "elf"},
		{tar.Header{Name: "lib/libpq.so.5", Typeflag: tar.TypeSymlink, Linkname: "libpq.so.5.13"}, ""},
		{tar.Header{Name: "share/postgresql/postgres.bki", Typeflag: tar.TypeReg, Mode: 0o644}, "bki"},
	}
	for _, e := range entries {
		e.hdr.Size = int64(len(e.body))
		if err := tw.WriteHeader(&e.hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(tw.Close(), xw.Close()); err != nil {
		t.Fatal(err)
	}
	var jb bytes.Buffer
	zw := zip.NewWriter(&jb)
	if w, err := zw.Create("META-INF/MANIFEST.MF"); err != nil {
		t.Fatal(err)
	} else {
		_, _ = w.Write([]byte("Manifest-Version: 1.0\n"))
	}
	w, err := zw.Create("postgres-linux-x86_64.txz")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(tb.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return jb.Bytes()
}

func TestPostgresInstallFromFakeMaven(t *testing.T) {
	fm := newFakeMaven(t, "12.20.0", "13.2.0", "13.18.0", "13.9.0", "14.1.0")
	srv := httptest.NewServer(fm)
	defer srv.Close()
	ctx := context.Background()
	cache := t.TempDir()

	dir, err := New().Install(ctx, srv.URL, cache, "13")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "postgres", "13.18.0"); dir != want {
		t.Errorf("install dir = %s, want %s (newest 13.x)", dir, want)
	}
	if st, err := os.Stat(filepath.Join(dir, "bin", "postgres")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("bin/postgres: %v %v", st, err)
	}
	if l, err := os.Readlink(filepath.Join(dir, "lib", "libpq.so.5")); err != nil || l != "libpq.so.5.13" {
		t.Errorf("symlink: %q %v", l, err)
	}
	jarPath := fm.JarPath("13.18.0")
	if fm.Hits(jarPath) != 1 {
		t.Errorf("jar fetched %d times", fm.Hits(jarPath))
	}
	// Installed: no second download, by full version or by prefix.
	for _, v := range []string{"13.18.0", "13"} {
		if d, err := New().Install(ctx, srv.URL, cache, v); err != nil || d != dir {
			t.Errorf("reinstall %s: %s, %v", v, d, err)
		}
	}
	if fm.Hits(jarPath) != 1 {
		t.Errorf("jar fetched %d times after reinstalling", fm.Hits(jarPath))
	}
	if _, err := New().Install(ctx, srv.URL, cache, "13.9"); err != nil {
		t.Fatal(err)
	}
	got, err := artifact().Versions(cache)
	if err != nil || !slices.Equal(got, []string{"13.9.0", "13.18.0"}) {
		t.Errorf("InstalledPostgres = %v, %v", got, err)
	}
	if b, err := findPostgres("13", cache); err != nil || b.bin != filepath.Join(dir, "bin") || b.lib != filepath.Join(dir, "lib") {
		t.Errorf("findPostgres(13) = %+v, %v", b, err)
	}
	// Offline: an installed match is still found.
	if d, err := New().Install(ctx, "http://127.0.0.1:1", cache, "13"); err != nil || d != dir {
		t.Errorf("offline install of an installed version: %s, %v", d, err)
	}
	if _, err := New().Install(ctx, srv.URL, cache, "11"); err == nil || !strings.Contains(err.Error(), "no version matching 11") {
		t.Errorf("unpublished version: %v", err)
	}

	// A wrong checksum fails and leaves nothing.
	for _, v := range fm.Versions {
		fm.SetJarSHA1(v, fakeJar(t), strings.Repeat("0", 40))
	}
	cache2 := t.TempDir()
	if _, err := New().Install(ctx, srv.URL, cache2, "14"); err == nil || !strings.Contains(err.Error(), "SHA-1") {
		t.Fatalf("bad sha1: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(cache2, "postgres")); len(ents) != 0 {
		t.Errorf("left behind after a bad checksum: %v", ents)
	}
}

func TestPostgresExtractRefusesEscapes(t *testing.T) {
	for _, hdr := range []tar.Header{
		{Name: "../evil", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "/abs/evil", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "lib/link", Typeflag: tar.TypeSymlink, Linkname: "../../etc/passwd"},
		{Name: "lib/abs", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
	} {
		var b bytes.Buffer
		xw, _ := xz.NewWriter(&b)
		tw := tar.NewWriter(xw)
		if err := tw.WriteHeader(&hdr); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(tw.Close(), xw.Close()); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := extractTxz(&b, filepath.Join(dir, "x")); err == nil || !strings.Contains(err.Error(), "escapes") {
			t.Errorf("%s -> %s: err = %v", hdr.Name, hdr.Linkname, err)
		}
	}
}

// The real thing: PostgreSQL 13 from Maven Central, started and queried.
func TestPostgresInstallRealVersion13(t *testing.T) {
	if os.Getenv("DBPERF_OFFLINE") != "" {
		t.Skip("DBPERF_OFFLINE is set")
	}
	cache := servertest.InstallReal(t, New(), "13")
	in := startPG(t, server.Options{WorkDir: servertest.WorkDir(t), Version: "13", CacheDir: cache})
	if got := pgShow(t, in.DSN, "server_version")[0]; !strings.HasPrefix(got, "13.") || !strings.HasPrefix(in.Version, "13.") {
		t.Errorf("server_version = %q, instance version %q", got, in.Version)
	}
}
