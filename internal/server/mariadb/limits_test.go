package mariadb

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/servertest"
)

func TestMariaDBFitMemory(t *testing.T) {
	for _, tc := range []struct {
		name, prof, storage string
		limit               int64
		want                []string // the settings lines, in order
	}{
		{"no limit", "[mysqld]\ninnodb_buffer_pool_size=4G\n", "innodb", 0, nil},
		{"the default buffer pool over 384 MiB", "[mysqld]\nmax_connections=10\n", "innodb", 384 * server.MiB, []string{"innodb_buffer_pool_size=96M"}},
		{"fits", "[mysqld]\ninnodb_buffer_pool_size=64M\n", "innodb", 384 * server.MiB, nil},
		{"the last value in a group the server reads, loose- and dashes", "[mysqld]\ninnodb-buffer-pool-size=4G\n[client]\ninnodb_buffer_pool_size=1M\n[mariadb]\nloose-innodb_buffer_pool_size = 2g # big\n", "innodb", 1 * server.GiB, []string{"innodb_buffer_pool_size=256M"}},
		{"MyRocks settings only with MyRocks", "[mysqld]\nloose-rocksdb_block_cache_size=4G\n", "innodb", 1 * server.GiB, nil},
		{"MyRocks: block cache and unbounded memtables", "[mysqld]\nloose-rocksdb_block_cache_size=4G\ninnodb_buffer_pool_size=128M\n", "rocksdb", 1 * server.GiB,
			[]string{"rocksdb_block_cache_size=256M", "rocksdb_db_write_buffer_size=128M"}},
		{"MyRocks: bounded memtables that fit", "[mysqld]\nrocksdb_db_write_buffer_size=64M\nrocksdb_block_cache_size=128M\n", "rocksdb", 1 * server.GiB, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, notes := mariadbFitMemory(tc.prof, tc.storage, tc.limit)
			var got []string
			for _, l := range lines {
				if !strings.HasPrefix(l, "#") {
					got = append(got, l)
				}
			}
			if !slices.Equal(got, tc.want) || len(notes) != len(tc.want) {
				t.Fatalf("fitted %q (notes %q), want %q", got, notes, tc.want)
			}
		})
	}
	if b, ok := mariadbBytes("2g"); !ok || b != 2<<30 {
		t.Errorf("mariadbBytes(2g) = %d, %v", b, ok)
	}
	if _, ok := mariadbBytes("lots"); ok {
		t.Error("mariadbBytes(lots) accepted")
	}
}

// TestMariaDBUnderLimits starts MariaDB (InnoDB) with a memory limit: mariadbd is in its
// cgroup with the limit set, the buffer pool fitted under it, and Stop removes the cgroup.
// A limit below what MariaDB needs is refused before anything starts.
func TestMariaDBUnderLimits(t *testing.T) {
	needMariaDB(t)
	l := server.Limits{Memory: 384 * server.MiB}
	cg := servertest.NeedCgroups(t, l)
	work := servertest.WorkDir(t)
	if _, err := Start(context.Background(), server.Options{WorkDir: work, Limits: server.Limits{Memory: 256 * server.MiB}, Cgroups: cg}); err == nil ||
		!strings.Contains(err.Error(), "a memory limit of 256MiB is too small for mariadb, which needs at least 384MiB") {
		t.Fatalf("Start under 256 MiB: %v", err)
	}
	in := startMariaDB(t, server.Options{WorkDir: work, Limits: l, Cgroups: cg})
	servertest.CheckInCgroup(t, in)
	db := mariadbDB(t, in)
	if got := queryString(t, db, "SELECT @@innodb_buffer_pool_size"); got != "100663296" {
		t.Errorf("innodb_buffer_pool_size = %s, want 96M fitted under 384M", got)
	}
	if len(in.MemoryFitted) != 1 || !strings.Contains(in.Config, "\ninnodb_buffer_pool_size=96M\n") {
		t.Errorf("fitted %q, my.cnf:\n%s", in.MemoryFitted, in.Config)
	}
	dirs := in.Cgroup.Dirs
	db.Close()
	stopMariaDB(t, in)
	servertest.CheckCgroupRemoved(t, dirs)
}
