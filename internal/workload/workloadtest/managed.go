package workloadtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/mariadb"
	"github.com/dbperf/dbperf/internal/engine/postgres"
	"github.com/dbperf/dbperf/internal/server"
	mariadbserver "github.com/dbperf/dbperf/internal/server/mariadb"
	pgserver "github.com/dbperf/dbperf/internal/server/postgres"
)

// Managed starts a managed server of kind ("postgres": PostgreSQL 15; "innodb",
// "rocksdb": MariaDB with that storage engine) with the repository's profiles (profiles
// is their directory relative to the test's package) and opens the engine on it, both
// stopped when the test ends. The test is skipped when the server's binaries (or the
// MyRocks plugin) are not installed.
func Managed(t testing.TB, kind, profiles string) engine.SQL {
	t.Helper()
	bin, start, o, e := "/usr/lib/postgresql/15/bin/postgres", pgserver.Start, server.Options{}, engine.Engine(postgres.New())
	switch kind {
	case "innodb", "rocksdb":
		bin, start, o, e = "/usr/sbin/mariadbd", mariadbserver.Start, server.Options{StorageEngine: kind}, mariadb.New(kind)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s not installed (make test installs it)", bin)
	}
	if kind == "rocksdb" {
		if _, err := os.Stat("/usr/lib/mysql/plugin/ha_rocksdb.so"); err != nil {
			t.Skip("MyRocks plugin not installed (apt-get install mariadb-plugin-rocksdb)")
		}
	}
	dir, err := os.MkdirTemp("", "dbperf-"+kind+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755) // reachable by the server's user when run as root
	o.WorkDir, o.ProfilesDir = dir, filepath.Clean(profiles)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	in, err := start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	h, err := e.Open(ctx, engine.Target{DSN: in.DSN})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h.(engine.SQL)
}
