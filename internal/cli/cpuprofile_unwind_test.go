package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/profile"
)

// TestCPUProfileUnwindsMavenPostgres checks the default call graph on a build without
// frame pointers: PostgreSQL 13 from Maven Central (skipped when it is not installed:
// dbperf server install postgres@13). With fp, every sample of its query role stopped
// at the leaf; with the default (DWARF) under 10% may (issue 38).
func TestCPUProfileUnwindsMavenPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a managed server under perf")
	}
	// Beside the other perf tests, after the sequential ones (which install 13 from
	// Maven): its assertion is on how stacks unwind, not on rates.
	t.Parallel()
	cache := os.Getenv("DBPERF_CACHE_DIR")
	if cache == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("no cache dir: %v", err)
		}
		cache = filepath.Join(d, "dbperf")
	}
	bins, _ := filepath.Glob(filepath.Join(cache, "postgres", "13.*", "bin", "postgres"))
	if len(bins) == 0 {
		t.Skipf("PostgreSQL 13 from Maven is not installed in %s (dbperf server install postgres@13)", cache)
	}
	needPerf(t, bins[0], "postgres 13 (Maven)")
	tmp := serverWorkdir(t)
	prof := filepath.Join(tmp, "prof")
	env := map[string]string{"DBPERF_CPU_PROFILE_HZ": "199", "DBPERF_CACHE_DIR": os.Getenv("DBPERF_CACHE_DIR")}
	code, out, errOut := runCLI(t, env, "run", "insertbench", "--engine", "postgres", "--managed",
		"--engine-version", "13", "--scale", "tiny", "--rows", "20000", "--steps", "l.i0,qp100", "--time", "2",
		"--quiet", "--workdir", tmp, "--results", filepath.Join(tmp, "r.db"), "--cpu-profile", prof)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	waitNoServers(t, tmp)
	// (A go test binary has no symbols: its own frames read "[cli.test]", so the client
	// role's stacks do not begin at a known root and the note may name it.)
	for _, l := range strings.Split(errOut, "\n") {
		if strings.Contains(l, "not unwound whole") && strings.Contains(l, "query") {
			t.Errorf("the fold says the query role's stacks did not unwind: %s", l)
		}
	}
	files, _ := filepath.Glob(filepath.Join(prof, "run-*", "qp100.query.folded"))
	if len(files) != 1 {
		t.Fatalf("qp100's query profile: %v", files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.ReadFolded(f, "query")
	if err != nil {
		t.Fatal(err)
	}
	u := p.Unwinding()
	t.Logf("qp100 query role: %d samples, %d (%.1f%%) not unwound whole", u.Samples, u.Truncated, 100*u.Share())
	if u.Samples < 50 {
		t.Fatalf("only %d samples in qp100's query role", u.Samples)
	}
	if u.Share() >= 0.10 {
		t.Errorf("%.0f%% of the query role's samples did not unwind whole, want under 10%%", 100*u.Share())
	}
}
