package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/servertest"
)

// TestServerLimitsRefused: limits that cannot be enforced are refused before anything
// starts, one line each: a cgroup tree dbperf may not write (why, and the fix), sizes
// that are not sizes or too small, no managed server to limit.
func TestServerLimitsRefused(t *testing.T) {
	ro := servertest.ReadOnlyCgroupTree(t)
	readCgroups = func() (*server.Cgroups, error) { return ro, nil }
	t.Cleanup(func() { readCgroups = server.ReadCgroups })
	notWritable := "read-only"
	if os.Geteuid() != 0 {
		notWritable = "dbperf does not run as root"
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"cgroups not writable", []string{"--engine", "postgres", "--managed", "--server-memory", "256M"},
			"dbperf: --server-memory 256MiB: cannot limit the server's memory: dbperf cannot create a cgroup in " + filepath.Join(ro.V1["memory"]) + ": "},
		{"not a size", []string{"--engine", "postgres", "--managed", "--server-memory", "lots"}, `dbperf: --server-memory "lots" is not a size: use bytes or a number with K, M, G or T`},
		{"too small for any server", []string{"--engine", "postgres", "--managed", "--server-memory", "64M"}, "dbperf: --server-memory 64M: a managed server needs at least 128MiB"},
		{"too small for mariadb", []string{"--engine", "mariadb", "--managed", "--server-memory", "256M"}, "dbperf: --server-memory 256MiB: a memory limit of 256MiB is too small for mariadb, which needs at least 384MiB"},
		{"no CPUs", []string{"--engine", "postgres", "--managed", "--server-cpus", "0"}, "dbperf: --server-cpus must be at least 1, got 0"},
		{"not managed", []string{"--engine", "postgres", "--dsn", "postgres://u@h/db", "--server-memory", "1G"}, "dbperf: --server-memory 1GiB: limits for a server dbperf starts: add --managed"},
		{"embedded", []string{"--server-cpus", "1"}, "dbperf: --server-cpus 1: limits for a server dbperf starts (--engine postgres|mariadb --managed); --engine sqlite runs inside dbperf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			results := filepath.Join(tmp, "r.db")
			args := append([]string{"run", "insertbench", "--scale", "tiny", "--results", results, "--workdir", filepath.Join(tmp, "work")}, tc.args...)
			code, _, stderr := runCLI(t, nil, args...)
			if code != ExitBadInput || !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 and one line beginning %q", code, stderr, tc.want)
			}
			if tc.name == "cgroups not writable" && (!strings.Contains(stderr, notWritable) || !strings.Contains(stderr, "): ")) {
				t.Errorf("the line must say why (%s) and the fix: %s", notWritable, stderr)
			}
			for _, p := range []string{results, filepath.Join(tmp, "work")} {
				if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s exists: nothing may be made or started (%v)", p, err)
				}
			}
		})
	}
}

// TestServerMemoryPostgres runs a managed PostgreSQL under --server-memory and
// --server-cpus: while it runs every server process is in a cgroup of its own with the
// limit set, the run's env records the limits and the settings fitted under them, and the
// cgroup is gone when the run is.
func TestServerMemoryPostgres(t *testing.T) {
	needServer(t, "postgres")
	servertest.NeedCgroups(t, server.Limits{Memory: 256 * server.MiB, CPUs: 1})
	tmp := serverWorkdir(t)
	results := filepath.Join(tmp, "r.db")
	done := make(chan int)
	var stderr string
	go func() {
		code, _, e := runCLICtx(context.Background(), nil, "run", "insertbench", "--engine", "postgres", "--managed",
			"--server-memory", "256M", "--server-cpus", "1", "--scale", "tiny", "--steps", "l.i0,qp100", "--time", "1",
			"--quiet", "--results", results, "--workdir", tmp, "--profiles-dir", "../../profiles")
		stderr = e
		done <- code
	}()
	prefix := fmt.Sprintf("dbperf-postgres-%d-", os.Getpid())
	cg, err := server.ReadCgroups()
	if err != nil {
		t.Fatal(err)
	}
	hierarchies := 2 // v1: the memory and the cpuset hierarchy's
	if b, _ := os.ReadFile(filepath.Join(cg.V2, "cgroup.controllers")); cg.V2 != "" && strings.Contains(string(b), "memory") {
		hierarchies = 1
	}
	var cgroups map[string]bool // the cgroups the server's processes were seen in
	code := -1
	for code < 0 {
		select {
		case code = <-done:
			continue
		case <-time.After(50 * time.Millisecond):
		}
		if cgroups != nil {
			continue // seen already
		}
		// The postmaster's pid file (initdb's single-user backends write their pid negated).
		var procs []int
		if files, _ := filepath.Glob(filepath.Join(tmp, "postgres-*", "data", "postmaster.pid")); len(files) == 1 {
			b, _ := os.ReadFile(files[0])
			line, _, _ := strings.Cut(string(b), "\n")
			if pm, err := strconv.Atoi(line); err == nil && pm > 0 {
				procs = servertest.ProcessTree(pm) // the postmaster and what it forked
			}
		}
		if len(procs) < 3 {
			continue // not started yet
		}
		cgroups = map[string]bool{}
		for _, pid := range procs {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
			if err != nil {
				continue // exited meanwhile
			}
			in := 0
			for line := range strings.Lines(string(b)) {
				parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
				if len(parts) == 3 && strings.HasPrefix(filepath.Base(parts[2]), prefix) {
					in++
					cgroups[parts[1]+":"+parts[2]] = true
				}
			}
			if in != hierarchies {
				t.Errorf("server process %d is in %d cgroups named %s*, want %d:\n%s", pid, in, prefix, hierarchies, b)
			}
		}
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(cgroups) == 0 {
		t.Fatal("the server's processes were never seen")
	}
	run := reportJSON(t, results).Runs[0]
	if m := run.Env["server_memory"]; !strings.HasPrefix(m, "256MiB, page cache included (cgroup v") || !strings.Contains(m, prefix) {
		t.Errorf("env server_memory = %q", m)
	}
	if c := run.Env["server_cpus"]; !strings.HasPrefix(c, "1 CPU: ") {
		t.Errorf("env server_cpus = %q", c)
	}
	if f := run.Env["server_memory_fitted"]; !strings.Contains(f, "shared_buffers = 64MB: the profile's 128MB is more than 1/4 of the 256MiB memory limit") {
		t.Errorf("env server_memory_fitted = %q", f)
	}
	if run.Settings["shared_buffers"] != "64MB" && run.Settings["shared_buffers"] != "8192" {
		t.Errorf("shared_buffers = %q, want 64MB", run.Settings["shared_buffers"])
	}
	for k := range cgroups {
		ctl, path, _ := strings.Cut(k, ":")
		mount := cg.V1[ctl]
		if ctl == "" {
			mount = cg.V2
		}
		if _, err := os.Stat(filepath.Join(mount, path)); mount != "" && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("cgroup %s outlived the run (%v)", filepath.Join(mount, path), err)
		}
	}
}

// TestServerMemoryMariaDB: a managed MariaDB run under --server-memory 384M (the least it
// starts under: docs/engines.md) records the limit and the fitted buffer pool in its env,
// runs its step, and leaves no cgroup behind.
func TestServerMemoryMariaDB(t *testing.T) {
	needServer(t, "mariadb")
	servertest.NeedCgroups(t, server.Limits{Memory: 384 * server.MiB})
	tmp := serverWorkdir(t)
	results := filepath.Join(tmp, "r.db")
	code, _, stderr := runCLI(t, nil, "run", "insertbench", "--engine", "mariadb", "--managed",
		"--server-memory", "384M", "--scale", "tiny", "--steps", "l.i0", "--quiet", "--results", results,
		"--workdir", tmp, "--profiles-dir", "../../profiles")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	run := reportJSON(t, results).Runs[0]
	prefix := fmt.Sprintf("dbperf-mariadb-%d-", os.Getpid())
	if m := run.Env["server_memory"]; !strings.HasPrefix(m, "384MiB, page cache included (cgroup v") || !strings.Contains(m, prefix) {
		t.Errorf("env server_memory = %q", m)
	}
	if f := run.Env["server_memory_fitted"]; !strings.Contains(f, "innodb_buffer_pool_size") {
		t.Errorf("env server_memory_fitted = %q", f)
	}
	if len(run.Steps) != 1 || run.Steps[0].Status != "ok" {
		t.Errorf("steps %+v", run.Steps)
	}
	cg, err := server.ReadCgroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, mount := range cg.V1 {
		for _, pattern := range []string{filepath.Join(mount, prefix+"*"), filepath.Join(mount, "*", prefix+"*"), filepath.Join(mount, "*", "*", prefix+"*")} {
			if left, _ := filepath.Glob(pattern); len(left) > 0 {
				t.Errorf("cgroups outlived the run: %v", left)
			}
		}
	}
}
