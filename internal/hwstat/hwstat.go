// Package hwstat samples the machine from /proc: today dbperf's own CPU time and the
// environment stored with every run; system CPU/IO and per-process samplers join it with
// the HW-efficiency metrics (TODO(#4)). The runner samples it on interval ticks.
package hwstat

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// Sampler reads /proc. The zero value is not usable; use New.
type Sampler struct {
	fs   procfs.FS
	self procfs.Proc
}

// New opens /proc.
func New() (*Sampler, error) {
	fs, err := procfs.NewFS(procfs.DefaultMountPoint)
	if err != nil {
		return nil, fmt.Errorf("hwstat: open /proc: %w", err)
	}
	self, err := fs.Self()
	if err != nil {
		return nil, fmt.Errorf("hwstat: /proc/self: %w", err)
	}
	return &Sampler{fs: fs, self: self}, nil
}

// SelfCPU returns dbperf's own CPU time so far (user + system, all threads) in seconds,
// from /proc/self/stat.
func (s *Sampler) SelfCPU() (float64, error) {
	st, err := s.self.Stat()
	if err != nil {
		return 0, fmt.Errorf("hwstat: /proc/self/stat: %w", err)
	}
	return st.CPUTime(), nil
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
		if m := mountOf(dir); m != nil {
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
func mountOf(dir string) *procfs.MountInfo {
	p, err := filepath.EvalSymlinks(dir)
	if err != nil {
		p = dir
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	mounts, err := procfs.GetMounts()
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
