package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// This machine's kind of mountinfo: cgroup v1 controllers and an empty v2 beside them.
const hybridMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw
`

func TestParseCgroups(t *testing.T) {
	for _, tc := range []struct {
		name, mountinfo, self string
		want                  Cgroups
	}{
		{
			"hybrid", hybridMountinfo,
			"9:name=systemd:/\n4:memory:/process_api/abc\n3:cpuset:/\n1:cpu:/\n0::/\n",
			Cgroups{V2: "/sys/fs/cgroup/unified", V2Self: "/",
				V1:     map[string]string{"memory": "/sys/fs/cgroup/memory", "cpuset": "/sys/fs/cgroup/cpuset"},
				V1Self: map[string]string{"memory": "/process_api/abc", "cpuset": "/"}},
		},
		{
			"v2 only, systemd", "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n",
			"0::/user.slice/user-0.slice/session-3.scope\n",
			Cgroups{V2: "/sys/fs/cgroup", V2Self: "/user.slice/user-0.slice/session-3.scope", V1: map[string]string{}, V1Self: map[string]string{}},
		},
		{
			"container without a cgroup namespace: the mount's root is the container's cgroup",
			"700 690 0:26 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n",
			"0::/docker/abc/init\n",
			Cgroups{V2: "/sys/fs/cgroup", V2Self: "/init", V1: map[string]string{}, V1Self: map[string]string{}},
		},
		{
			"v1 controllers together, an escaped mount point, a cgroup outside the mount",
			`40 31 0:40 /x /tmp/my\040cg rw - cgroup cgroup rw,cpuset,memory` + "\n",
			"5:cpuset,memory:/elsewhere\n",
			Cgroups{V1: map[string]string{"memory": "/tmp/my cg", "cpuset": "/tmp/my cg"},
				V1Self: map[string]string{"memory": "/", "cpuset": "/"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ParseCgroups(tc.mountinfo, tc.self)
			if fmt.Sprint(*got) != fmt.Sprint(tc.want) {
				t.Errorf("ParseCgroups =\n%+v\nwant\n%+v", *got, tc.want)
			}
		})
	}
}

// fakeTree makes files under root: "path=content"; a path ending in / is a directory.
func fakeTree(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p, content, _ := strings.Cut(f, "=")
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCgroupParentAndCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		cg    func(root string) *Cgroups
		l     Limits
		dir   string // the memory parent's dir under root; "" with an error
		err   string
	}{
		{
			name:  "v1: dbperf's own cgroup",
			files: []string{"memory/a/b/cgroup.procs=1\n"},
			cg: func(r string) *Cgroups {
				return &Cgroups{V1: map[string]string{"memory": r + "/memory"}, V1Self: map[string]string{"memory": "/a/b"}}
			},
			l: Limits{Memory: 256 * MiB}, dir: "memory/a/b",
		},
		{
			name: "v2: the nearest ancestor without processes",
			files: []string{"u/cgroup.controllers=cpuset memory pids", "u/cgroup.subtree_control=memory",
				"u/s/cgroup.procs=", "u/s/cgroup.controllers=memory", "u/s/cgroup.subtree_control=",
				"u/s/scope/cgroup.procs=42\n43\n", "u/s/scope/cgroup.controllers=memory"},
			cg: func(r string) *Cgroups { return &Cgroups{V2: r + "/u", V2Self: "/s/scope"} },
			l:  Limits{Memory: 256 * MiB}, dir: "u/s",
		},
		{
			name:  "v2 in its root cgroup",
			files: []string{"u/cgroup.controllers=memory", "u/cgroup.subtree_control=", "u/cgroup.procs=1\n"},
			cg:    func(r string) *Cgroups { return &Cgroups{V2: r + "/u", V2Self: "/"} },
			l:     Limits{Memory: 256 * MiB}, dir: "u",
		},
		{
			name:  "hybrid: v2 without the memory controller, v1's",
			files: []string{"u/cgroup.controllers=hugetlb", "memory/cgroup.procs=1\n"},
			cg: func(r string) *Cgroups {
				return &Cgroups{V2: r + "/u", V2Self: "/", V1: map[string]string{"memory": r + "/memory"}, V1Self: map[string]string{"memory": "/"}}
			},
			l: Limits{Memory: 256 * MiB}, dir: "memory",
		},
		{
			name:  "no memory controller",
			files: []string{"u/cgroup.controllers=cpu"},
			cg:    func(r string) *Cgroups { return &Cgroups{V2: r + "/u", V2Self: "/"} },
			l:     Limits{Memory: 256 * MiB},
			err:   "cannot limit the server's memory: no cgroup memory controller is mounted (the cgroup v2 at",
		},
		{
			name: "nothing mounted",
			cg:   func(r string) *Cgroups { return &Cgroups{} },
			l:    Limits{CPUs: 1},
			err:  "cannot limit the server's CPUs: no cgroup cpuset controller is mounted (no cgroup v2 is mounted, and no cgroup v1 cpuset hierarchy is in /proc/self/mountinfo): mount it",
		},
		{
			name: "v2: the controller not enabled where the cgroup would go",
			files: []string{"u/cgroup.controllers=memory", "u/cgroup.subtree_control=",
				"u/s/cgroup.procs=", "u/s/cgroup.controllers=", "u/s/x/cgroup.procs=7"},
			cg:  func(r string) *Cgroups { return &Cgroups{V2: r + "/u", V2Self: "/s/x"} },
			l:   Limits{Memory: 256 * MiB},
			err: "the cgroup v2 memory controller is not enabled for ",
		},
		{
			name:  "more CPUs than the parent allows",
			files: []string{"cpuset/cpuset.effective_cpus=0-1"},
			cg: func(r string) *Cgroups {
				return &Cgroups{V1: map[string]string{"cpuset": r + "/cpuset"}, V1Self: map[string]string{"cpuset": "/"}}
			},
			l:   Limits{CPUs: 3},
			err: "cannot pin the server to 3 CPUs: dbperf may use 2 here (0-1)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			fakeTree(t, root, tc.files...)
			cg := tc.cg(root)
			err := cg.Check(tc.l)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("Check = %v, want one line with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p, err := cg.parent("memory")
			if err != nil || p.dir != filepath.Join(root, tc.dir) {
				t.Errorf("parent = %q, %v; want %q", p.dir, err, filepath.Join(root, tc.dir))
			}
		})
	}
}

func TestPickCPUs(t *testing.T) {
	root := t.TempDir()
	fakeTree(t, root, "cpuset/cpuset.effective_cpus=0-3,8", "cpuset/cpuset.cpus=0-15")
	p := cgroupParent{controller: "cpuset", dir: filepath.Join(root, "cpuset")}
	for n, want := range map[int]string{1: "8", 2: "3,8", 5: "0-3,8"} {
		got, err := pickCPUs(p, n)
		if err != nil || FormatCPUList(got) != want {
			t.Errorf("pickCPUs(%d) = %v, %v; want %s (the last ones of the effective CPUs)", n, got, err, want)
		}
	}
}

// TestCgroupNotWritable: a cgroup tree dbperf may not write is refused before anything
// starts, in one line naming why and the fix (as root: a read-only mount; otherwise the
// permissions).
func TestCgroupNotWritable(t *testing.T) {
	root := readOnlyCgroupTree(t)
	cg := &Cgroups{V1: map[string]string{"memory": root + "/memory"}, V1Self: map[string]string{"memory": "/"}}
	err := cg.Check(Limits{Memory: 256 * MiB})
	want := "read-only"
	if os.Geteuid() != 0 {
		want = "dbperf does not run as root"
	}
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Check = %v, want one line saying %q", err, want)
	}
	if _, err := cg.Create("dbperf-test-1-1", Limits{Memory: 256 * MiB}); err == nil {
		t.Fatal("Create made a cgroup in a tree it may not write")
	}
	// NewInstance refuses before it makes the instance dir.
	work := t.TempDir()
	_, err = NewInstance(fakeEngine{name: "fake"}, Options{WorkDir: work, Limits: Limits{Memory: 256 * MiB}, Cgroups: cg})
	if err == nil || !strings.HasPrefix(err.Error(), "fake: cannot limit the server's memory") {
		t.Fatalf("NewInstance = %v", err)
	}
	if ents, _ := os.ReadDir(work); len(ents) != 0 {
		t.Errorf("NewInstance left %v in the work dir", ents)
	}
}

// readOnlyCgroupTree is a v1-style memory hierarchy under a directory dbperf may not
// write: a tmpfs remounted read-only as root (root writes any directory whatever its
// mode), else a directory without write permission.
func readOnlyCgroupTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if os.Geteuid() != 0 {
		fakeTree(t, root, "memory/cgroup.procs=", "memory/memory.limit_in_bytes=9223372036854771712")
		if err := os.Chmod(filepath.Join(root, "memory"), 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(filepath.Join(root, "memory"), 0o755) })
		return root
	}
	if err := syscall.Mount("tmpfs", root, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(root, syscall.MNT_DETACH) })
	fakeTree(t, root, "memory/cgroup.procs=", "memory/memory.limit_in_bytes=9223372036854771712")
	if err := syscall.Mount("", root, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("remount the tmpfs read-only: %v", err)
	}
	return root
}

func TestCgroupWriteError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		euid int
		want string
	}{
		{syscall.EACCES, 1000, "dbperf does not run as root (permission denied): run dbperf as root (sudo)"},
		{syscall.EROFS, 0, "its file system is mounted read-only (read-only file system): remount it read-write"},
		{fs.ErrNotExist, 0, "it does not exist"},
		{syscall.EPERM, 0, "operation not permitted"},
	} {
		got := cgroupWriteError("memory", "/sys/fs/cgroup/memory/x", tc.err, tc.euid).Error()
		if !strings.HasPrefix(got, "cannot limit the server's memory: dbperf cannot create a cgroup in /sys/fs/cgroup/memory/x: ") || !strings.Contains(got, tc.want) {
			t.Errorf("%v as %d: %q, want %q", tc.err, tc.euid, got, tc.want)
		}
	}
}

// realCgroups are this machine's cgroups when dbperf may make one enforcing l (else the
// test is skipped).
func realCgroups(t *testing.T, l Limits) *Cgroups {
	t.Helper()
	cg, err := ReadCgroups()
	if err == nil {
		err = cg.Check(l)
	}
	if err != nil {
		t.Skipf("no cgroups here: %v", err)
	}
	return cg
}

// TestCgroupLaunch launches a process that forks under limits through the cgroup gate:
// it and its child are in the server's cgroup with the limit set, the command runs as
// given with no gate file left open, and Stop removes the cgroup. An empty cgroup a dead
// dbperf left is removed by the next one made beside it.
func TestCgroupLaunch(t *testing.T) {
	l := Limits{Memory: 200 * MiB, CPUs: 1}
	cg := realCgroups(t, l)
	mem, _ := cg.parent("memory")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(mem.dir, fmt.Sprintf("dbperf-fake-%d-1", dead.Process.Pid))
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Rmdir(stale) })

	in, err := NewInstance(fakeEngine{name: "fake"}, Options{WorkDir: t.TempDir(), Limits: l, Cgroups: cg})
	if err != nil {
		t.Fatal(err)
	}
	in.LogPath = filepath.Join(in.Dir, "log")
	if err := in.Launch(exec.Command("/bin/sh", "-c", "sleep 30 & ls -l /proc/self/fd/ > "+in.Dir+"/fds; wait")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	if in.Cgroup == nil || len(in.Cgroup.Dirs) != 2 {
		t.Fatalf("cgroup %+v: want one per v1 hierarchy (memory, cpuset)", in.Cgroup)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the stale cgroup %s of a dead dbperf is still there: %v", stale, err)
	}
	var procs []int
	for deadline := time.Now().Add(5 * time.Second); len(procs) < 2 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		procs = in.Cgroup.Procs()
	}
	if !slices.Contains(procs, in.PID()) || len(procs) < 2 {
		t.Fatalf("cgroup.procs %v: want the server %d and its child", procs, in.PID())
	}
	if cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", in.PID())); !strings.HasPrefix(string(cmd), "/bin/sh\x00-c\x00sleep 30") {
		t.Errorf("the server runs %q, not its own command", cmd)
	}
	if v := readTrim(filepath.Join(in.Cgroup.Dirs[0], "memory.limit_in_bytes")); v != strconv.FormatInt(200*MiB, 10) {
		t.Errorf("memory.limit_in_bytes = %s", v)
	}
	if !strings.HasPrefix(in.Cgroup.MemoryNote(), "200MiB, page cache included (cgroup v") || !strings.HasPrefix(in.Cgroup.CPUsNote(), "1 CPU: ") {
		t.Errorf("notes %q, %q", in.Cgroup.MemoryNote(), in.Cgroup.CPUsNote())
	}
	for deadline := time.Now().Add(5 * time.Second); readTrim(filepath.Join(in.Dir, "fds")) == "" && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if fds := readTrim(filepath.Join(in.Dir, "fds")); strings.Contains(fds, " 3 -> pipe:") {
		t.Errorf("the server inherited the gate's pipe:\n%s", fds)
	}
	dirs := in.Cgroup.Dirs
	if err := in.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("cgroup %s outlived the server: %v", d, err)
		}
	}
}

func (fakeEngine) StopSignal() (syscall.Signal, time.Duration) { return syscall.SIGKILL, time.Second }
