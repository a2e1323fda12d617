package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/profile"
)

// TestRunCPUProfileMariaDB: dbperf run --cpu-profile on a managed MariaDB (Debian's 10.11,
// InnoDB). Each worker's connection thread (performance_schema.threads.THREAD_OS_ID) is
// its role: the insert connection is under the SQL layer's insert (mysql_insert,
// handler::ha_write_row: exported; InnoDB's own functions, hidden in Debian's stripped
// binary, read "[mariadbd]"), the delete connection in l.i1 under mysql_delete; the
// server's background threads are named by their performance_schema.threads NAME (InnoDB's
// purge runs in its thread pool: background:innodb/thread_pool_thread). Then a run on a
// server started with performance_schema=OFF: no worker roles, the server's samples are
// the role server, and the step's note says why.
func TestRunCPUProfileMariaDB(t *testing.T) {
	needPerfMariaDB(t)
	dir := t.TempDir()
	profDir := filepath.Join(dir, "prof")
	// 999 Hz: 2 s steps at 99 Hz give the background threads a handful of samples.
	env := map[string]string{"DBPERF_CPU_PROFILE_HZ": "999"}
	code, out, errOut := runCLI(t, env, "run", "insertbench", "--engine", "mariadb", "--managed",
		"--scale", "tiny", "--steps", "l.i0,l.x,l.i1", "--time", "2", "--quiet",
		"--results", filepath.Join(dir, "r.db"), "--cpu-profile", profDir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	names := foldedNames(t, filepath.Join(profDir, "run-1"))
	t.Logf("profiles: %v", names)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(profDir, "run-1", name))
		if err != nil {
			t.Fatalf("%v (have %v)", err, names)
		}
		return string(b)
	}
	hasFrames := func(what, folded string, fns ...string) {
		t.Helper()
		for _, fn := range fns {
			if !strings.Contains(folded, ";"+fn+";") && !strings.Contains(folded, ";"+fn+" ") {
				t.Errorf("%s: no stack with %s:\n%.4000s", what, fn, folded)
			}
		}
	}
	hasFrames("l.i0 insert role", read("l.i0.insert.folded"), "do_command", "mysql_execute_command", "mysql_insert", "handler::ha_write_row")
	hasFrames("l.i1 insert role", read("l.i1.insert.folded"), "mysql_insert", "handler::ha_write_row")
	hasFrames("l.i1 delete role", read("l.i1.delete.folded"), "mysql_execute_command", "mysql_delete", "handler::ha_delete_row")
	read("l.x.index.folded")
	read("l.i1.client.folded")
	innodb := false
	for _, n := range names {
		if strings.Contains(n, "background:mariadbd") {
			// Threads performance_schema does not list (InnoDB's io_uring completion
			// thread) keep the process's name; say so, it is not an error.
			t.Logf("unnamed server threads: %s", n)
		}
		innodb = innodb || strings.HasPrefix(n, "l.i1.background:innodb_")
	}
	if !innodb {
		t.Errorf("l.i1: no background:innodb/… role in %v", names)
	}

	// performance_schema=OFF, as a user turns it off: a profile of their own.
	profiles := filepath.Join(dir, "profiles")
	if err := os.MkdirAll(filepath.Join(profiles, "mariadb"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profiles, "mariadb", "nops.cnf"), []byte("[mysqld]\nperformance_schema=OFF\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "off.db")
	offDir := filepath.Join(dir, "prof-off")
	code, out, errOut = runCLI(t, env, "run", "insertbench", "--engine", "mariadb", "--managed",
		"--profile", "nops", "--profiles-dir", profiles,
		"--scale", "tiny", "--steps", "l.i0", "--time", "1", "--quiet",
		"--results", results, "--cpu-profile", offDir)
	if code != 0 {
		t.Fatalf("performance_schema=OFF: exit %d\n%s\n%s", code, out, errOut)
	}
	names = foldedNames(t, filepath.Join(offDir, "run-1"))
	t.Logf("profiles with performance_schema=OFF: %v", names)
	if want := []string{"l.i0.client.folded", "l.i0.server.folded"}; strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("performance_schema=OFF: profiles %v, want %v (no worker role, the server's samples as role server)", names, want)
	}
	code, out, errOut = runCLI(t, nil, "report", "--results", results, "--format", "json")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	var rep struct {
		Runs []struct {
			Steps []struct {
				Name string `json:"name"`
				Note string `json:"note"`
			} `json:"steps"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report JSON: %v", err)
	}
	if len(rep.Runs) != 1 || len(rep.Runs[0].Steps) != 1 {
		t.Fatalf("report: %+v", rep)
	}
	note := rep.Runs[0].Steps[0].Note
	const want = "cpu profile: roles absent, the server's samples are role server: mariadb session pid: performance_schema is off on this server"
	if !strings.Contains(note, want) || strings.Count(note, "cpu profile:") != 1 {
		t.Errorf("l.i0's note %q: want it to say once %q", note, want)
	}
}

// foldedNames are the folded profiles' file names in dir, sorted.
func foldedNames(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.folded"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	return names
}

// needPerfMariaDB skips a test that profiles a managed MariaDB when it cannot run: -short,
// no MariaDB server (Debian's mariadbd), or perf unavailable.
func needPerfMariaDB(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a database server")
	}
	if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
		t.Skipf("mariadbd not installed (make test installs it): %v", err)
	}
	if err := profile.Available(context.Background()); err != nil {
		t.Skipf("perf unavailable: %v", err)
	}
}

// fakeNamer is an engine.ThreadNamer of fixed names, or of an error.
type fakeNamer struct {
	names map[int]string
	err   error
}

func (f fakeNamer) ServerThreads(context.Context) (map[int]string, error) { return f.names, f.err }

// TestCPUProfileFilterThreads: how a MariaDB server's samples are attributed, without a
// server: a worker's connection thread is its role, a thread the server names is
// background:<name>, another keeps the process's name; with the workers' sessions
// unknown, the unnamed threads are the role server.
func TestCPUProfileFilterThreads(t *testing.T) {
	const server, self = 100, 7
	p := &cpuProfiler{serverPID: server, self: self, titles: map[int]string{server: "/usr/sbin/mariadbd --defaults-file=x"},
		namer: fakeNamer{names: map[int]string{server: "sql/main", 104: "innodb/page_cleaner_thread", 105: "sql/one_connection"}}}
	p.sessions = map[int]string{105: "insert"}
	p.threads = map[int]string{}
	p.readThreads(context.Background())
	tasks := profile.NewTasks()
	for _, c := range []struct {
		absent   string
		pid, tid int
		want     string
	}{
		{"", self, self + 1, roleClient},
		{"", 999, 999, ""}, // another process: dropped
		{"", server, 105, "insert"},
		{"", server, 104, "background:innodb/page_cleaner_thread"},
		{"", server, server, "background:sql/main"},
		{"", server, 103, "background:mariadbd"}, // a thread performance_schema does not list
		{"performance_schema is off", server, 103, roleServer},
		{"performance_schema is off", server, 104, "background:innodb/page_cleaner_thread"},
	} {
		p.absent = c.absent
		role, ok := p.filter(tasks)(c.pid, c.tid, "mariadbd")
		if role != c.want || ok != (c.want != "") {
			t.Errorf("absent %q, pid %d tid %d: %q %v, want %q", c.absent, c.pid, c.tid, role, ok, c.want)
		}
	}
	p.namer, p.threadsErr = fakeNamer{err: errors.New("performance_schema is off")}, nil
	p.readThreads(context.Background())
	if p.threadsErr == nil || len(p.threads) != 3 {
		t.Errorf("a failed read: error %v, threads %v (want the error kept, the names read before kept)", p.threadsErr, p.threads)
	}
}
