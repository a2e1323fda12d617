package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/managed"
	"github.com/dbperf/dbperf/internal/store"
	"golang.org/x/sys/unix"
)

// TestDuetPlacementBadInput: --duet-placement's value, its design and its engine are
// checked before anything runs.
func TestDuetPlacementBadInput(t *testing.T) {
	t.Parallel()
	results := filepath.Join(t.TempDir(), "r.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--design", "duet", "--duet-placement", "apart"}, `--duet-placement "apart": use point or role`},
		{[]string{"--duet-placement", "role"}, "--duet-placement: only with --design duet"},
		{[]string{"--design", "duet", "--duet-placement", "role"}, "--duet-placement role: engine sqlite runs inside dbperf's own process"},
		{[]string{"--design", "duet", "--load-once", "--same-data"}, "--same-data: engine sqlite has no server whose data dbperf can copy"},
		{[]string{"--load-once", "--instances", "2", "--repeat", "4"}, "--instances: engine sqlite has no server to renew"},
	} {
		args := append([]string{"sweep", "insertbench", "--engine", "sqlite", "--profiles", "a=default,b=default",
			"--scale", "tiny", "--rows", "1000", "--steps", "l.i0,qp100", "--time", "1", "--results", results}, tc.args...)
		code, _, stderr := runCLI(t, nil, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
	// A server engine that cannot copy is refused before block 1 runs: nothing stored.
	code, _, stderr := runCLI(t, nil, "sweep", "insertbench", "--engine", "mariadb", "--profiles", "a=default,b=default",
		"--design", "duet", "--load-once", "--same-data", "--scale", "tiny", "--steps", "l.i0,qp100", "--results", results)
	if _, err := os.Stat(results); code != 2 || !strings.Contains(stderr, "mariadb: a server cannot start from a copy") || err == nil {
		t.Errorf("mariadb --same-data: exit %d, stderr %q, results %v; want 2, refused, nothing stored", code, stderr, err)
	}
}

// TestDuetPlacementRolePostgres: with --duet-placement role every point of a block has its
// clients on one CPU and its server on the other, the same for both points, and the
// counterbalanced draw swaps the two CPUs between the two blocks of a cycle. With
// --load-once --same-data, block 2 runs on new servers (other ports) started from a copy
// of a's data, and stores same_data; block 1 ran on the servers that loaded it. With
// --workdir each point's servers live in its own dir, the copy's inside it (the old server
// holds the point's dir until the copy runs).
func TestDuetPlacementRolePostgres(t *testing.T) {
	needServer(t, "postgres")
	if cpus := duetCPUCount(t); cpus != 2 {
		t.Skipf("this test names the two CPU sets of a 2-CPU machine; dbperf may use %d", cpus)
	}
	t.Parallel()
	results := filepath.Join(t.TempDir(), "r.db")
	work := serverWorkdir(t)
	code, out, stderr := runCLI(t, nil, "sweep", "insertbench", "--engine", "postgres", "--profiles", "a=default,b=default",
		"--design", "duet", "--duet-placement", "role", "--scale", "tiny", "--rows", "5000", "--steps", "l.i0,qp100",
		"--time", "1", "--repeat", "2", "--label", "pl", "--load-once", "--same-data", "--results", results,
		"--workdir", work, "--keep") // the servers' logs, read below
	if code != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "--same-data: default/a, default/b now run on servers started from a copy of default/a's data") {
		t.Errorf("no copy said:\n%s", out)
	}
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Results(context.Background(), []int64{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	byBlock := map[string]map[string]bool{} // block → cpus params of its runs
	dsns := map[string]string{}             // block and label → the run's server (redacted DSN)
	started := map[string]time.Time{}       // block and label → the run's server's start
	var dataDirs []string                   // the servers' (--keep: removed with work)
	for _, r := range runs {
		b := fmt.Sprint(r.Params[store.ParamBlock])
		at, err := time.Parse(time.RFC3339Nano, r.Env[managed.EnvServerStarted])
		if err != nil {
			t.Errorf("run %d: %s: %v", r.ID, managed.EnvServerStarted, err)
		}
		started[b+" "+r.Label] = at
		if d := r.Env["data_dir"]; d != "" && !slices.Contains(dataDirs, d) {
			dataDirs = append(dataDirs, d)
		}
		// Each point's servers in its dir of --workdir, the copy's in that dir's same-data.
		wantDir := filepath.Join(work, strings.ReplaceAll(strings.TrimPrefix(r.Label, "pl/"), "/", "-"))
		if b == "2" {
			wantDir = filepath.Join(wantDir, "same-data")
		}
		if d := r.Env["data_dir"]; filepath.Dir(filepath.Dir(d)) != wantDir {
			t.Errorf("run %d (%s, block %s): data dir %q, want one in %s", r.ID, r.Label, b, d, wantDir)
		}
		if copied := r.Params[store.ParamSameData] == true; copied != (b == "2") {
			t.Errorf("run %d of block %s: same_data %v", r.ID, b, r.Params[store.ParamSameData])
		}
		dsns[b+" "+r.Label] = r.EngineSettings["dbperf.dsn"]
		if byBlock[b] == nil {
			byBlock[b] = map[string]bool{}
		}
		byBlock[b][fmt.Sprint(r.Params[store.ParamCPUs])] = true
	}
	want := map[string]bool{"clients 0, server 1": true, "clients 1, server 0": true}
	seen := map[string]bool{}
	for b, cs := range byBlock {
		if len(cs) != 1 {
			t.Errorf("block %s: the points ran on %v, want one placement for both", b, cs)
		}
		for c := range cs {
			if !want[c] {
				t.Errorf("block %s: cpus %q, want one of %v", b, c, want)
			}
			seen[c] = true
		}
	}
	if len(byBlock) != 2 || len(seen) != 2 {
		t.Errorf("placements by block %v: want blocks 1 and 2 on the two placements", byBlock)
	}
	// Each run stores its server's start: the sweep opens its points in order, the
	// copies too.
	for _, b := range []string{"1", "2"} {
		if a, bb := started[b+" pl/default/a"], started[b+" pl/default/b"]; !a.Before(bb) {
			t.Errorf("block %s: a's server started at %v, b's at %v: want a's first", b, a, bb)
		}
	}
	// Once a block's servers are up (block 1's, then the copies), the sweep reloads them
	// at once, so their autovacuum launchers run on one clock: each of the four servers
	// logged the reload, each pair within a moment of each other.
	var reloads []time.Time
	for _, d := range dataDirs {
		l := filepath.Join(filepath.Dir(d), "postgres.log")
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, "received SIGHUP") || len(line) < 23 {
				continue
			}
			at, err := time.Parse("2006-01-02 15:04:05.000", line[:23])
			if err != nil {
				t.Fatalf("%s: %q: %v", l, line, err)
			}
			reloads = append(reloads, at)
		}
	}
	slices.SortFunc(reloads, time.Time.Compare)
	t.Logf("%d servers, reloads at %v", len(dataDirs), reloads)
	if len(dataDirs) != 4 || len(reloads) != 4 || reloads[1].Sub(reloads[0]) > 200*time.Millisecond || reloads[3].Sub(reloads[2]) > 200*time.Millisecond {
		t.Errorf("%d servers, reloads at %v: want one reload in each of 4, each block's two within 200 ms", len(dataDirs), reloads)
	}
	for _, l := range []string{"pl/default/a", "pl/default/b"} {
		if d1, d2 := dsns["1 "+l], dsns["2 "+l]; d1 == "" || d1 == d2 {
			t.Errorf("%s: block 1's server %q, block 2's %q: want a new server after the copy", l, d1, d2)
		}
	}
}

// TestSweepInstancesPostgres: with --load-once --instances 2 over 4 blocks, blocks 3 and 4
// run on new servers (instance 2), each started from a copy of its own point's data, in
// the point's --workdir dir's instance-2; every run stores its instance, and the sweep's
// report pairs by instance and shows the servers' share of the variance.
func TestSweepInstancesPostgres(t *testing.T) {
	needServer(t, "postgres")
	t.Parallel()
	results := filepath.Join(t.TempDir(), "r.db")
	work := serverWorkdir(t)
	code, out, stderr := runCLI(t, nil, "sweep", "insertbench", "--engine", "postgres", "--profiles", "a=default,b=default",
		"--scale", "tiny", "--rows", "5000", "--steps", "l.i0,qp100", "--time", "1", "--slice", "0.5", "--repeat", "4",
		"--label", "in", "--load-once", "--instances", "2", "--results", results, "--workdir", work)
	if code != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "--instances: default/a, default/b now run on server instance 2 of 2") {
		t.Errorf("no renewal said:\n%s", out)
	}
	if !strings.Contains(out, "instances  slices/block") {
		t.Errorf("the variance table has no instances:\n%s", out)
	}
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all, err := st.Runs(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range all {
		ids = append(ids, r.ID)
	}
	runs, err := st.Results(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	started := map[string]time.Time{} // instance and label → the server's start
	for _, r := range runs {
		b, _ := store.IntParam(r.Params[store.ParamBlock])
		inst, _ := store.IntParam(r.Params[store.ParamInstance])
		want := 1 + (b-1)/2
		if inst != want {
			t.Errorf("run %d of block %d: instance %v, want %d", r.ID, b, r.Params[store.ParamInstance], want)
		}
		wantDir := filepath.Join(work, strings.ReplaceAll(strings.TrimPrefix(r.Label, "in/"), "/", "-"))
		if want == 2 {
			wantDir = filepath.Join(wantDir, "instance-2")
		}
		if d := r.Env["data_dir"]; filepath.Dir(filepath.Dir(d)) != wantDir {
			t.Errorf("run %d (%s, block %d): data dir %q, want one in %s", r.ID, r.Label, b, d, wantDir)
		}
		for _, s := range r.Steps {
			if s.Result.Status != "ok" {
				t.Errorf("run %d (%s, block %d): %s %s %s", r.ID, r.Label, b, s.Result.Name, s.Result.Status, s.Result.Error)
			}
		}
		at, err := time.Parse(time.RFC3339Nano, r.Env[managed.EnvServerStarted])
		if err != nil {
			t.Fatalf("run %d: %s: %v", r.ID, managed.EnvServerStarted, err)
		}
		key := fmt.Sprintf("%d %s", inst, r.Label)
		if was, ok := started[key]; ok && !was.Equal(at) {
			t.Errorf("%s: servers started at %v and %v: want one server per instance", key, was, at)
		}
		started[key] = at
	}
	for _, l := range []string{"in/default/a", "in/default/b"} {
		if s1, s2 := started["1 "+l], started["2 "+l]; s1.IsZero() || !s2.After(s1) {
			t.Errorf("%s: instance 1's server started at %v, instance 2's at %v: want a later one", l, s1, s2)
		}
	}
}

// duetCPUCount is how many CPUs dbperf may run on here (its duet splits them).
func duetCPUCount(t *testing.T) int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	return set.Count()
}
