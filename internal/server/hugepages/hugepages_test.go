package hugepages

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShortfall(t *testing.T) {
	for _, c := range []struct {
		name              string
		total, free, rsvd int
		need, want        int
	}{
		{"none set aside", 0, 0, 0, 75, 75},
		{"enough free", 400, 400, 0, 75, 0},
		{"free but promised to a mapping", 100, 100, 60, 75, 35},
		{"in use and promised", 300, 80, 10, 75, 5},
		{"exactly enough", 75, 75, 0, 75, 0},
	} {
		s := State{Total: c.total, Free: c.free, Rsvd: c.rsvd, SizeKiB: 2048}
		if got := s.Shortfall(c.need); got != c.want {
			t.Errorf("%s: Shortfall(%d) = %d, want %d", c.name, c.need, got, c.want)
		}
	}
}

// fakeProc is a procfs tree with meminfo's huge-page lines and a writable nr_hugepages.
func fakeProc(t *testing.T, total, free, rsvd int) Options {
	t.Helper()
	dir := t.TempDir()
	meminfo := fmt.Sprintf("MemTotal:       24000000 kB\nHugePages_Total:    %d\nHugePages_Free:     %d\nHugePages_Rsvd:     %d\nHugePages_Surp:        0\nHugepagesize:       2048 kB\n",
		total, free, rsvd)
	if err := os.WriteFile(filepath.Join(dir, "meminfo"), []byte(meminfo), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "sys", "vm"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sys", "vm", "nr_hugepages"), []byte(fmt.Sprintf("%d\n", total)), 0o644); err != nil {
		t.Fatal(err)
	}
	return Options{ProcDir: dir, LockFile: filepath.Join(dir, "lock")}
}

func nrHugepages(t *testing.T, o Options) string {
	t.Helper()
	b, err := os.ReadFile(o.sysctl())
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// Enough free pages: nothing is written and nothing given back.
func TestReserveEnough(t *testing.T) {
	o := fakeProc(t, 400, 390, 0)
	r, err := Reserve(context.Background(), o, 75)
	if err != nil {
		t.Fatal(err)
	}
	r.Mapped()
	if r.Added() != 0 || r.Size != 2048 {
		t.Errorf("added %d, size %d KiB: want 0 and 2048", r.Added(), r.Size)
	}
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	if got := nrHugepages(t, o); got != "400" {
		t.Errorf("nr_hugepages = %s, want 400 untouched", got)
	}
}

// A kernel that does not grow its pool (here meminfo never changes, as when memory is
// fragmented): the pool is put back and the error says what to do.
func TestReserveKernelShort(t *testing.T) {
	o := fakeProc(t, 10, 10, 0)
	_, err := Reserve(context.Background(), o, 75)
	if err == nil || !strings.Contains(err.Error(), "found only 0 of 65") || !strings.Contains(err.Error(), "at boot") {
		t.Fatalf("err = %v, want the kernel's shortfall and the fix", err)
	}
	if got := nrHugepages(t, o); got != "10" {
		t.Errorf("nr_hugepages = %s, want 10 put back", got)
	}
	// The lock was let go: a second reservation does not wait.
	if r, err := Reserve(context.Background(), o, 5); err != nil {
		t.Fatal(err)
	} else {
		r.Mapped()
	}
}

// A pool that cannot be written (not root): one line with the sysctl to run.
func TestReserveNotWritable(t *testing.T) {
	o := fakeProc(t, 0, 0, 0)
	if err := os.Remove(o.sysctl()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(o.sysctl(), 0o755); err != nil { // writing a directory fails, even as root
		t.Fatal(err)
	}
	_, err := Reserve(context.Background(), o, 75)
	if err == nil || !strings.Contains(err.Error(), "sysctl -w vm.nr_hugepages=75") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v, want one line naming the sysctl", err)
	}
}

// A reservation waits for the one before it until that server has mapped its pages.
func TestReserveTakesTurns(t *testing.T) {
	o := fakeProc(t, 400, 400, 0)
	first, err := Reserve(context.Background(), o, 75)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Reserve(ctx, o, 75); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("second reservation while the first holds the lock: err = %v, want it to wait (cancelled)", err)
	}
	first.Mapped()
	second, err := Reserve(context.Background(), o, 75)
	if err != nil {
		t.Fatal(err)
	}
	second.Mapped()
}
