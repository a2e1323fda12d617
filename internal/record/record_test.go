package record

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/store"
)

// beginOnClosedStore begins a run in a new SQLite results store, then closes the store
// so that the run's next write fails at once (not transient).
func beginOnClosedStore(t *testing.T, ctx context.Context) (*Run, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	spill := filepath.Join(dir, "spill")
	rec, err := Begin(ctx, st, store.RunMeta{Workload: "w", Engine: "sqlite", Label: "spilled"}, NewOptions(time.Second, spill))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return rec, spill
}

// A store that fails at the run's end is a StoreFailedError naming the spill file, which
// holds the run: not interrupted, so dbperf exits 1.
func TestStoreFailedSpills(t *testing.T) {
	rec, spill := beginOnClosedStore(t, context.Background())
	err := rec.Finish()
	var sf *StoreFailedError
	if !errors.As(err, &sf) {
		t.Fatalf("Finish on a closed store: %v, want a *StoreFailedError", err)
	}
	if sf.Interrupted || sf.Spill == "" || filepath.Dir(sf.Spill) != spill {
		t.Errorf("interrupted %v, spill %q: want not interrupted, a file in %s", sf.Interrupted, sf.Spill, spill)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "results store failed at the end of the run, the run stops: ") ||
		!strings.Contains(msg, "everything it measured is in "+sf.Spill+": publish it with \"dbperf results copy --from "+sf.Spill+" --to STORE\"") {
		t.Errorf("message %q", msg)
	}
	st, err := store.OpenExisting(context.Background(), sf.Spill)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), store.RunFilter{Label: "spilled"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("the spill's runs: %v, %v", runs, err)
	}
}

// A store that fails after Ctrl-C (once the store's grace is over) is a StoreFailedError
// of an interrupted run: dbperf exits 130.
func TestStoreFailedInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	rec, _ := beginOnClosedStore(t, ctx)
	cancel()
	time.Sleep(storeGrace + 200*time.Millisecond)
	var sf *StoreFailedError
	if err := rec.Finish(); !errors.As(err, &sf) || !sf.Interrupted || sf.Spill == "" {
		t.Fatalf("Finish after Ctrl-C on a closed store: %v (%+v), want an interrupted *StoreFailedError with a spill", err, sf)
	}
}

// TestSpillFiles: a process's spill files are found by its pid, not another's whose pid
// shares its digits.
func TestSpillFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []string{"run-20261128-101010-12-1.db", "run-20261128-101011-12-2.db", "run-20261128-101010-123-1.db",
		"run-20261128-101010-112-12.db", "other-12-1.db"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := SpillFiles(dir, 12)
	want := []string{filepath.Join(dir, "run-20261128-101010-12-1.db"), filepath.Join(dir, "run-20261128-101011-12-2.db")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("SpillFiles(dir, 12) = %v, %v; want %v", got, err, want)
	}
}
