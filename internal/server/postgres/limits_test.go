package postgres

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/servertest"

	"github.com/jackc/pgx/v5"
)

func TestPgBytes(t *testing.T) {
	for _, tc := range []struct {
		v    string
		unit int64
		want int64
		ok   bool
	}{
		{"128MB", 8192, 128 << 20, true},
		{"4GB", 8192, 4 << 30, true},
		{"16384", 8192, 128 << 20, true}, // shared_buffers in 8 kB pages
		{"65536", 1024, 64 << 20, true},  // maintenance_work_mem in kB
		{"512kB", 8192, 512 << 10, true},
		{"-1", 8192, -1, true},
		{"1 GB", 8192, 1 << 30, true},
		{"lots", 8192, 0, false},
		{"12XB", 8192, 0, false},
	} {
		got, ok := pgBytes(tc.v, tc.unit)
		if got != tc.want || ok != tc.ok {
			t.Errorf("pgBytes(%q, %d) = %d, %v; want %d, %v", tc.v, tc.unit, got, ok, tc.want, tc.ok)
		}
	}
}

func TestPgFitMemory(t *testing.T) {
	cached, _, err := server.ReadProfile("", "postgres", "cached")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, conf string
		limit      int64
		want       []string // the lines fitted, in order
	}{
		{"no limit", "shared_buffers = 4GB\n", 0, nil},
		{"default settings over a 256 MiB limit", "", 256 * server.MiB, []string{"shared_buffers = 64MB", "maintenance_work_mem = 32MB"}},
		{"everything fits a large limit", "shared_buffers = 128MB\n", 8 * server.GiB, nil},
		{"the last value counts, quoted or not", "shared_buffers = 4GB\nshared_buffers='32MB' # small\nmaintenance_work_mem 8MB\n", 256 * server.MiB, nil},
		{"the cached profile", cached, 512 * server.MiB, []string{"shared_buffers = 128MB", "maintenance_work_mem = 64MB", "wal_buffers = 32MB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, notes := pgFitMemory(tc.conf, tc.limit)
			var got []string
			for line := range strings.Lines(lines) {
				if set, _, ok := strings.Cut(line, "    #"); ok {
					got = append(got, set)
				}
			}
			if !slices.Equal(got, tc.want) || len(notes) != len(tc.want) {
				t.Fatalf("fitted %q (notes %q), want %q:\n%s", got, notes, tc.want, lines)
			}
		})
	}
	_, notes := pgFitMemory("shared_buffers = 4GB\n", 256*server.MiB)
	if want := "shared_buffers = 64MB: the profile's 4GB is more than 1/4 of the 256MiB memory limit"; notes[0] != want {
		t.Errorf("note %q, want %q", notes[0], want)
	}
}

// TestPostgresUnderLimits starts PostgreSQL with a memory and CPU limit: the postmaster
// and every process it forked, a client's backend too, are in its cgroup; shared_buffers
// and maintenance_work_mem are fitted under the limit and say so; Stop removes the cgroup.
func TestPostgresUnderLimits(t *testing.T) {
	needDebianPostgres(t)
	l := server.Limits{Memory: 256 * server.MiB, CPUs: 1}
	cg := servertest.NeedCgroups(t, l)
	in := startPG(t, server.Options{WorkDir: servertest.WorkDir(t), Limits: l, Cgroups: cg})
	ctx := context.Background()
	c, err := pgx.Connect(ctx, in.DSN) // a backend forked after the start
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	servertest.CheckInCgroup(t, in)
	if got := pgShow(t, in.DSN, "shared_buffers", "maintenance_work_mem"); !slices.Equal(got, []string{"64MB", "32MB"}) {
		t.Errorf("SHOW = %q, want the fitted 64MB, 32MB", got)
	}
	if len(in.MemoryFitted) != 2 || !strings.Contains(in.Config, "\nshared_buffers = 64MB    # the profile's 128MB is more than 1/4 of the 256MiB memory limit") {
		t.Errorf("fitted %q, config:\n%s", in.MemoryFitted, in.Config)
	}
	if !strings.HasPrefix(in.Cgroup.MemoryNote(), "256MiB, page cache included") || !strings.HasPrefix(in.Cgroup.CPUsNote(), "1 CPU: ") {
		t.Errorf("notes %q %q", in.Cgroup.MemoryNote(), in.Cgroup.CPUsNote())
	}
	dirs := in.Cgroup.Dirs
	c.Close(ctx)
	if err := in.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	servertest.CheckCgroupRemoved(t, dirs)
}
