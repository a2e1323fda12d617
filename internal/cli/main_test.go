package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/workdir"
)

// TestMain gives the package's tests a TMPDIR of their own. A run sweeps $TMPDIR for the
// work dirs of dbperf processes that died and says so on stdout; with the machine's /tmp,
// whatever another program left there (a test binary killed by a timeout, a CI job cut
// short) showed up in these tests' output (TestBadInput failed in CI on it). At the end,
// a work dir of this process still there is a run that did not clean up after itself.
//
// The package's t.Parallel() tests run parallelTests at a time unless -parallel is given.
func TestMain(m *testing.M) { os.Exit(runIsolated(m)) }

// parallelTests is how many of the package's t.Parallel() tests run at once. go test's
// default, GOMAXPROCS, is 2 on the 2-core machines this suite's budget is for; these
// tests mostly wait (servers starting and stopping, steps of a fixed length, leases
// running out), so more at a time shortens the package. The tests that assert rates,
// latencies or CPU per op call no t.Parallel(): they run alone, before these.
const parallelTests = 4

// setParallel sets -parallel to parallelTests unless the command line gave it.
func setParallel() error {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		return nil
	}
	return flag.Set("test.parallel", fmt.Sprint(parallelTests))
}

func runIsolated(m *testing.M) int {
	if err := setParallel(); err != nil {
		fmt.Fprintln(os.Stderr, "TestMain:", err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "clitest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "TestMain:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	// As /tmp: the managed servers run as their own users when the tests run as root, and
	// TestReadOnlyStore runs dbperf as another user; all need to reach their dirs in here.
	if err := os.Chmod(tmp, 0o1777); err != nil {
		fmt.Fprintln(os.Stderr, "TestMain:", err)
		return 1
	}
	if err := os.Setenv("TMPDIR", tmp); err != nil {
		fmt.Fprintln(os.Stderr, "TestMain:", err)
		return 1
	}
	code := m.Run()
	if left := ownWorkDirs(tmp); len(left) > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "runs in these tests left their work dirs behind: %v\n", left)
		code = 1
	}
	return code
}

// ownWorkDirs lists the work dirs directly in tmp that this process made (its owner file
// names it); subprocesses' dirs and dirs kept on purpose have another owner or none.
func ownWorkDirs(tmp string) []string {
	dirs, _ := filepath.Glob(filepath.Join(tmp, workdir.Pattern))
	var out []string
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, workdir.OwnerFile))
		var owner store.ProcessIdentity
		if err == nil && json.Unmarshal(b, &owner) == nil && owner.PID == os.Getpid() {
			out = append(out, d)
		}
	}
	return out
}
