package server

// A managed server's resource limits (dbperf run --server-memory, --server-cpus): their
// values, and the profile settings fitted under a memory limit. The cgroup that enforces
// them is cgroup.go's.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Limits are what a managed server may use of the machine, enforced by a cgroup of its
// own (Cgroups, Instance.Launch) for as long as it runs.
type Limits struct {
	// Memory is the most memory the server's processes may use together, the page cache
	// of the files they read and write included, in bytes; 0 = no limit.
	Memory int64
	// CPUs is how many CPUs the server may run on (a cpuset of the last CPUs dbperf may
	// use); 0 = any of them.
	CPUs int
}

// Set says whether any limit is set.
func (l Limits) Set() bool { return l.Memory > 0 || l.CPUs > 0 }

// MinMemory is the smallest memory limit any managed server is started with: PostgreSQL
// 15 with shared_buffers fitted to a quarter of it runs the whole tiny Insert Benchmark
// there. An engine that needs more says so (MemoryFloor).
const MinMemory = 128 << 20

// MemoryFloor is implemented by a server engine that needs more than MinMemory to start
// and run under a memory limit.
type MemoryFloor interface {
	// MinMemory is the smallest memory limit the engine runs with under o, and why.
	MinMemory(o Options) (int64, string)
}

// CheckMemory refuses, in one line, a memory limit o.Limits.Memory below what e needs
// (MinMemory, or its MemoryFloor): the server would be killed by the kernel's
// out-of-memory killer before or while it runs.
func CheckMemory(e Engine, o Options) error {
	m := o.Limits.Memory
	if m <= 0 {
		return nil
	}
	least, why := int64(MinMemory), "the least any managed server is started with"
	if f, ok := e.(MemoryFloor); ok {
		if n, w := f.MinMemory(o); n > least {
			least, why = n, w
		}
	}
	if m < least {
		return fmt.Errorf("a memory limit of %s is too small for %s, which needs at least %s (%s)", FormatSize(m), e.Name(), FormatSize(least), why)
	}
	return nil
}

// Binary size units, as PostgreSQL and MariaDB read them: "256M" and "256MB" are 256 MiB.
const (
	KiB = int64(1) << 10
	MiB = int64(1) << 20
	GiB = int64(1) << 30
	TiB = int64(1) << 40
)

var sizeRE = regexp.MustCompile(`^(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(?:[iI]?[bB])?$`)

// ParseSize reads a memory size: a number of bytes ("268435456") or a number with a unit
// K, M, G or T, each a power of 1024 as PostgreSQL and MariaDB read them, with or without
// B or iB ("256M", "256MB", "256MiB", "1.5G"). It refuses anything else, zero, and sizes
// of 1 EiB or more, each with a line saying what it accepts.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	m := sizeRE.FindStringSubmatch(t)
	if m == nil {
		return 0, fmt.Errorf("%q is not a size: use bytes or a number with K, M, G or T (powers of 1024), e.g. 256M or 1G", s)
	}
	unit := map[string]int64{"": 1, "k": KiB, "m": MiB, "g": GiB, "t": TiB}[strings.ToLower(m[2])]
	if unit == 1 && strings.Contains(m[1], ".") {
		return 0, fmt.Errorf("%q: a number of bytes is a whole number (or use a unit: K, M, G, T)", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || v*float64(unit) >= float64(int64(1)<<60) {
		return 0, fmt.Errorf("%q is too large a size", s)
	}
	n := int64(v * float64(unit))
	if n <= 0 {
		return 0, fmt.Errorf("%q: a size must be more than 0", s)
	}
	return n, nil
}

// FormatSize writes n bytes in the largest binary unit that holds it exactly ("256MiB",
// "1GiB", "1536MiB"), else in bytes.
func FormatSize(n int64) string {
	for _, u := range []struct {
		n    int64
		name string
	}{{TiB, "TiB"}, {GiB, "GiB"}, {MiB, "MiB"}, {KiB, "KiB"}} {
		if n != 0 && n%u.n == 0 {
			return fmt.Sprintf("%d%s", n/u.n, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// MemorySetting is a config setting that takes memory in proportion to what it is set
// to (a buffer pool, a block cache), for FitMemory.
type MemorySetting struct {
	// Name is the setting as the server's config file spells it ("shared_buffers").
	Name string
	// Bytes is its value in the profile, or the server's default when the profile does
	// not set it (Text is then ""); Text is the profile's value as written ("4GB").
	Bytes int64
	Text  string
	// Unbounded: the value sets no bound at all (MyRocks' rocksdb_db_write_buffer_size
	// 0), so it never fits.
	Unbounded bool
	// Share: the setting may take 1/Share of the memory limit.
	Share int64
}

// MemoryFit is a setting FitMemory changed: To is its new value in bytes.
type MemoryFit struct {
	MemorySetting
	To int64
}

// FitMemory returns the settings that do not fit under a memory limit of limit bytes —
// more than 1/Share of it, or unbounded — each with the value to use instead: 1/Share of
// the limit rounded down to a whole MiB (at least 1 MiB). Settings that fit are left as
// they are, so a profile sized for a small limit is not changed.
func FitMemory(limit int64, settings []MemorySetting) []MemoryFit {
	if limit <= 0 {
		return nil
	}
	var out []MemoryFit
	for _, s := range settings {
		share := max(s.Share, 1)
		to := max(limit/share/MiB*MiB, MiB)
		if s.Unbounded || s.Bytes > to {
			out = append(out, MemoryFit{MemorySetting: s, To: to})
		}
	}
	return out
}

// Note says what was changed and why, with the new value as the engine writes it (to):
// "shared_buffers = 64MB: the profile's 128MB is more than 1/4 of the 256MiB memory limit".
func (f MemoryFit) Note(limit int64, to string) string {
	var was string
	switch {
	case f.Unbounded && f.Text != "":
		was = fmt.Sprintf("the profile's %s sets no bound", f.Text)
	case f.Unbounded:
		was = "the server's default sets no bound"
	case f.Text != "":
		was = fmt.Sprintf("the profile's %s is more than 1/%d of", f.Text, max(f.Share, 1))
	default:
		was = fmt.Sprintf("the server's default %s is more than 1/%d of", FormatSize(f.Bytes), max(f.Share, 1))
	}
	if f.Unbounded {
		return fmt.Sprintf("%s = %s: %s, 1/%d of the %s memory limit", f.Name, to, was, max(f.Share, 1), FormatSize(limit))
	}
	return fmt.Sprintf("%s = %s: %s the %s memory limit", f.Name, to, was, FormatSize(limit))
}
