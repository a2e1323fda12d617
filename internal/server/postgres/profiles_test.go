package postgres

import (
	"context"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/servertest"

	"github.com/jackc/pgx/v5"
)

// seedProfiles are the built-in profiles of the configs the seeds toggle (issue 26 item 3)
// and the settings that show each is in effect: SHOW name → value.
var seedProfiles = map[string]map[string]string{
	"fpw":   {"full_page_writes": "on", "shared_buffers": "128MB", "synchronous_commit": "on"},
	"nofpw": {"full_page_writes": "off", "shared_buffers": "128MB", "synchronous_commit": "on"},
	"seeds": {"shared_buffers": "10GB", "max_wal_size": "40GB", "min_wal_size": "20GB", "checkpoint_timeout": "30min",
		"wal_compression": "off", "full_page_writes": "on", "bgwriter_lru_maxpages": "2000", "bgwriter_delay": "100ms",
		"autovacuum_max_workers": "4", "autovacuum_naptime": "10s", "autovacuum_vacuum_cost_limit": "4000",
		"autovacuum_vacuum_scale_factor": "0.05", "autovacuum_vacuum_insert_scale_factor": "0.05",
		"autovacuum_work_mem": "256MB", "synchronous_commit": "on"},
}

// Issue 26 item 3: every profile of the configs the seeds toggle starts on every
// PostgreSQL dbperf installs (Debian's 15, 13 from Maven Central), its settings are in
// effect there, and a write commits. All the servers start at once, each in its own
// directory on its own port: goroutines rather than parallel subtests, which go test runs
// only GOMAXPROCS at a time, while a server spends much of its start waiting.
func TestPostgresSeedProfilesStart(t *testing.T) {
	needDebianPostgres(t)
	// Every profile listed here is built in, and every built-in profile but default and
	// cached is listed here.
	builtin, err := server.Profiles("", "postgres")
	if err != nil {
		t.Fatal(err)
	}
	// The sync-* profiles set a cluster's synchronous level: TestClusterPostgres
	// (internal/cli) starts a cluster on sync-remote-apply, TestPostgresClusterLevels the
	// others; TestPostgresHugePages starts huge.
	want := slices.Sorted(slices.Values(append(slices.Collect(maps.Keys(seedProfiles)), "cached", "default", "huge",
		"sync-on", "sync-remote-apply", "sync-remote-write")))
	if !slices.Equal(builtin, want) {
		t.Errorf("built-in postgres profiles %v, this test starts %v (and default, cached)", builtin, want)
	}

	type start struct {
		name, profile string
		o             server.Options
		in            *server.Instance
		err           error
		took          time.Duration
	}
	var starts []*start
	for _, version := range []string{"", "13"} {
		var cache string
		label := pgDefaultMajor
		if version != "" {
			label = version
			// Installed once into the shared test cache; skipped (not failed) offline.
			if !t.Run("install-"+version, func(t *testing.T) {
				if os.Getenv("DBPERF_OFFLINE") != "" {
					t.Skip("DBPERF_OFFLINE is set")
				}
				cache = servertest.InstallReal(t, New(), version)
			}) || cache == "" {
				continue
			}
		}
		for _, p := range slices.Sorted(maps.Keys(seedProfiles)) {
			starts = append(starts, &start{name: label + "/" + p, profile: p,
				o: server.Options{WorkDir: servertest.WorkDir(t), Version: version, CacheDir: cache, Profile: p}})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range starts {
		wg.Go(func() {
			t0 := time.Now()
			s.in, s.err = Start(ctx, s.o)
			s.took = time.Since(t0)
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for _, s := range starts {
			if s.in != nil {
				wg.Go(func() {
					if err := s.in.Stop(context.Background()); err != nil {
						t.Error(err)
					}
				})
			}
		}
		wg.Wait()
	})
	for _, s := range starts {
		t.Run(s.name, func(t *testing.T) {
			if s.err != nil {
				t.Fatalf("%s did not start: %v", s.name, s.err)
			}
			t.Logf("PostgreSQL %s with profile %s started in %v", s.in.Version, s.profile, s.took.Round(time.Millisecond))
			if s.o.Version != "" && !strings.HasPrefix(s.in.Version, s.o.Version+".") {
				t.Errorf("version %s, want %s", s.in.Version, s.o.Version)
			}
			var names []string
			for n := range seedProfiles[s.profile] {
				names = append(names, n)
			}
			got := pgShow(t, s.in.DSN, names...)
			for i, n := range names {
				if want := seedProfiles[s.profile][n]; got[i] != want {
					t.Errorf("SHOW %s = %q, want %q", n, got[i], want)
				}
			}
			// A write commits.
			c, err := pgx.Connect(ctx, s.in.DSN)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			var sum int
			if _, err := c.Exec(ctx, "CREATE TABLE t AS SELECT g AS id FROM generate_series(1, 100) g"); err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRow(ctx, "SELECT sum(id) FROM t").Scan(&sum); err != nil || sum != 5050 {
				t.Errorf("sum = %d, %v", sum, err)
			}
		})
	}
}
