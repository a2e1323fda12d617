package cli

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/server"
	pgserver "github.com/dbperf/dbperf/internal/server/postgres"
)

// TestTeamStore is issue 14's first acceptance point: two tiny runs written into a
// PostgreSQL results store (a throwaway server, as a team's would be) by two dbperf
// processes at once are both complete; `dbperf results copy` to a SQLite file and back
// into another PostgreSQL database gives identical reports; `dbperf serve` reads it.
func TestTeamStore(t *testing.T) {
	t.Parallel() // two writers into one store of its own: asserts what is stored, not rates
	if bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres"); len(bins) == 0 {
		t.Skip("no PostgreSQL binaries installed: apt-get install postgresql (make test does)")
	}
	dir, err := os.MkdirTemp("", "dbperf-teamstore-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755) // reachable by the server's user when the tests run as root
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	in, err := pgserver.Start(ctx, server.Options{WorkDir: filepath.Join(dir, "pg")})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	team := in.DSN
	u, err := url.Parse(team)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/copy"
	other := u.String()
	if out, err := exec.Command("psql", team, "-c", "CREATE DATABASE copy").CombinedOutput(); err != nil {
		t.Fatalf("create database: %v %s", err, out)
	}

	bin := buildBinary(t)
	var wg sync.WaitGroup
	outs := make([]string, 2)
	for i, label := range []string{"one", "two"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.CommandContext(ctx, bin, "run", "insertbench", "--scale", "tiny", "--steps", "l.i0,l.x,qp100",
				"--time", "1", "--label", label, "--results", team, "--workdir", filepath.Join(dir, label))
			out, err := cmd.CombinedOutput()
			if err != nil {
				outs[i] = err.Error() + ": " + string(out)
			}
			if strings.Contains(string(out), in.DSN) {
				outs[i] = "the output shows the store's DSN with its password"
			}
		}()
	}
	wg.Wait()
	for i, o := range outs {
		if o != "" {
			t.Fatalf("process %d: %s", i+1, o)
		}
	}
	_, runs, stderr := runCLI(t, nil, "runs", "--results", team)
	if strings.Count(runs, " ok ") != 2 {
		t.Fatalf("both processes' runs should be complete in the team store:\n%s%s", runs, stderr)
	}

	lite := filepath.Join(dir, "local.db")
	for _, cp := range [][2]string{{team, lite}, {lite, other}} {
		if code, out, stderr := runCLI(t, nil, "results", "copy", "--from", cp[0], "--to", cp[1]); code != 0 || !strings.Contains(out, "copied 2 runs") {
			t.Fatalf("copy: exit %d: %s%s", code, out, stderr)
		} else if strings.Contains(out, in.DSN) {
			t.Error("results copy printed the DSN with its password")
		}
	}
	for _, format := range []string{"text", "json"} {
		_, want, _ := runCLI(t, nil, "report", "--results", team, "--format", format, "one", "two")
		for _, st := range []string{lite, other} {
			if _, got, stderr := runCLI(t, nil, "report", "--results", st, "--format", format, "one", "two"); got != want || stderr != "" {
				t.Errorf("--format %s: the report from the copy differs from the team store's (%s)", format, stderr)
			}
		}
	}
	checkServe(t, team, dir)
}
