package server

// The cgroup of a managed server with Limits: where the machine's cgroup hierarchies are
// (Cgroups: v2 where it offers the controller, else v1's), whether dbperf can make one
// (Check, before anything starts), making it (Create), putting the server in it (Join,
// from Instance.Launch before the server runs) and removing it (Remove, from Stop).
//
// Where: under the cgroup dbperf itself runs in, so whatever limit dbperf's session is
// under (a systemd slice, a container, a CI job) holds for the server too, and the parent
// is left as it was once the server's cgroup is removed. On v1 that is dbperf's own cgroup
// of the controller's hierarchy; on v2, whose controllers reach only cgroups without
// processes of their own ("no internal processes"), its nearest ancestor without
// processes (the hierarchy's root at the latest). Each server's cgroup is named
// dbperf-<its instance dir's name>, which holds dbperf's pid: one a killed dbperf left
// behind (empty: the kernel killed its server too, Pdeathsig) is removed by the next
// Create under the same parent.
//
// Memory: v1's memory.limit_in_bytes, v2's memory.max. Both charge the page cache of the
// files the server's processes read and write to its cgroup and reclaim it at the limit,
// so a database larger than the limit is read from the disk whatever the machine's RAM.
// Swap, where there is any, is not a way around it: v1's memory.memsw.limit_in_bytes is
// set to the same limit, v2's memory.swap.max to 0. CPUs: cpuset.cpus (v1 also needs
// cpuset.mems, copied from the parent).

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Cgroups are the machine's cgroup hierarchies as this process sees them: where each is
// mounted and which cgroup the process is in. ReadCgroups reads them from /proc; tests
// build them over a temporary directory (ParseCgroups).
type Cgroups struct {
	// V2 is where the unified (v2) hierarchy is mounted, "" when it is not, and V2Self the
	// process's cgroup in it, relative to that mount ("/user.slice/…").
	V2, V2Self string
	// V1 maps a v1 controller ("memory", "cpuset") to where its hierarchy is mounted, and
	// V1Self to the process's cgroup in it.
	V1, V1Self map[string]string
}

// ReadCgroups reads the hierarchies from /proc/self/mountinfo and the process's cgroups
// from /proc/self/cgroup.
func ReadCgroups() (*Cgroups, error) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read the mounted cgroups: %w", err)
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read this process's cgroups: %w", err)
	}
	return ParseCgroups(string(mi), string(self)), nil
}

// ParseCgroups reads a mountinfo text (/proc/self/mountinfo: cgroup2 and cgroup mounts,
// the first of each hierarchy) and a cgroup text (/proc/self/cgroup).
func ParseCgroups(mountinfo, self string) *Cgroups {
	cg := &Cgroups{V1: map[string]string{}, V1Self: map[string]string{}}
	roots := map[string]string{} // controller ("" for v2) → the mount's root in its hierarchy
	for line := range strings.Lines(mountinfo) {
		left, right, ok := strings.Cut(strings.TrimSpace(line), " - ")
		lf, rf := strings.Fields(left), strings.Fields(right)
		if !ok || len(lf) < 5 || len(rf) < 1 {
			continue
		}
		root, mnt := unescapeMount(lf[3]), unescapeMount(lf[4])
		switch rf[0] {
		case "cgroup2":
			if cg.V2 == "" {
				cg.V2, roots[""] = mnt, root
			}
		case "cgroup":
			if len(rf) < 3 {
				continue
			}
			for _, opt := range strings.Split(rf[2], ",") {
				if _, seen := cg.V1[opt]; !seen && (opt == "memory" || opt == "cpuset") {
					cg.V1[opt], roots[opt] = mnt, root
				}
			}
		}
	}
	for line := range strings.Lines(self) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			cg.V2Self = relCgroup(parts[2], roots[""])
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if _, ok := cg.V1[c]; ok {
				cg.V1Self[c] = relCgroup(parts[2], roots[c])
			}
		}
	}
	return cg
}

// unescapeMount undoes mountinfo's octal escapes (\040 is a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// relCgroup is the cgroup path p (as /proc/self/cgroup names it) relative to a mount of
// its hierarchy whose root is root: "/" when the process's cgroup is not below it.
func relCgroup(p, root string) string {
	if root == "" || root == "/" {
		return p
	}
	if rest, ok := strings.CutPrefix(p, root); ok && (rest == "" || rest[0] == '/') {
		return "/" + strings.TrimPrefix(rest, "/")
	}
	return "/"
}

// controllers are the cgroup controllers the limits l need.
func (l Limits) controllers() []string {
	var out []string
	if l.Memory > 0 {
		out = append(out, "memory")
	}
	if l.CPUs > 0 {
		out = append(out, "cpuset")
	}
	return out
}

// cgroupParent is where a controller's server cgroups go.
type cgroupParent struct {
	controller string
	v2         bool
	mount      string
	dir        string // the parent cgroup's directory
}

// version names the hierarchy: "v1" or "v2".
func (p cgroupParent) version() string {
	if p.v2 {
		return "v2"
	}
	return "v1"
}

// parent finds where controller c's server cgroups go (see the top of this file), or
// says in one line why there is no such place and how to make one.
func (cg *Cgroups) parent(c string) (cgroupParent, error) {
	what := map[string]string{"memory": "memory", "cpuset": "CPUs"}[c]
	if cg.V2 != "" && hasWord(readTrim(filepath.Join(cg.V2, "cgroup.controllers")), c) {
		p := cgroupParent{controller: c, v2: true, mount: cg.V2}
		dir := filepath.Join(cg.V2, cg.V2Self)
		for dir != filepath.Clean(cg.V2) && readTrim(filepath.Join(dir, "cgroup.procs")) != "" {
			dir = filepath.Dir(dir)
		}
		if !strings.HasPrefix(dir, filepath.Clean(cg.V2)) {
			dir = filepath.Clean(cg.V2)
		}
		p.dir = dir
		if !hasWord(readTrim(filepath.Join(dir, "cgroup.controllers")), c) {
			return p, fmt.Errorf("cannot limit the server's %s: the cgroup v2 %s controller is not enabled for %s, where the server's cgroup would go: enable it (echo +%s > %s)",
				what, c, dir, c, filepath.Join(filepath.Dir(dir), "cgroup.subtree_control"))
		}
		return p, nil
	}
	if mnt := cg.V1[c]; mnt != "" {
		return cgroupParent{controller: c, mount: mnt, dir: filepath.Join(mnt, cg.V1Self[c])}, nil
	}
	v2 := "no cgroup v2 is mounted"
	if cg.V2 != "" {
		v2 = fmt.Sprintf("the cgroup v2 at %s does not offer it", cg.V2)
	}
	fix := map[string]string{
		"memory": "boot Linux with the memory controller (cgroup_enable=memory on its command line) or mount it: mount -t cgroup -o memory cgroup /sys/fs/cgroup/memory",
		"cpuset": "mount it: mount -t cgroup -o cpuset cgroup /sys/fs/cgroup/cpuset",
	}[c]
	return cgroupParent{}, fmt.Errorf("cannot limit the server's %s: no cgroup %s controller is mounted (%s, and no cgroup v1 %s hierarchy is in /proc/self/mountinfo): %s",
		what, c, v2, c, fix)
}

// Check says, in one line naming why and how to fix it, when the limits l cannot be
// enforced here: a controller not mounted (or not enabled on v2), a parent cgroup dbperf
// may not write (not root, a read-only mount), more CPUs than dbperf may use. It changes
// nothing.
func (cg *Cgroups) Check(l Limits) error {
	for _, c := range l.controllers() {
		p, err := cg.parent(c)
		if err != nil {
			return err
		}
		if err := writable(p.dir); err != nil {
			return cgroupWriteError(c, p.dir, err, os.Geteuid())
		}
		if p.v2 && !hasWord(readTrim(filepath.Join(p.dir, "cgroup.subtree_control")), c) {
			if err := writable(filepath.Join(p.dir, "cgroup.subtree_control")); err != nil {
				return cgroupWriteError(c, p.dir, err, os.Geteuid())
			}
		}
		if c == "cpuset" {
			if _, err := pickCPUs(p, l.CPUs); err != nil {
				return err
			}
		}
	}
	return nil
}

// writable says whether this process may create cgroups in dir (and write its files).
func writable(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return err
	}
	return unix.Faccessat(unix.AT_FDCWD, dir, unix.W_OK, unix.AT_EACCESS)
}

// cgroupWriteError is the one line saying why dbperf cannot make the server's cgroup
// under dir, and what to do.
func cgroupWriteError(controller, dir string, err error, euid int) error {
	what := map[string]string{"memory": "memory", "cpuset": "CPUs"}[controller]
	var why, fix string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why, fix = "it does not exist", "mount the "+controller+" controller's hierarchy where /proc/self/mountinfo says it is"
	case errors.Is(err, syscall.EROFS):
		why, fix = "its file system is mounted read-only", "remount it read-write (in a container: give it a writable cgroup, e.g. docker run --privileged or --cgroupns=private with a read-write /sys/fs/cgroup)"
	case euid != 0:
		why, fix = "dbperf does not run as root", "run dbperf as root (sudo), or make that cgroup your user's (chown -R USER "+dir+")"
	default:
		why, fix = err.Error(), "run dbperf where it may create cgroups (as root, outside a read-only container)"
	}
	return fmt.Errorf("cannot limit the server's %s: dbperf cannot create a cgroup in %s: %s (%v): %s", what, dir, why, err, fix)
}

// Cgroup is the cgroup (one per hierarchy on v1) a managed server runs in while it runs,
// with the limits set in it.
type Cgroup struct {
	// Name is the server's cgroup's name in every hierarchy: dbperf-<instance dir name>.
	Name string
	// Dirs are the cgroups made: one on v2, one per controller's hierarchy on v1.
	Dirs []string
	// Memory is the memory limit the kernel reads back (0: none), MemoryVersion its
	// hierarchy ("v1", "v2") and memDir its cgroup.
	Memory        int64
	MemoryVersion string
	memDir        string
	memsw         bool // v1: memory.memsw.limit_in_bytes set too; v2: memory.swap.max 0
	// CPUs are the CPUs the server may run on (nil: any), CPUsVersion their hierarchy.
	CPUs        []int
	CPUsVersion string
	cpuDir      string
}

// Create makes the cgroup named name that enforces l, under each controller's parent:
// nothing is in it yet (Join). On any failure what it made is removed.
func (cg *Cgroups) Create(name string, l Limits) (*Cgroup, error) {
	if err := cg.Check(l); err != nil {
		return nil, err
	}
	c := &Cgroup{Name: name}
	fail := func(err error) (*Cgroup, error) {
		_ = c.Remove()
		return nil, err
	}
	dirs := map[string]string{} // parent dir → the cgroup made under it (v2: one for both)
	for _, ctl := range l.controllers() {
		p, _ := cg.parent(ctl)
		dir, ok := dirs[p.dir]
		if !ok {
			removeStaleCgroups(p.dir)
			dir = filepath.Join(p.dir, name)
			if p.v2 {
				if err := enableController(p.dir, ctl); err != nil {
					return fail(err)
				}
			}
			if err := os.Mkdir(dir, 0o755); err != nil {
				return fail(fmt.Errorf("create cgroup %s: %w", dir, err))
			}
			c.Dirs = append(c.Dirs, dir)
			dirs[p.dir] = dir
		} else if p.v2 {
			if err := enableController(p.dir, ctl); err != nil {
				return fail(err)
			}
		}
		switch ctl {
		case "memory":
			if err := c.setMemory(p, dir, l.Memory); err != nil {
				return fail(err)
			}
		case "cpuset":
			if err := c.setCPUs(p, dir, l.CPUs); err != nil {
				return fail(err)
			}
		}
	}
	return c, nil
}

// enableController lets parent's children use controller c (v2: cgroup.subtree_control).
func enableController(parent, c string) error {
	sub := filepath.Join(parent, "cgroup.subtree_control")
	if hasWord(readTrim(sub), c) {
		return nil
	}
	if err := os.WriteFile(sub, []byte("+"+c), 0); err != nil {
		if errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("cannot enable the cgroup v2 %s controller for the children of %s: it holds processes of its own (cgroup v2 allows controllers only below cgroups without processes): run dbperf in a cgroup of its own, e.g. systemd-run --scope dbperf …", c, parent)
		}
		return fmt.Errorf("enable the cgroup v2 %s controller in %s: %w", c, sub, err)
	}
	return nil
}

// setMemory sets the memory limit of the cgroup dir, and keeps swap out of it.
func (c *Cgroup) setMemory(p cgroupParent, dir string, limit int64) error {
	c.MemoryVersion, c.memDir = p.version(), dir
	v := strconv.FormatInt(limit, 10)
	if p.v2 {
		if err := writeCgroupFile(dir, "memory.max", v); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(dir, "memory.swap.max")); err == nil {
			if err := writeCgroupFile(dir, "memory.swap.max", "0"); err != nil {
				return err
			}
			c.memsw = true
		}
	} else {
		if err := writeCgroupFile(dir, "memory.limit_in_bytes", v); err != nil {
			return err
		}
		// memory+swap at the same limit: no swap. The file is there only with swap
		// accounting (swapaccount=1); it must be at least memory.limit_in_bytes.
		if _, err := os.Stat(filepath.Join(dir, "memory.memsw.limit_in_bytes")); err == nil {
			if err := writeCgroupFile(dir, "memory.memsw.limit_in_bytes", v); err != nil {
				return err
			}
			c.memsw = true
		}
	}
	file := map[bool]string{true: "memory.max", false: "memory.limit_in_bytes"}[p.v2]
	got, err := strconv.ParseInt(readTrim(filepath.Join(dir, file)), 10, 64)
	if err != nil || got <= 0 || got > limit {
		return fmt.Errorf("cgroup %s: %s reads %q after writing %d", dir, file, readTrim(filepath.Join(dir, file)), limit)
	}
	c.Memory = got // the kernel rounds down to whole pages
	return nil
}

// setCPUs confines the cgroup dir to n of the CPUs its parent may use.
func (c *Cgroup) setCPUs(p cgroupParent, dir string, n int) error {
	cpus, err := pickCPUs(p, n)
	if err != nil {
		return err
	}
	c.CPUsVersion, c.cpuDir = p.version(), dir
	if !p.v2 {
		// A v1 cpuset takes no task before it has memory nodes.
		mems := firstNonEmpty(readTrim(filepath.Join(p.dir, "cpuset.effective_mems")), readTrim(filepath.Join(p.dir, "cpuset.mems")))
		if err := writeCgroupFile(dir, "cpuset.mems", mems); err != nil {
			return err
		}
	}
	if err := writeCgroupFile(dir, "cpuset.cpus", FormatCPUList(cpus)); err != nil {
		return err
	}
	c.CPUs = cpus
	return nil
}

// pickCPUs chooses n CPUs for the server: the last n of those its parent cgroup allows
// (v1 cpuset.effective_cpus, v2 cpuset.cpus.effective, else this process's affinity),
// leaving the first ones, where the kernel serves most interrupts, to the rest.
func pickCPUs(p cgroupParent, n int) ([]int, error) {
	var avail []int
	for _, f := range []string{"cpuset.effective_cpus", "cpuset.cpus.effective", "cpuset.cpus"} {
		if s := readTrim(filepath.Join(p.dir, f)); s != "" {
			if l, err := ParseCPUList(s); err == nil && len(l) > 0 {
				avail = l
				break
			}
		}
	}
	if avail == nil {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			return nil, fmt.Errorf("which CPUs dbperf may use: %w", err)
		}
		for i := range 1024 {
			if set.IsSet(i) {
				avail = append(avail, i)
			}
		}
	}
	if n > len(avail) {
		return nil, fmt.Errorf("cannot pin the server to %d CPUs: dbperf may use %d here (%s)", n, len(avail), FormatCPUList(avail))
	}
	return avail[len(avail)-n:], nil
}

// Join puts the process pid (and the threads and children it will have) in the cgroup.
func (c *Cgroup) Join(pid int) error {
	for _, d := range c.Dirs {
		if err := writeCgroupFile(d, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// Procs are the processes in the cgroup (its first hierarchy's).
func (c *Cgroup) Procs() []int {
	if len(c.Dirs) == 0 {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(readTrim(filepath.Join(c.Dirs[0], "cgroup.procs"))) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// OOMKills is how many of the cgroup's processes the kernel's out-of-memory killer
// killed (v1 memory.oom_control, v2 memory.events: oom_kill).
func (c *Cgroup) OOMKills() int {
	if c.memDir == "" {
		return 0
	}
	for _, f := range []string{"memory.events", "memory.oom_control"} {
		sc := bufio.NewScanner(strings.NewReader(readTrim(filepath.Join(c.memDir, f))))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == "oom_kill" {
				n, _ := strconv.Atoi(strings.TrimSpace(v))
				return n
			}
		}
	}
	return 0
}

// MemoryNote describes the memory limit for the run's env: "256MiB, page cache
// included (cgroup v1 memory.limit_in_bytes, memory.memsw.limit_in_bytes the same: no
// swap; /sys/fs/cgroup/memory/…/dbperf-postgres-…)". "" without one.
func (c *Cgroup) MemoryNote() string {
	if c == nil || c.Memory == 0 {
		return ""
	}
	files := "memory.limit_in_bytes"
	if c.MemoryVersion == "v2" {
		files = "memory.max"
	}
	switch {
	case c.memsw && c.MemoryVersion == "v2":
		files += ", memory.swap.max 0: no swap"
	case c.memsw:
		files += ", memory.memsw.limit_in_bytes the same: no swap"
	}
	return fmt.Sprintf("%s, page cache included (cgroup %s %s; %s)", FormatSize(c.Memory), c.MemoryVersion, files, c.memDir)
}

// CPUsNote describes the CPUs for the run's env: "1 CPU: 1 (cgroup v1 cpuset.cpus; …)".
func (c *Cgroup) CPUsNote() string {
	if c == nil || len(c.CPUs) == 0 {
		return ""
	}
	n := fmt.Sprintf("%d CPUs", len(c.CPUs))
	if len(c.CPUs) == 1 {
		n = "1 CPU"
	}
	return fmt.Sprintf("%s: %s (cgroup %s cpuset.cpus; %s)", n, FormatCPUList(c.CPUs), c.CPUsVersion, c.cpuDir)
}

// cgroupRemoveWait bounds how long Remove waits for the server's last processes to leave
// the cgroup (killed children are reaped by init a moment after their parent).
const cgroupRemoveWait = 5 * time.Second

// Remove removes the cgroup once no process is in it (it waits up to 5 s for the
// server's last ones to exit). Removing one that is gone is not an error.
func (c *Cgroup) Remove() error {
	if c == nil {
		return nil
	}
	var errs []error
	deadline := time.Now().Add(cgroupRemoveWait)
	for i := len(c.Dirs) - 1; i >= 0; i-- {
		for {
			err := syscall.Rmdir(c.Dirs[i])
			if err == nil || errors.Is(err, syscall.ENOENT) {
				break
			}
			if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", c.Dirs[i], err))
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

// removeStaleCgroups removes the empty server cgroups under parent whose dbperf is gone:
// dbperf-<engine>-<pid>-<n> with no live process pid.
func removeStaleCgroups(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		f := strings.Split(e.Name(), "-")
		if !e.IsDir() || len(f) < 4 || f[0] != "dbperf" {
			continue
		}
		pid, err := strconv.Atoi(f[len(f)-2])
		if err != nil || pid == os.Getpid() || pidAlive(pid) {
			continue
		}
		d := filepath.Join(parent, e.Name())
		if readTrim(filepath.Join(d, "cgroup.procs")) == "" {
			_ = syscall.Rmdir(d)
		}
	}
}

// ParseCPUList reads a kernel CPU list ("0-3,6,8-9").
func ParseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("CPU list %q: %q is not a range of CPUs", s, part)
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// FormatCPUList writes CPUs as the kernel does: "0-3,6".
func FormatCPUList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		} else {
			parts = append(parts, strconv.Itoa(cpus[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// writeCgroupFile writes v to the cgroup file dir/name (which exists: the kernel made it).
func writeCgroupFile(dir, name, v string) error {
	p := filepath.Join(dir, name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("cgroup: %w", err)
	}
	if _, err := f.WriteString(v); err != nil {
		f.Close()
		return fmt.Errorf("cgroup: write %s to %s: %w", v, p, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cgroup: write %s to %s: %w", v, p, err)
	}
	return nil
}

// readTrim is a small file's text without surrounding space, "" when it cannot be read.
func readTrim(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// hasWord says whether the space-separated list s holds w.
func hasWord(s, w string) bool { return slices.Contains(strings.Fields(s), w) }

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
