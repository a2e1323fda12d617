// Package servertest holds what the server engines' tests share: work and cache
// directories a root-run server can use, checks that an instance's directory is private
// and holds no password, and a fake Maven repository serving an engine's jars.
//
// WorkDir and CacheDir are the directories; CheckPrivateDir and CheckNoPassword the
// checks; NewFakeMaven the fake repository (FakeMaven); InstallReal a real install into
// the test cache. cgroup.go has NeedCgroups, CheckInCgroup and ReadOnlyCgroupTree.
package servertest

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/server"
)

// WorkDir is a t.TempDir the server's user can enter when the tests run as root
// (t.TempDir's directories are 0700).
func WorkDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	for _, p := range []string{d, filepath.Dir(d)} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// CacheDir persists across runs so a real install downloads once: $DBPERF_CACHE_DIR, else
// the user's cache dir, as dbperf's own default.
func CacheDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("DBPERF_CACHE_DIR"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(d, "dbperf")
}

// NobodyCred is the credential of the user nobody, with no supplementary groups; the test
// is skipped when it does not run as root (it cannot become another user then).
func NobodyCred(t *testing.T) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot run a process as another user")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
}

// NobodyCanEnter says whether a process running as nobody can cd into dir.
func NobodyCanEnter(t *testing.T, dir string) bool {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `cd "$1"`, "sh", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: NobodyCred(t)}
	return cmd.Run() == nil
}

// CheckPrivateDir checks that dir is 0700 and, as root, that nobody cannot enter it while
// it can enter dir's parent (so the refusal is dir's own).
func CheckPrivateDir(t *testing.T, dir string) {
	t.Helper()
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("%s has mode %v, want 0700", dir, st.Mode().Perm())
	}
	if os.Geteuid() != 0 {
		return
	}
	if !NobodyCanEnter(t, filepath.Dir(dir)) {
		t.Fatalf("nobody cannot enter %s: the test cannot tell whether %s is private", filepath.Dir(dir), dir)
	}
	if NobodyCanEnter(t, dir) {
		t.Errorf("a process running as nobody can enter the socket directory %s", dir)
	}
}

// CheckNoPassword fails when a file under dir (the instance dir: config, log, data) holds
// the password in clear.
func CheckNoPassword(t *testing.T, dir, password string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(password)) {
			t.Errorf("%s holds the password in clear", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// FakeMaven serves a tiny Maven repository for one artifact (its Path, as
// server.Artifact's): maven-metadata.xml listing Versions, and each version's jar with
// its .sha1. Hits counts the requests per URL path.
type FakeMaven struct {
	Path     string
	Versions []string

	mu   sync.Mutex
	jars map[string][]byte // version → jar
	sha1 map[string]string
	hits map[string]int
}

// NewFakeMaven serves jar for every one of versions.
func NewFakeMaven(artifactPath string, jar func(version string) []byte, versions ...string) *FakeMaven {
	f := &FakeMaven{Path: artifactPath, Versions: versions, jars: map[string][]byte{}, sha1: map[string]string{}, hits: map[string]int{}}
	for _, v := range versions {
		f.SetJar(v, jar(v))
	}
	return f
}

// SetJar serves jar as version's, with its true SHA-1.
func (f *FakeMaven) SetJar(version string, jar []byte) {
	sum := sha1.Sum(jar)
	f.SetJarSHA1(version, jar, hex.EncodeToString(sum[:]))
}

// SetJarSHA1 serves jar as version's with sum as its published SHA-1 (a wrong one tests
// the check).
func (f *FakeMaven) SetJarSHA1(version string, jar []byte, sum string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.jars[version], f.sha1[version] = jar, sum
}

// Hits is how many requests asked for the URL path p.
func (f *FakeMaven) Hits(p string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[p]
}

// Requests is how many requests the repository answered.
func (f *FakeMaven) Requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.hits {
		n += c
	}
	return n
}

// JarPath is the URL path of version's jar.
func (f *FakeMaven) JarPath(version string) string {
	return fmt.Sprintf("/%s/%s/%s-%s.jar", f.Path, version, path.Base(f.Path), version)
}

// ServeHTTP serves the metadata, the jars and their checksums; anything else is a 404.
func (f *FakeMaven) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hits[r.URL.Path]++
	rest, ok := strings.CutPrefix(r.URL.Path, "/"+f.Path+"/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	if rest == "maven-metadata.xml" {
		fmt.Fprint(w, "<metadata><versioning><versions>")
		for _, v := range f.Versions {
			fmt.Fprintf(w, "<version>%s</version>", v)
		}
		fmt.Fprint(w, "</versions></versioning></metadata>")
		return
	}
	v, file, _ := strings.Cut(rest, "/")
	switch {
	case f.jars[v] == nil || !strings.HasPrefix(file, path.Base(f.Path)+"-"+v+".jar"):
		http.NotFound(w, r)
	case strings.HasSuffix(file, ".jar.sha1"):
		fmt.Fprint(w, f.sha1[v])
	case strings.HasSuffix(file, ".jar"):
		_, _ = w.Write(f.jars[v])
	default:
		http.NotFound(w, r)
	}
}

// InstallReal installs version of e from Maven Central into the shared test cache
// (CacheDir, so it downloads once) and returns the cache dir; the test is skipped when
// the version is not installed and cannot be: DBPERF_OFFLINE set, or Maven Central
// unreachable.
func InstallReal(t *testing.T, e server.Engine, version string) string {
	t.Helper()
	cache := CacheDir(t)
	installed := false
	if vs, err := e.Versions(cache); err == nil {
		for _, v := range vs {
			installed = installed || (v.Source == cache && (v.Version == version || strings.HasPrefix(v.Version, version+".")))
		}
	}
	if !installed {
		if os.Getenv("DBPERF_OFFLINE") != "" {
			t.Skipf("DBPERF_OFFLINE is set and %s %s is not installed", e.Name(), version)
		}
		c, err := net.DialTimeout("tcp", "repo1.maven.org:443", 10*time.Second)
		if err != nil {
			t.Skipf("Maven Central unreachable, cannot install %s %s: %v", e.Name(), version, err)
		}
		c.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir, err := e.Install(ctx, "", cache, version)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(dir), version+".") {
		t.Fatalf("installing %s %s installed %s", e.Name(), version, dir)
	}
	return cache
}
