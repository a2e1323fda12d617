package faulttest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/fleet/parts"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/server"
	pgserver "github.com/dbperf/dbperf/internal/server/postgres"
	"github.com/dbperf/dbperf/internal/store"
)

// The fault matrix (issue 40, What to build 2). Each cell runs `dbperf run insertbench
// --scale tiny --steps l.i0,qp100 --time 3` on one managed topology, kills one process
// role with SIGKILL about a second into one step (l.i0, a load step, or qp100, a timed
// one) and checks that:
//   - the cell ends (dbperf exited and nothing of the cell is left running) within the
//     rest of the step (3 s for qp100, none for l.i0, whose load the kill ends) plus the
//     topology's grace, counted from the kill;
//   - dbperf exits 1 and its stderr names the failing node or part (the role's pattern),
//     or, dbperf itself killed, its run reads interrupted;
//   - no server, part or agent's command of the cell is left running;
//   - nothing is stored as ok that was not measured whole: in every run of the cell the
//     killed step and those after it are not ok, nor is the run (the surviving part's
//     own run excepted, when an agent is killed: the merged run is the measurement), and
//     the steps before it are kept ok.
//
// docs/engines.md and docs/fleet.md ("when something fails") list each cell. Adding a
// topology adds a row to topologies, not code, as long as it kills the roles victim knows.

// topology is a row of the matrix: how dbperf runs, and the process roles killed.
type topology struct {
	name string
	// engine is the server it needs installed: its cells are skipped without it.
	engine string
	// args are the run's flags beyond the matrix's own.
	args []string
	// agents > 0: the run is split over that many agents (--agents), each of the cell's
	// own class, on a PostgreSQL results store the topology's cells share.
	agents int
	// loadRows is --rows of a cell killed in l.i0 (still loading at the kill); timedRows
	// of one killed in qp100 (a short l.i0 first).
	loadRows, timedRows int
	// grace is how long after the kill (beyond the rest of a timed step) a cell may take
	// to end: the failure's detection and the servers' shutdown.
	grace time.Duration
	// roles are the processes killed, each with what dbperf's stderr must say.
	roles []role
}

// role is a process killed, and what the user sees.
type role struct {
	// name is what victim finds: server (a PostgreSQL primary or single server), standby,
	// node (the last Galera node), agent (the agent running part 2), dbperf (itself).
	name string
	// says is a regexp dbperf's stderr must match ({pid} the victim's pid, {step} the
	// step); "" for dbperf itself, killed: its run must read interrupted instead.
	says string
	// stored, when not "", is a regexp (as says) the killed step's stored error must
	// match; that step and its run must then be stored failed.
	stored string
}

var topologies = []topology{
	{name: "postgres", engine: "postgres", args: []string{"--engine", "postgres", "--managed"},
		loadRows: 2000000, timedRows: 20000, grace: 10 * time.Second,
		roles: []role{
			{name: "server", says: `step {step} failed: the server \(pid {pid}\) is gone: `},
			{name: "dbperf", says: ""},
		}},
	{name: "postgres-cluster3", engine: "postgres", args: []string{"--engine", "postgres", "--managed", "--cluster", "3"},
		loadRows: 2000000, timedRows: 20000, grace: 20 * time.Second,
		roles: []role{
			{name: "server", says: `step {step} failed: node 0 \(primary, pid {pid}\) died during {step}`},
			{name: "standby", says: `step {step} failed: node [12] \(standby, pid {pid}\) died during {step}`,
				stored: `node [12] \(standby, pid {pid}\) died during {step}`},
			{name: "dbperf", says: ""},
		}},
	{name: "galera3", engine: "mariadb",
		args:     []string{"--engine", "mariadb", "--managed", "--cluster", "3", "--profile", "galera"},
		loadRows: 60000, timedRows: 20000, grace: 30 * time.Second,
		roles: []role{
			{name: "node", says: `step {step} failed: .*node 2 \(node, pid {pid}\) died during {step}`,
				stored: `node 2 \(node, pid {pid}\) died during {step}`},
			{name: "dbperf", says: ""},
		}},
	{name: "postgres-agents2", engine: "postgres", args: []string{"--engine", "postgres", "--managed", "--clients", "2"},
		agents: 2, loadRows: 200000, timedRows: 20000, grace: 45 * time.Second,
		roles: []role{
			{name: "agent", says: `run \d+: not whole: part 2 \(job \d+\) discarded: its one attempt did not finish`},
			{name: "server", says: `run \d+: a part's step failed`},
			{name: "dbperf", says: ""},
		}},
}

// steps are the matrix's columns: the step killed in, and the time left of it at the kill
// (a load step ends at the kill; a timed one may run to its end).
var steps = []struct {
	name string
	rest time.Duration
}{{"l.i0", 0}, {"qp100", 3 * time.Second}}

// cell is one topology × role × step, as it ran.
type cell struct {
	topo  topology
	role  role
	step  string
	rest  time.Duration
	name  string
	dir   string
	class string
	errs  []string
	logs  []string
	wall  time.Duration // from the start of the cell's dbperf to the end of the cell
	ended time.Duration // from the kill to the cell's end
	// early says the run ended before the kill (its setup failed): nothing of the fault
	// was tested, and the cell is run once more (retry, a directory and class of its own).
	early bool
	retry struct {
		dir, class string
	}
}

func (c *cell) errorf(format string, a ...any) { c.errs = append(c.errs, fmt.Sprintf(format, a...)) }
func (c *cell) logf(format string, a ...any)   { c.logs = append(c.logs, fmt.Sprintf(format, a...)) }

// TestFaultMatrix runs every cell at once (their own directories, ports and agent
// classes), DBPERF_FAULTS_PARALLEL at a time (default all), then reports each as a
// subtest. DBPERF_FAULTS_CELLS, a regexp, runs only the cells whose name it matches.
func TestFaultMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("starts database servers and kills them")
	}
	bin := dbperfBinary(t)
	var cells []*cell
	for _, tp := range topologies {
		for _, r := range tp.roles {
			for _, s := range steps {
				cells = append(cells, &cell{topo: tp, role: r, step: s.name, rest: s.rest,
					name: tp.name + "/" + r.name + "/" + s.name, class: fmt.Sprintf("fm%d", len(cells))})
			}
		}
	}
	sh := &shared{}
	defer sh.close()
	limit := len(cells)
	if n, err := strconv.Atoi(os.Getenv("DBPERF_FAULTS_PARALLEL")); err == nil && n > 0 {
		limit = n
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	start := time.Now()
	skipped := map[*cell]string{}
	var only *regexp.Regexp
	if v := os.Getenv("DBPERF_FAULTS_CELLS"); v != "" {
		only = regexp.MustCompile(v)
	}
	for _, c := range cells {
		if why := skipWhy(c.topo); why != "" || (only != nil && !only.MatchString(c.name)) {
			if why == "" {
				why = "not in DBPERF_FAULTS_CELLS"
			}
			skipped[c] = why
			continue
		}
		c.dir = tempDir(t)
		c.retry.dir, c.retry.class = tempDir(t), c.class+"r"
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			runCell(bin, sh, c)
			if c.early {
				// Logged, so that a setup that fails often is seen.
				first := strings.Join(append(c.logs, c.errs...), "\n")
				c.errs, c.logs, c.early = nil, []string{"first attempt ended before the kill (setup failed), run again:\n" + first}, false
				c.dir, c.class = c.retry.dir, c.retry.class
				runCell(bin, sh, c)
			}
		}()
	}
	wg.Wait()
	total := time.Since(start)
	for _, c := range cells {
		t.Run(c.name, func(t *testing.T) {
			if why, ok := skipped[c]; ok {
				t.Skip(why)
			}
			for _, l := range c.logs {
				t.Log(l)
			}
			t.Logf("wall %.1f s, ended %.1f s after the kill (bound %.0f s)", c.wall.Seconds(), c.ended.Seconds(), (c.rest + c.topo.grace).Seconds())
			for _, e := range c.errs {
				t.Error(e)
			}
		})
	}
	t.Logf("the matrix: %d cells run, %d skipped, in %.1f s", len(cells)-len(skipped), len(skipped), total.Seconds())
}

// skipWhy says why a topology's cells do not run here, "" when they do.
func skipWhy(tp topology) string {
	bin := map[string]string{"postgres": "/usr/lib/postgresql/*/bin/postgres", "mariadb": "/usr/sbin/mariadbd"}[tp.engine]
	if m, _ := filepath.Glob(bin); len(m) == 0 {
		return fmt.Sprintf("%s is not installed (make test installs it)", tp.engine)
	}
	return ""
}

// runCell runs one cell and records what it saw in c.
func runCell(bin string, sh *shared, c *cell) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rows := c.topo.timedRows
	if c.rest == 0 {
		rows = c.topo.loadRows
	}
	args := append([]string{"run", "insertbench", "--scale", "tiny", "--rows", strconv.Itoa(rows), "--steps", "l.i0,qp100",
		"--time", "3", "--workdir", filepath.Join(c.dir, "w"), "--profiles-dir", "../../profiles", "--label", c.class}, c.topo.args...)
	env := append(os.Environ(), "TMPDIR="+c.dir)
	var st *store.Store
	var agents *agentSet
	if c.topo.agents > 0 {
		ss, err := sh.store(ctx)
		if err != nil {
			c.errorf("the agents' store: %v", err)
			return
		}
		st = ss.st
		env = append(env, "DBPERF_RESULTS=@"+ss.dsnFile)
		if agents, err = startAgents(ctx, bin, ss, c); err != nil {
			c.errorf("%v", err)
			return
		}
		defer agents.stop()
		defer func() {
			if len(c.errs) > 0 {
				for i, l := range agents.logs {
					c.logf("agent %d's log:\n%s", i+1, l.String())
				}
			}
		}()
		args = append(args, "--agents", strconv.Itoa(c.topo.agents), "--class", c.class)
	} else {
		args = append(args, "--results", filepath.Join(c.dir, "r.db"))
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		c.errorf("start dbperf: %v", err)
		return
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
	}()
	victim, err := killInStep(ctx, c, cmd.Process.Pid, st, agents, exited)
	if errors.Is(err, errEnded) {
		c.early = true
	}
	if err != nil {
		c.errorf("%v\n%s", err, stderr.String())
		return
	}
	killed := time.Now()
	c.logf("killed %s (pid %d) in %s, its first interval stored", c.role.name, victim, c.step)
	bound := c.rest + c.topo.grace
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-time.After(bound + 30*time.Second):
		c.errorf("dbperf still ran %s after the kill (bound %s)", time.Since(killed).Round(time.Second), bound)
		_ = cmd.Process.Signal(os.Interrupt)
		waitErr = <-exited
	}
	left := waitGone(c.dir, killed.Add(bound+10*time.Second))
	c.ended, c.wall = time.Since(killed), time.Since(t0)
	if c.ended > bound {
		c.errorf("ended %.1f s after the kill: bound %s (the step's rest %s + grace %s)", c.ended.Seconds(), bound, c.rest, c.topo.grace)
	}
	if len(left) > 0 {
		c.errorf("left running: %s", strings.Join(left, "; "))
	}
	checkSaid(c, victim, waitErr, stderr.String())
	checkStored(ctx, c, st, killed, victim)
}

// errEnded is killInStep's when dbperf ended before there was anything to kill.
var errEnded = errors.New("nothing killed")

// killInStep waits until every run of the cell (the parts, over agents) has stored its
// first interval of c.step (its load ran about a second), kills the role's process and
// returns its pid.
func killInStep(ctx context.Context, c *cell, self int, st *store.Store, agents *agentSet, exited <-chan error) (int, error) {
	need := max(1, c.topo.agents)
	for {
		select {
		case err := <-exited:
			return 0, fmt.Errorf("dbperf ended (%v) before its runs reached %s: %w", err, c.step, errEnded)
		case <-ctx.Done():
			return 0, fmt.Errorf("the runs did not reach %s", c.step)
		case <-time.After(100 * time.Millisecond):
		}
		if n := stepsStarted(ctx, c, st); n >= need {
			break
		}
	}
	v := victim(ctx, c, self, agents)
	if v == 0 {
		return 0, fmt.Errorf("no %s process to kill in %s", c.role.name, c.step)
	}
	if err := syscall.Kill(v, syscall.SIGKILL); err != nil {
		return 0, fmt.Errorf("kill %s (pid %d): %w", c.role.name, v, err)
	}
	return v, nil
}

// stepsStarted counts the cell's runs (not a merged run) with an interval of c.step
// stored.
func stepsStarted(ctx context.Context, c *cell, st *store.Store) int {
	if st == nil {
		db, err := sql.Open("sqlite3", "file:"+filepath.Join(c.dir, "r.db")+"?mode=ro")
		if err != nil {
			return 0
		}
		defer db.Close()
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(DISTINCT s.id) FROM steps s JOIN intervals i ON i.step_id = s.id
			WHERE s.name = ?`, c.step).Scan(&n); err != nil {
			return 0
		}
		return n
	}
	n := 0
	for _, r := range cellRuns(ctx, c, st) {
		if r.Env[parts.EnvPartOf] == "" {
			continue
		}
		for _, s := range r.Steps {
			if s.Result.Name == c.step && len(s.Intervals) > 0 {
				n++
			}
		}
	}
	return n
}

// victim is the pid of the cell's role: its dbperf (self), a server process under its
// directory, or the agent running part 2; 0 when there is none.
func victim(ctx context.Context, c *cell, self int, agents *agentSet) int {
	switch c.role.name {
	case "dbperf":
		return self
	case "agent":
		return agents.runningPart(ctx, 2)
	}
	var pids []int
	for _, p := range processes(c.dir) {
		switch {
		case filepath.Base(p.argv[0]) == "mariadbd" && c.role.name == "node":
			pids = append(pids, p.pid)
		case filepath.Base(p.argv[0]) == "postgres" && (c.role.name == "server" || c.role.name == "standby"):
			i := slices.Index(p.argv, "-D")
			if i < 0 || i+1 >= len(p.argv) {
				continue
			}
			_, err := os.Stat(filepath.Join(p.argv[i+1], "standby.signal"))
			if (err == nil) == (c.role.name == "standby") {
				pids = append(pids, p.pid)
			}
		}
	}
	if len(pids) == 0 {
		return 0
	}
	return slices.Max(pids) // the last node started
}

// checkSaid checks dbperf's exit and what it said.
func checkSaid(c *cell, victim int, waitErr error, stderr string) {
	var ee *exec.ExitError
	code := 0
	if errors.As(waitErr, &ee) {
		code = ee.ExitCode()
	}
	if c.role.says == "" {
		if ws, ok := waitStatus(ee); !ok || ws.Signal() != syscall.SIGKILL {
			c.errorf("dbperf: %v, want killed by SIGKILL", waitErr)
		}
		return
	}
	c.logf("exit %d: %s", code, firstLine(stderr))
	if code != 1 {
		c.errorf("exit %d, want 1:\n%s", code, stderr)
	}
	says := strings.NewReplacer("{pid}", strconv.Itoa(victim), "{step}", regexp.QuoteMeta(c.step)).Replace(c.role.says)
	if re := regexp.MustCompile(says); !re.MatchString(stderr) {
		c.errorf("stderr does not match %q:\n%s", re, stderr)
	}
}

func waitStatus(ee *exec.ExitError) (syscall.WaitStatus, bool) {
	if ee == nil {
		return 0, false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ws, ok
}

// checkStored checks the cell's runs: no step stored ok that was still running at the
// kill (nor any run holding one), the killed step not ok in some run, the steps before
// it kept ok, and dbperf itself killed, its run read interrupted. A part's step that
// ended before the kill (its store writes lagging when the other's interval showed) is
// whole, and may be ok.
func checkStored(ctx context.Context, c *cell, st *store.Store, killed time.Time, victim int) {
	if st == nil {
		var err error
		if st, err = store.Open(ctx, filepath.Join(c.dir, "r.db")); err != nil {
			c.errorf("open the results: %v", err)
			return
		}
		defer st.Close()
	}
	runs := cellRuns(ctx, c, st)
	hit := false
	for _, r := range runs {
		part := r.Env[parts.EnvPart]
		if c.role.name == "agent" && part == "1/2" {
			continue // the surviving part's own run: the merged run is the measurement
		}
		what := fmt.Sprintf("run %d (%s)", r.ID, r.Label)
		if c.role.name == "dbperf" && part == "" && r.Status != store.RunInterrupted {
			c.errorf("%s reads %s, want interrupted (its process is gone)", what, r.Status)
		}
		seen, cut := false, false
		for _, s := range r.Steps {
			res := s.Result
			end := res.StartedAt.Add(time.Duration(res.Seconds * float64(time.Second)))
			seen = seen || res.Name == c.step
			switch {
			case res.Status == metrics.StatusOK && end.After(killed):
				c.errorf("%s: step %s stored ok, running at the kill (it ended %s after)", what, res.Name, end.Sub(killed).Round(time.Millisecond))
			case !seen && res.Status != metrics.StatusOK:
				c.errorf("%s: step %s before the kill is %s, want it kept ok", what, res.Name, res.Status)
			case !seen && c.role.stored != "" && res.Audit.Status != "ok":
				c.errorf("%s: step %s before the kill: audit %s, want ok", what, res.Name, res.Audit.Status)
			}
			cut = cut || res.Status != metrics.StatusOK
			if res.Name == c.step {
				hit = hit || res.Status != metrics.StatusOK
				c.logf("%s: %s %s: %s", what, res.Name, res.Status, firstLine(res.Error))
				checkStoredError(c, what, victim, res, r.Status)
			}
		}
		if r.Status == store.RunOK && cut {
			c.errorf("%s stored ok with a step that is not", what)
		}
	}
	if !hit {
		c.errorf("no run has %s failed or interrupted (%d runs)", c.step, len(runs))
	}
}

// checkStoredError checks, for a role with a stored pattern, that the killed step and its
// run are stored failed and the step's error names the process killed.
func checkStoredError(c *cell, what string, victim int, res metrics.StepResult, run string) {
	if c.role.stored == "" {
		return
	}
	pat := strings.NewReplacer("{pid}", strconv.Itoa(victim), "{step}", regexp.QuoteMeta(c.step)).Replace(c.role.stored)
	if res.Status != metrics.StatusFailed || !regexp.MustCompile(pat).MatchString(res.Error) {
		c.errorf("%s: step %s stored %s, error %q: want failed, matching %q", what, res.Name, res.Status, res.Error, pat)
	}
	if run != store.RunFailed {
		c.errorf("%s stored %s, want failed", what, run)
	}
}

// cellRuns are the cell's runs: in its own SQLite store all of them; in the agents'
// shared store those labelled with its class (the merged run and its parts).
func cellRuns(ctx context.Context, c *cell, st *store.Store) []store.Run {
	var ids []int64
	labels := []string{c.class}
	for i := 1; i <= c.topo.agents; i++ {
		labels = append(labels, fmt.Sprintf("%s/part-%d", c.class, i))
	}
	for _, l := range labels {
		sums, err := st.Runs(ctx, store.RunFilter{Label: l})
		if err != nil {
			return nil
		}
		for _, s := range sums {
			ids = append(ids, s.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	runs, err := st.Results(ctx, ids)
	if err != nil {
		return nil
	}
	return runs
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// proc is a process of the machine.
type proc struct {
	pid  int
	argv []string
}

// processes are the live processes (not zombies) whose command line names a file under
// dir (dir+"/": another cell's directory may begin with this one's name).
func processes(dir string) []proc {
	dir = filepath.Clean(dir) + "/"
	var out []proc
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(dir)) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && (st[i+2] == 'Z' || st[i+2] == 'X') {
				continue
			}
		}
		out = append(out, proc{pid: pid, argv: strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")})
	}
	return out
}

// waitGone waits until no process names dir, or until deadline; it returns those left.
func waitGone(dir string, deadline time.Time) []string {
	for {
		ps := processes(dir)
		if len(ps) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var out []string
			for _, p := range ps {
				out = append(out, fmt.Sprintf("pid %d: %s", p.pid, strings.Join(p.argv, " ")))
			}
			return out
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tempDir is a directory of the test readable by a server's unprivileged user.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "dbperf-faults-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// dbperfBinary is $DBPERF_TEST_BIN (make test sets it), else dbperf built for the test.
func dbperfBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("DBPERF_TEST_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("DBPERF_TEST_BIN: %v", err)
		}
		return bin
	}
	bin := filepath.Join(t.TempDir(), "dbperf")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/dbperf").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// shared is what the cells of the agents' topology share: one PostgreSQL results store
// (its queue), started by the first cell that needs it.
type shared struct {
	once sync.Once
	s    *sharedStore
	err  error
}

type sharedStore struct {
	in      *server.Instance
	dir     string
	dsnFile string
	st      *store.Store
	fl      *fleet.Fleet
}

func (sh *shared) store(ctx context.Context) (*sharedStore, error) {
	sh.once.Do(func() {
		dir, err := os.MkdirTemp("", "dbperf-faults-store-")
		if err != nil {
			sh.err = err
			return
		}
		_ = os.Chmod(dir, 0o755)
		s := &sharedStore{dir: dir, dsnFile: filepath.Join(dir, "store.dsn")}
		sh.s = s
		// Every agent, coordinator and part of the cells holds connections to it: the
		// default profile's 100 are too few.
		conf, err := os.ReadFile("../../profiles/postgres/default.conf")
		if err != nil {
			sh.err = err
			return
		}
		conf = regexp.MustCompile(`(?m)^max_connections = \d+`).ReplaceAll(conf, []byte("max_connections = 500"))
		profiles := filepath.Join(dir, "profiles")
		if err := os.MkdirAll(filepath.Join(profiles, "postgres"), 0o755); err != nil {
			sh.err = err
			return
		}
		if err := os.WriteFile(filepath.Join(profiles, "postgres", "store.conf"), conf, 0o644); err != nil {
			sh.err = err
			return
		}
		if s.in, err = pgserver.Start(ctx, server.Options{WorkDir: filepath.Join(dir, "pg"), Profile: "store", ProfilesDir: profiles}); err != nil {
			sh.err = fmt.Errorf("start the store: %w", err)
			return
		}
		if err := os.WriteFile(s.dsnFile, []byte(s.in.DSN+"\n"), 0o600); err != nil {
			sh.err = err
			return
		}
		// dbperf's schema first, then the queue's.
		if s.st, err = store.Open(ctx, s.in.DSN); err != nil {
			sh.err = err
			return
		}
		s.fl, sh.err = fleet.Open(ctx, s.in.DSN)
	})
	return sh.s, sh.err
}

func (sh *shared) close() {
	s := sh.s
	if s == nil {
		return
	}
	if s.fl != nil {
		s.fl.Close()
	}
	if s.st != nil {
		s.st.Close()
	}
	if s.in != nil {
		_ = s.in.Stop(context.Background())
	}
	os.RemoveAll(s.dir)
}

// agentSet are a cell's agents, of its own class.
type agentSet struct {
	ss    *sharedStore
	class string
	cmds  []*exec.Cmd
	logs  []*syncBuffer
}

// syncBuffer is a bytes.Buffer that a process's output and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startAgents starts the cell's agents and waits until they are registered.
func startAgents(ctx context.Context, bin string, ss *sharedStore, c *cell) (*agentSet, error) {
	as := &agentSet{ss: ss, class: c.class}
	for range c.topo.agents {
		cmd := exec.Command(bin, "agent", "--class", c.class, "--lease", "3s", "--heartbeat", "500ms")
		cmd.Env = append(os.Environ(), "DBPERF_RESULTS=@"+ss.dsnFile, "TMPDIR="+c.dir)
		log := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = log, log
		as.logs = append(as.logs, log)
		if err := cmd.Start(); err != nil {
			as.stop()
			return nil, fmt.Errorf("start an agent: %w", err)
		}
		as.cmds = append(as.cmds, cmd)
	}
	for {
		infos, err := ss.fl.Agents(ctx)
		if err != nil {
			as.stop()
			return nil, err
		}
		n := 0
		for _, a := range infos {
			if a.Class == c.class && a.State == "idle" {
				n++
			}
		}
		if n == len(as.cmds) {
			return as, nil
		}
		select {
		case <-ctx.Done():
			as.stop()
			return nil, fmt.Errorf("%d of %d agents of class %s registered", n, len(as.cmds), c.class)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// runningPart is the pid of the agent of the set running part i of a run, 0 if none.
func (as *agentSet) runningPart(ctx context.Context, i int) int {
	jobs, err := as.ss.fl.Jobs(ctx, "")
	if err != nil {
		return 0
	}
	infos, err := as.ss.fl.Agents(ctx)
	if err != nil {
		return 0
	}
	for _, j := range jobs {
		if j.Args.Class != as.class || !strings.HasSuffix(j.Args.Part, fmt.Sprintf("/%d/%d", i, len(as.cmds))) {
			continue
		}
		for _, a := range infos {
			if a.Class == as.class && a.JobID != nil && *a.JobID == j.ID {
				return a.PID
			}
		}
	}
	return 0
}

// stop kills the agents (their commands are the cell's to have ended).
func (as *agentSet) stop() {
	for _, cmd := range as.cmds {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}
