package cli

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestResultsCopy: two tiny runs written into one store at once are both complete; copied
// into a new store and back into a third, every report is the same as the original's, and
// copying again adds nothing.
func TestResultsCopy(t *testing.T) {
	t.Parallel() // asserts the copied runs
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), filepath.Join(dir, "c.db")
	var wg sync.WaitGroup
	errs := make([]string, 2)
	for i, label := range []string{"one", "two"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, stderr := runCLI(t, nil, "run", "insertbench", "--scale", "tiny", "--steps", "l.i0,l.x,qp100", "--time", "1",
				"--label", label, "--results", a, "--quiet", "--workdir", filepath.Join(dir, label))
			if code != 0 {
				errs[i] = stderr
			}
		}()
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Fatalf("concurrent run %d: %s", i+1, e)
		}
	}
	_, runs, _ := runCLI(t, nil, "runs", "--results", a)
	if strings.Count(runs, " ok ") != 2 {
		t.Fatalf("both concurrent runs should be complete:\n%s", runs)
	}
	for _, cp := range [][2]string{{a, b}, {b, c}} {
		code, out, stderr := runCLI(t, nil, "results", "copy", "--from", cp[0], "--to", cp[1])
		if code != 0 || !strings.Contains(out, "copied 2 runs") {
			t.Fatalf("copy %s → %s: exit %d: %s%s", cp[0], cp[1], code, out, stderr)
		}
	}
	for _, format := range []string{"text", "json", "html"} {
		_, want, _ := runCLI(t, nil, "report", "--results", a, "--format", format, "one", "two")
		_, got, stderr := runCLI(t, nil, "report", "--results", c, "--format", format, "one", "two")
		if got != want || stderr != "" {
			t.Errorf("--format %s: the report of the copy of the copy differs from the original's (%s)", format, stderr)
		}
	}
	code, out, _ := runCLI(t, nil, "results", "copy", "--from", a, "--to", b)
	if code != 0 || !strings.Contains(out, "copied 0 runs") || !strings.Contains(out, "2 were there already") {
		t.Errorf("copying again: exit %d, %q; want nothing added", code, out)
	}
	// Two copies of the same store at once add each run once (issue 23: they gave 11-12
	// runs where 6 were expected).
	d := filepath.Join(dir, "d.db")
	if code, out, stderr := runCLI(t, nil, "results", "copy", "--from", a, "--to", d, "one"); code != 0 {
		t.Fatalf("copy into d: exit %d: %s%s", code, out, stderr)
	}
	outs := make([]string, 3)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out, stderr := runCLI(t, nil, "results", "copy", "--from", a, "--to", d)
			outs[i] = fmt.Sprintf("exit %d: %s%s", code, out, stderr)
		}()
	}
	wg.Wait()
	copied := 0
	for _, out := range outs {
		if n, err := fmt.Sscanf(out, "exit 0: copied %d runs", new(int)); n != 1 || err != nil {
			t.Fatalf("concurrent copies: %q", outs)
		}
		if strings.HasPrefix(out, "exit 0: copied 1 runs") {
			copied++
		}
	}
	_, runs, _ = runCLI(t, nil, "runs", "--results", d)
	if copied != 1 || strings.Count(runs, " ok ") != 2 {
		t.Errorf("3 concurrent copies of a store of 2 runs into one holding 1 of them: %q; d holds\n%s\nwant the 2 runs once each", outs, runs)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"results", "copy", "--from", a, "--to", a}, "the same store"},
		{[]string{"results", "copy", "--from", filepath.Join(dir, "none.db"), "--to", b}, "no results store"},
		{[]string{"results", "copy", "--from", a}, "needs --from STORE and --to STORE"},
		{[]string{"results", "copy", "--from", a, "--to", filepath.Join(dir, "e.db"), "nosuch"}, "nosuch"},
	} {
		code, _, stderr := runCLI(t, nil, bad.args...)
		if code != ExitBadInput || !strings.Contains(stderr, bad.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 saying %q", bad.args, code, stderr, bad.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "e.db")); err == nil {
		t.Error("a refused copy created its target store")
	}
}

// TestResultsCopyKilled (issue 23's acceptance): `results copy` killed with -9 at 20
// random points (seeded, spread over a whole copy's duration) and run again, and then two
// copies at once into a fresh store, end with exactly the source's runs: the same reports.
func TestResultsCopyKilled(t *testing.T) {
	// Serial (no t.Parallel): its kills are spread over one copy's measured time, which
	// other tests beside it make vary (7 of 20 landed midway with four beside it).
	if testing.Short() {
		t.Skip("kills copy processes")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	labels := []string{"k1", "k2", "k3"}
	for _, l := range labels {
		if code, _, stderr := runCLI(t, nil, "run", "insertbench", "--scale", "tiny", "--rows", "5000", "--steps", "l.i0,l.x,qp100",
			"--time", "1", "--report-interval", "0.02", "--label", l, "--results", src, "--quiet"); code != 0 {
			t.Fatalf("run %s: %s", l, stderr)
		}
	}
	report := func(store string) string {
		code, out, stderr := runCLI(t, nil, append([]string{"report", "--results", store, "--format", "json"}, labels...)...)
		if code != 0 {
			t.Fatalf("report of %s: %d %s", store, code, stderr)
		}
		return out
	}
	want := report(src)
	bin := buildBinary(t)
	copyTo := func(dst string) *exec.Cmd {
		return exec.Command(bin, "results", "copy", "--from", src, "--to", dst)
	}
	// How long a whole copy takes, to spread the kills over it.
	full := filepath.Join(dir, "full.db")
	start := time.Now()
	if out, err := copyTo(full).CombinedOutput(); err != nil {
		t.Fatalf("copy: %v %s", err, out)
	}
	whole := time.Since(start)
	rng := rand.New(rand.NewPCG(23, 20))
	killed := 0
	for k := range 20 {
		dst := filepath.Join(dir, fmt.Sprintf("dst%d.db", k))
		cmd := copyTo(dst)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(whole))))
		_ = cmd.Process.Kill()
		if err := cmd.Wait(); err != nil {
			killed++
		}
		if out, err := copyTo(dst).CombinedOutput(); err != nil {
			t.Fatalf("kill %d: copy again: %v %s", k, err, out)
		}
		if got := report(dst); got != want {
			t.Errorf("kill %d: the store copied again reports differently from the source", k)
		}
	}
	t.Logf("a whole copy took %v; %d of 20 copies were killed before they ended", whole.Round(time.Millisecond), killed)
	if killed < 10 {
		t.Errorf("only %d of 20 copies were killed midway: the kill points are not spread over the copy", killed)
	}
	// Two at once.
	both := filepath.Join(dir, "both.db")
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := copyTo(both).CombinedOutput(); err != nil {
				t.Errorf("concurrent copy: %v %s", err, out)
			}
		}()
	}
	wg.Wait()
	if got := report(both); got != want {
		t.Errorf("two concurrent copies: the store reports differently from the source")
	}
}
