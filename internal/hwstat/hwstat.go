// Package hwstat samples the machine from /proc and /sys: the environment stored with
// every run, and the system CPU / context-switch / block-device counters, every process's
// CPU, and per-process (server and backends) CPU, RSS and IO behind the HW-efficiency
// metrics (spec/reference-benchmarks.md §1.12, §2.2); and which process listens on a
// socket, to find a server dbperf did not start.
//
// Where it sits: the runner calls (*Sampler).Sample on every interval tick and turns
// consecutive samples into per-interval figures with Delta. The first sample of a step is
// a baseline only — its counters are since boot (or since process start) and are never
// reported as an interval (unlike the reference's vmstat/iostat first line, §5.10).
//
// The samplers read the system CPU, every process's CPU, context switches, the data
// directory's block devices (resolved through partitions and device-mapper), and a
// process tree's and its threads' CPU, RSS and IO. They read consistently while children
// are reaped: a process reaped mid-read makes the read start again, and a sample still
// inconsistent after three reads has no machine-wide process total. Delta turns two
// samples into an interval; TasksDelta is the machine's process CPU over a span, with
// TasksSlackSec, the most its 10 ms per-process counters can overstate it; GroupDelta is
// a process group over an interval, its exited processes counted through their parents'
// waited-for-children counters. Sampler.ListenerPID finds the process listening on a
// socket, and Sampler.ServerRoot the server process of a session's backend pid or thread
// id.
package hwstat

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// Sampler reads /proc and /sys. It holds no mutable state, so one Sampler may be used from
// several goroutines. The zero value is not usable; use New or NewAt.
type Sampler struct {
	fs       procfs.FS
	procRoot string
	sysRoot  string
	now      func() time.Time
	// scanned, when set (by tests), is called after scan read a process's stat, before
	// it reads the next one's.
	scanned func(pid int)
}

// New opens the real /proc and /sys and checks that /proc/self is readable.
func New() (*Sampler, error) {
	s, err := NewAt(procfs.DefaultMountPoint, "/sys")
	if err != nil {
		return nil, err
	}
	if _, err := s.fs.Self(); err != nil {
		return nil, fmt.Errorf("hwstat: /proc/self: %w", err)
	}
	return s, nil
}

// NewAt opens a sampler reading procRoot instead of /proc and sysRoot instead of /sys
// (tests point them at fixture trees).
func NewAt(procRoot, sysRoot string) (*Sampler, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, fmt.Errorf("hwstat: open %s: %w", procRoot, err)
	}
	return &Sampler{fs: fs, procRoot: procRoot, sysRoot: sysRoot, now: time.Now}, nil
}

// Environment describes the machine and the filesystem holding dir. Values that cannot be
// read are left out rather than guessed.
func (s *Sampler) Environment(dir string) map[string]string {
	env := map[string]string{
		"cores":      strconv.Itoa(runtime.NumCPU()),
		"go_version": runtime.Version(),
		"os":         runtime.GOOS + "/" + runtime.GOARCH,
	}
	if infos, err := s.fs.CPUInfo(); err == nil && len(infos) > 0 {
		env["cpu_model"] = infos[0].ModelName
		env["cpus_online"] = strconv.Itoa(len(infos))
	}
	if mi, err := s.fs.Meminfo(); err == nil && mi.MemTotalBytes != nil {
		env["ram_bytes"] = strconv.FormatUint(*mi.MemTotalBytes, 10)
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		env["kernel"] = unix.ByteSliceToString(u.Release[:])
		env["hostname"] = unix.ByteSliceToString(u.Nodename[:])
	}
	if dir != "" {
		if m := s.mountOf(dir); m != nil {
			env["filesystem"] = m.FSType
			env["filesystem_source"] = m.Source
			env["filesystem_mount"] = m.MountPoint
		}
		env["data_dir"] = dir
	}
	return env
}

// mountOf finds the mount holding dir: the mount point that is the longest prefix of its
// real path (the last one wins for stacked mounts, as the kernel resolves them).
func (s *Sampler) mountOf(dir string) *procfs.MountInfo {
	p, err := filepath.EvalSymlinks(dir)
	if err != nil {
		p = dir
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	mounts, err := s.fs.GetMounts()
	if err != nil {
		return nil
	}
	var best *procfs.MountInfo
	for _, m := range mounts {
		mp := m.MountPoint
		if p == mp || mp == "/" || strings.HasPrefix(p, strings.TrimSuffix(mp, "/")+"/") {
			if best == nil || len(mp) >= len(best.MountPoint) {
				best = m
			}
		}
	}
	return best
}

// Alive says whether process pid exists and has not exited (a zombie, not yet reaped
// by its parent, has).
func (s *Sampler) Alive(pid int) bool {
	p, err := s.fs.Proc(pid)
	if err != nil {
		return false
	}
	st, err := p.Stat()
	if err != nil {
		return false
	}
	return st.State != "Z" && st.State != "X"
}
