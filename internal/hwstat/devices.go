package hwstat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Devices resolves the whole-disk block devices holding dataDir, by name as they appear in
// /proc/diskstats. The mount holding dataDir (longest mount-point prefix in
// /proc/self/mountinfo) gives a major:minor; via /sys/dev/block/MAJ:MIN a partition maps to
// its parent disk and a device-mapper device (dm-N) to the disks under its slaves/
// (recursively), so that IO is never matched by substring (the reference's `grep <dev>`
// bug, spec §5.10). The result is sorted and deduplicated; the runner stores it in the
// run's env. A filesystem without a block device (tmpfs, overlay, 0:N) is an error.
func (s *Sampler) Devices(dataDir string) ([]string, error) {
	m := s.mountOf(dataDir)
	if m == nil {
		return nil, fmt.Errorf("hwstat: no mount holds %s", dataDir)
	}
	if m.MajorMinorVer == "" || strings.HasPrefix(m.MajorMinorVer, "0:") {
		return nil, fmt.Errorf("hwstat: %s is on %s (%s, dev %s), not a block device",
			dataDir, m.MountPoint, m.FSType, m.MajorMinorVer)
	}
	dir := filepath.Join(s.sysRoot, "dev", "block", m.MajorMinorVer)
	seen := map[string]bool{}
	if err := s.resolveBlock(dir, seen, 0); err != nil {
		return nil, fmt.Errorf("hwstat: block device of %s (mount %s, dev %s): %w",
			dataDir, m.MountPoint, m.MajorMinorVer, err)
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// resolveBlock adds to disks the whole disks behind the sysfs block-device directory dir
// (a symlink such as /sys/dev/block/252:1 or /sys/class/block/vda1).
func (s *Sampler) resolveBlock(dir string, disks map[string]bool, depth int) error {
	if depth > 8 {
		return fmt.Errorf("device stack deeper than 8 at %s", dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", dir, err)
	}
	// A partition: .../block/vda/vda1 has a "partition" file; its parent dir is the disk.
	if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
		disks[filepath.Base(filepath.Dir(real))] = true
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("stat %s/partition: %w", real, err)
	}
	// A stacked device (device-mapper, md): sum the devices under slaves/.
	slaves, err := os.ReadDir(filepath.Join(real, "slaves"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s/slaves: %w", real, err)
	}
	if len(slaves) == 0 {
		disks[filepath.Base(real)] = true
		return nil
	}
	for _, sl := range slaves {
		if err := s.resolveBlock(filepath.Join(s.sysRoot, "class", "block", sl.Name()), disks, depth+1); err != nil {
			return err
		}
	}
	return nil
}
