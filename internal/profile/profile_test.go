package profile

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

//go:noinline
func spinForProfile(until time.Time) int {
	n := 0
	for time.Now().Before(until) {
		n++
	}
	return n
}

// TestRecordThisProcess records the machine for a second while this test spins, and
// finds this process's samples with whole stacks, the idle CPUs' and other processes'
// samples dropped.
func TestRecordThisProcess(t *testing.T) {
	ctx := context.Background()
	if err := Available(ctx); err != nil {
		t.Skipf("perf unavailable: %v", err)
	}
	rec, err := Start(ctx, Options{Dir: t.TempDir(), Hz: 99})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	spinForProfile(time.Now().Add(time.Second))
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	if rec.Event == "" {
		t.Error("no event named")
	}
	self := os.Getpid()
	tasks := NewTasks()
	ps, err := rec.Fold(ctx, func(pid, tid int, comm string) (string, bool) { return "self", pid == self }, tasks)
	if err != nil {
		t.Fatal(err)
	}
	p := ps.Roles["self"]
	// A second of spinning is 99 samples on an idle machine; with other tests' load the
	// spinner may get half a CPU or less (49 samples were seen).
	if p == nil || p.Samples < 30 {
		t.Fatalf("%v samples of this process in a second of spinning at 99 Hz, want ≥ 30", p)
	}
	// `go test` links its binary without a symbol table (go test -c keeps it), so the
	// Go frames read "[profile.test]"; the stacks are whole all the same (frame
	// pointers): the spin's clock reads under at least five frames of this binary.
	hits := 0
	for s, n := range p.Stacks {
		deep := strings.Count(s, "[profile.test]") >= 5 || strings.Contains(s, "spinForProfile")
		if deep {
			hits += n
		}
	}
	if hits < p.Samples/2 {
		t.Errorf("%d of %d samples with a whole stack: %v", hits, p.Samples, p.Stacks)
	}
	if _, ok := tasks.Parent(self); !ok {
		t.Error("no FORK event named this process's parent")
	}
	t.Logf("event %s, %d samples, %d dropped, %d of this process", rec.Event, ps.Samples, ps.Dropped, p.Samples)
}

func TestAvailableNotInstalled(t *testing.T) {
	err := available(context.Background(), "/nonexistent/perf")
	if err == nil || !strings.Contains(err.Error(), "apt-get install linux-perf") {
		t.Errorf("got %v", err)
	}
}

// TestRecordSizeLimited: a recording whose data file reaches Options.MaxSize stops there,
// says so (SizeLimited), and still folds; DWARF call graphs fill it fast (16 KiB per sample).
func TestRecordSizeLimited(t *testing.T) {
	ctx := context.Background()
	if err := Available(ctx); err != nil {
		t.Skipf("perf unavailable: %v", err)
	}
	rec, err := Start(ctx, Options{Dir: t.TempDir(), Hz: 999, CallGraph: "dwarf,16384", MaxSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	spinForProfile(time.Now().Add(2 * time.Second))
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	if !rec.SizeLimited() {
		t.Fatal("2 s at 999 Hz with 16 KiB per sample did not reach 8 MiB")
	}
	if _, err := rec.Fold(ctx, func(pid, tid int, comm string) (string, bool) { return "all", true }, nil); err != nil {
		t.Fatalf("a size-limited recording does not fold: %v", err)
	}
}
