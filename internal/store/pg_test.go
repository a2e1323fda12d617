package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/server"
	pgserver "github.com/dbperf/dbperf/internal/server/postgres"
)

// pgAdmin reaches the throwaway PostgreSQL server TestMain starts ("" when there are no
// binaries: the PostgreSQL halves of the tests skip; `make test` installs them).
var pgAdmin string

// pgDBs numbers the databases the tests create on it.
var pgDBs atomic.Int64

func TestMain(m *testing.M) { os.Exit(runWithServer(m)) }

func runWithServer(m *testing.M) int {
	if bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres"); len(bins) == 0 {
		return m.Run()
	}
	work, err := os.MkdirTemp("", "dbperf-pg-store-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(work)
	_ = os.Chmod(work, 0o755) // reachable by the server's user when the tests run as root
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	in, err := pgserver.Start(ctx, server.Options{WorkDir: work})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start postgres:", err)
		return 1
	}
	defer in.Stop(context.Background())
	pgAdmin = in.DSN
	return m.Run()
}

// pgDSN creates a fresh database on the test server and returns a DSN to it.
func pgDSN(t testing.TB) string {
	t.Helper()
	if pgAdmin == "" {
		t.Skip("no PostgreSQL binaries installed (/usr/lib/postgresql/*/bin/postgres): apt-get install postgresql")
	}
	db, err := sql.Open("pgx", pgAdmin)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := fmt.Sprintf("dbperf_store_%d", pgDBs.Add(1))
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(pgAdmin)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// backends are the two kinds of results store, each opened fresh for a test.
func backends() []struct {
	name string
	open func(t *testing.T) *Store
} {
	return []struct {
		name string
		open func(t *testing.T) *Store
	}{
		{"sqlite", func(t *testing.T) *Store { s, _ := openTemp(t); return s }},
		{"postgres", func(t *testing.T) *Store {
			s, err := Open(context.Background(), pgDSN(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		}},
	}
}

// TestPostgresStore: the schema and every writer and reader on PostgreSQL — a run
// round-trips as on SQLite, a copy between the two kinds reads back the same, the
// version is kept, and a database that is somebody else's is refused.
func TestPostgresStore(t *testing.T) {
	ctx := context.Background()
	dsn := pgDSN(t)
	pg, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if u, err := url.Parse(pg.Path()); err != nil || u.User == nil {
		t.Errorf("store name %q", pg.Path())
	} else if p, _ := u.User.Password(); p != "xxxxx" {
		t.Errorf("the store's name shows the DSN's password: %s", pg.Path())
	}
	lite, _ := openTemp(t)
	src := writeSample(t, lite)
	for _, r := range src {
		if _, ok, err := pg.Import(ctx, r); err != nil || !ok {
			t.Fatalf("import run %d into postgres: %v, %v", r.ID, ok, err)
		}
	}
	ids := []int64{1, 2}
	got, err := pg.Results(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	checkSameRuns(t, got, src)
	back, _ := openTemp(t)
	for _, r := range got {
		if _, ok, err := back.Import(ctx, r); err != nil || !ok {
			t.Fatalf("import run %d back into sqlite: %v, %v", r.ID, ok, err)
		}
	}
	again, err := back.Results(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	checkSameRuns(t, again, src)
	if sums, total, err := pg.Browse(ctx, BrowseFilter{Label: "base", Limit: 10}); err != nil || total != 1 || len(sums) != 1 {
		t.Errorf("Browse on postgres: %d of %d, %v", len(sums), total, err)
	}
	if err := pg.CheckSchema(ctx); err != nil {
		t.Errorf("CheckSchema: %v", err)
	}
	pg.Close()
	if re, err := OpenExisting(ctx, dsn); err != nil {
		t.Errorf("reopen: %v", err)
	} else {
		re.Close()
	}
	if _, err := OpenExisting(ctx, pgDSN(t)); err == nil {
		t.Error("OpenExisting of an empty database: no error")
	}
	other := pgDSN(t)
	db, _ := sql.Open("pgx", other)
	if _, err := db.Exec("CREATE TABLE theirs (a int)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctx, other); err == nil {
		t.Error("a database with somebody else's tables was taken as a store")
	}
}

// writeSample writes two runs (one finished, one whose process died mid-step).
func writeSample(t *testing.T, s *Store) []Run {
	t.Helper()
	ctx := context.Background()
	meta := testMeta("base")
	meta.StepGroups = []StepGroup{{Name: "write", Title: "write"}}
	runID, err := s.BeginRun(ctx, meta)
	if err != nil {
		t.Fatal(err)
	}
	hw := testHW(true, true)
	res := metrics.StepResult{Name: "l.i0", Status: metrics.StatusOK, StartedAt: t0.Add(time.Second), Seconds: 2,
		Kind: "load", Primary: "insert", Labels: []metrics.LabelStats{lbl("insert", metrics.UnitRows, 500, true, 10)},
		Audit: metrics.Audit{Status: "ok", Detail: "fine"}, ClientCPUSec: 0.75, DBSizeBytes: 4096, DBSizeKnown: true, HW: hw,
		Metrics: map[string]float64{"cpupq": 12.5}, ConnCPU: []metrics.ConnCPU{{Role: "insert", Sessions: 1, CPUSec: 0.5}}}
	ivs := []metrics.Interval{iv(0, lbl("insert", metrics.UnitRows, 250, true, 10)), iv(1, lbl("insert", metrics.UnitRows, 250, true, 10))}
	ivs[1].Metrics = map[string]float64{metrics.MetricKVL0Files: 3}
	ivs[0].HW = hw
	sid, err := s.BeginStep(ctx, runID, 1, "l.i0", "write", res.StartedAt)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendIntervals(ctx, sid, ivs); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishStep(ctx, sid, res); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, runID, RunOK, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	died, err := s.BeginRun(ctx, testMeta("died"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginStep(ctx, died, 1, "l.i0", "", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE runs SET pid = 0 WHERE id = ?`, died); err != nil {
		t.Fatal(err)
	}
	runs, err := s.Results(ctx, []int64{runID, died})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// TestConcurrentWriters: two writers on one store at once (two runs, a step and its
// intervals each, interleaved) both complete, on both kinds of store.
func TestConcurrentWriters(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			ctx := context.Background()
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for w := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					id, err := s.BeginRun(ctx, testMeta(fmt.Sprintf("w%d", w)))
					if err != nil {
						errs <- err
						return
					}
					sid, err := s.BeginStep(ctx, id, 1, "l.i0", "", t0)
					if err != nil {
						errs <- err
						return
					}
					for i := range 20 {
						if err := s.AppendIntervals(ctx, sid, []metrics.Interval{iv(i, lbl("insert", metrics.UnitRows, 10, false, 0))}); err != nil {
							errs <- err
							return
						}
					}
					if err := s.FinishStep(ctx, sid, metrics.StepResult{Name: "l.i0", Status: metrics.StatusOK, StartedAt: t0, Seconds: 20}); err != nil {
						errs <- err
						return
					}
					errs <- s.FinishRun(ctx, id, RunOK, t0.Add(time.Minute))
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			sums, err := s.Runs(ctx, RunFilter{})
			if err != nil || len(sums) != 2 || sums[0].Status != RunOK || sums[1].Status != RunOK {
				t.Fatalf("runs after two concurrent writers: %+v, %v", sums, err)
			}
			runs, err := s.Results(ctx, []int64{sums[0].ID, sums[1].ID})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range runs {
				if len(r.Steps) != 1 || len(r.Steps[0].Intervals) != 20 {
					t.Errorf("run %d: %d steps, %d intervals; want 1 and 20", r.ID, len(r.Steps), len(r.Steps[0].Intervals))
				}
			}
		})
	}
}
