package managed

import (
	"errors"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/servertest"
)

// The server's options carry the cgroup hierarchies only when limits are set, and read
// them through Options.ReadCgroups.
func TestOptionsServer(t *testing.T) {
	reads := 0
	cg := &server.Cgroups{}
	o := Options{Engine: "postgres", Version: "16", Profile: "default", CacheDir: "/cache",
		ReadCgroups: func() (*server.Cgroups, error) { reads++; return cg, nil }}
	so := o.Server("/base")
	if so.WorkDir != "/base" || so.Version != "16" || so.Profile != "default" || so.CacheDir != "/cache" || so.Cgroups != nil || reads != 0 {
		t.Errorf("without limits: %+v, %d reads", so, reads)
	}
	o.Limits = server.Limits{CPUs: 1}
	if so := o.Server("/base"); so.Cgroups != cg || so.Limits != o.Limits || reads != 1 {
		t.Errorf("with limits: cgroups %p (want %p), limits %+v, %d reads", so.Cgroups, cg, so.Limits, reads)
	}
	o.ReadCgroups = func() (*server.Cgroups, error) { return nil, errors.New("no /proc") }
	if so := o.Server("/base"); so.Cgroups != nil {
		t.Error("unreadable cgroups: the server reads them itself")
	}
}

// CheckLimits refuses a memory limit below the engine's least (naming it) and limits in
// a cgroup tree dbperf may not write; no limits pass without reading any cgroup.
func TestCheckLimits(t *testing.T) {
	ro := servertest.ReadOnlyCgroupTree(t)
	read := func() (*server.Cgroups, error) { return ro, nil }
	if err := CheckLimits(Options{Engine: "postgres", ReadCgroups: func() (*server.Cgroups, error) {
		t.Error("read the cgroups without limits")
		return ro, nil
	}}); err != nil {
		t.Errorf("no limits: %v", err)
	}
	err := CheckLimits(Options{Engine: "mariadb", Limits: server.Limits{Memory: 256 * server.MiB}, ReadCgroups: read})
	var me *MemoryError
	if !errors.As(err, &me) || !strings.HasPrefix(err.Error(), "a memory limit of 256MiB is too small for mariadb, which needs at least 384MiB") {
		t.Fatalf("mariadb under 256MiB: %v, want a *MemoryError", err)
	}
	srv, err := catalog.Server("mariadb")
	if err != nil {
		t.Fatal(err)
	}
	if me.Least != LeastMemory(srv) || me.Least != 384*server.MiB {
		t.Errorf("least %d, want %d", me.Least, 384*server.MiB)
	}
	err = CheckLimits(Options{Engine: "postgres", Limits: server.Limits{Memory: 256 * server.MiB}, ReadCgroups: read})
	if err == nil || errors.As(err, &me) || !strings.HasPrefix(err.Error(), "cannot limit the server's memory: dbperf cannot create a cgroup in ") {
		t.Errorf("a read-only cgroup tree: %v", err)
	}
}
