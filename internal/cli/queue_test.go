package cli

import (
	"fmt"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/fleet/sweepq"
)

// TestSweepWaitExitStatus: a wait that ran out of --timeout or whose sweep left a point
// unmeasured exits 1, one that was interrupted 130, each with sweepq's message, also
// when wrapped.
func TestSweepWaitExitStatus(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		code int
	}{
		{&sweepq.StoppedError{Label: "s", Timeout: time.Minute}, ExitStepFailed},
		{&sweepq.StoppedError{Label: "s", Interrupted: true}, ExitInterrupted},
		{fmt.Errorf("wait: %w", &sweepq.UnmeasuredError{Points: []string{"point a: job 1 discarded"}}), ExitStepFailed},
	} {
		ee, ok := asExit(c.err)
		if !ok || ee.code != c.code || ee.Error() == "" {
			t.Errorf("asExit(%v) = %+v, %v; want exit %d", c.err, ee, ok, c.code)
		}
	}
	if code, _, errs := runCLI(t, nil, "sweep", "--wait"); code != ExitBadInput || errs != "dbperf: --wait needs the --label of a queued sweep (dbperf queue lists the sweeps)\n" {
		t.Errorf("sweep --wait without --label: exit %d, %q", code, errs)
	}
	if code, _, errs := runCLI(t, nil, "sweep", "--wait", "--label", "s", "--results", "x.db"); code != ExitBadInput ||
		errs != "dbperf: --results: the queue lives in a PostgreSQL results store: give --results postgres://… (or @FILE, or DBPERF_RESULTS)\n" {
		t.Errorf("sweep --wait on a SQLite store: exit %d, %q", code, errs)
	}
}
