package postgres

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/hugepages"
	"github.com/dbperf/dbperf/internal/server/servertest"

	"github.com/jackc/pgx/v5"
)

// hugeMapped is how many KiB of pid's mappings are in pages of sizeKiB (smaps).
func hugeMapped(t *testing.T, pid, sizeKiB int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		t.Fatal(err)
	}
	total, size := 0, 0
	for _, line := range strings.Split(string(b), "\n") {
		var v int
		if _, err := fmt.Sscanf(line, "Size: %d kB", &v); err == nil {
			size = v
		} else if _, err := fmt.Sscanf(line, "KernelPageSize: %d kB", &v); err == nil && v == sizeKiB {
			total += size
		}
	}
	return total
}

// The built-in profile huge (huge_pages = on) starts where the kernel had no pages set aside: dbperf
// grows the pool by what the server needs, the server's shared memory is in huge pages,
// a copy of it gets its own, and the pool is as it was once both stopped.
func TestPostgresHugePages(t *testing.T) {
	needDebianPostgres(t)
	if os.Geteuid() != 0 {
		t.Skip("growing vm.nr_hugepages takes root")
	}
	before, err := hugepages.Read(hugepages.Options{})
	if err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	o := server.Options{WorkDir: servertest.WorkDir(t), Profile: "huge"} // built in: shared_buffers 128MB
	src, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Stop(ctx)
	c, err := pgx.Connect(ctx, src.DSN)
	if err != nil {
		t.Fatal(err)
	}
	var setting string
	if err := c.QueryRow(ctx, "SHOW huge_pages").Scan(&setting); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	if setting != "on" {
		t.Errorf("huge_pages = %s, want on", setting)
	}
	if kib := hugeMapped(t, src.PID(), before.SizeKiB); kib < 128*1024 {
		t.Errorf("postmaster maps %d KiB in %d KiB pages, want its shared buffers' 128 MiB at least", kib, before.SizeKiB)
	}
	running, err := hugepages.Read(hugepages.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if running.Rsvd+running.Total-running.Free < 64 {
		t.Errorf("pool while running: %+v, want at least 64 pages in use or promised", running)
	}

	if err := src.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	o.WorkDir, o.CopyOf = servertest.WorkDir(t), src
	cp, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if kib := hugeMapped(t, cp.PID(), before.SizeKiB); kib < 128*1024 {
		t.Errorf("copy maps %d KiB in huge pages, want 128 MiB at least", kib)
	}
	if err := cp.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := hugepages.Read(hugepages.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if after.Total != before.Total {
		t.Errorf("pool after both stopped: %d pages, want %d as before", after.Total, before.Total)
	}
}
