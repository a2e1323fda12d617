package servertest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dbperf/dbperf/internal/server"
)

// NeedCgroups skips the test when dbperf cannot make a cgroup enforcing l here (no
// controller, not root), and returns the machine's cgroups.
func NeedCgroups(t *testing.T, l server.Limits) *server.Cgroups {
	t.Helper()
	cg, err := server.ReadCgroups()
	if err == nil {
		err = cg.Check(l)
	}
	if err != nil {
		t.Skipf("no cgroups here: %v", err)
	}
	return cg
}

// CheckInCgroup checks that every process of the running server in (its main process
// and all its descendants) is in each of its cgroups, and that the memory limit is the
// one asked for.
func CheckInCgroup(t *testing.T, in *server.Instance) {
	t.Helper()
	if in.Cgroup == nil || len(in.Cgroup.Dirs) == 0 {
		t.Fatalf("%s runs in no cgroup", in.Engine)
	}
	tree := ProcessTree(in.PID())
	if len(tree) == 0 {
		t.Fatalf("%s: no process %d", in.Engine, in.PID())
	}
	for _, d := range in.Cgroup.Dirs {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			t.Fatal(err)
		}
		var procs []int
		for _, f := range strings.Fields(string(b)) {
			n, _ := strconv.Atoi(f)
			procs = append(procs, n)
		}
		for _, p := range tree {
			if !slices.Contains(procs, p) {
				t.Errorf("%s process %d is not in cgroup %s (%v)", in.Engine, p, d, procs)
			}
		}
	}
	if m := in.Limits.Memory; m > 0 && in.Cgroup.Memory != m/4096*4096 {
		t.Errorf("cgroup memory limit %d, want %d", in.Cgroup.Memory, m)
	}
}

// CheckCgroupRemoved checks that the cgroup directories dirs are gone.
func CheckCgroupRemoved(t *testing.T, dirs []string) {
	t.Helper()
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("cgroup %s outlived its server (%v)", d, err)
		}
	}
}

// ProcessTree is pid and its descendants (none when pid is gone).
func ProcessTree(pid int) []int {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[0] != "Z" && f[0] != "X" {
			parent[p], _ = strconv.Atoi(f[1])
		}
	}
	if _, ok := parent[pid]; !ok {
		return nil
	}
	out := []int{pid}
	for changed := true; changed; {
		changed = false
		for p, pp := range parent {
			if slices.Contains(out, pp) && !slices.Contains(out, p) {
				out, changed = append(out, p), true
			}
		}
	}
	return out
}

// ReadOnlyCgroupTree is a cgroup v1 memory hierarchy (ROOT/memory) under a directory
// dbperf may not write: as root a tmpfs remounted read-only (root writes any directory
// whatever its mode), else a directory without write permission. Its Cgroups place
// dbperf in the hierarchy's root.
func ReadOnlyCgroupTree(t *testing.T) *server.Cgroups {
	t.Helper()
	root := t.TempDir()
	write := func() {
		mem := filepath.Join(root, "memory")
		if err := os.MkdirAll(mem, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]string{"cgroup.procs": "", "memory.limit_in_bytes": "9223372036854771712"} {
			if err := os.WriteFile(filepath.Join(mem, name), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cg := &server.Cgroups{V1: map[string]string{"memory": filepath.Join(root, "memory")}, V1Self: map[string]string{"memory": "/"}}
	if os.Geteuid() != 0 {
		write()
		mem := filepath.Join(root, "memory")
		if err := os.Chmod(mem, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(mem, 0o755) })
		return cg
	}
	if err := syscall.Mount("tmpfs", root, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(root, syscall.MNT_DETACH) })
	write()
	if err := syscall.Mount("", root, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("remount the tmpfs read-only: %v", err)
	}
	return cg
}
