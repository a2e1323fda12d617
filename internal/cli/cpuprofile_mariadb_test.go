package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/store"
)

// TestRunCPUProfileMariaDB: dbperf run --cpu-profile --explain on a managed MariaDB
// (Debian's 10.11, InnoDB). Each worker's connection thread (performance_schema.threads.
// THREAD_OS_ID) is its role: the insert connection is under the SQL layer's insert
// (mysql_insert, handler::ha_write_row: exported; InnoDB's own functions, hidden in
// Debian's stripped binary, read "[mariadbd]"), the delete connection in l.i1 under
// mysql_delete; the server's background threads are named by their performance_schema.
// threads NAME (InnoDB's purge runs in its thread pool: background:innodb/thread_pool_thread).
//
// It is also issue 25's acceptance of dbperf explain on MariaDB: a second run whose
// profile differs from the first's (the built-in default) by one setting with a known CPU
// cost, optimizer_trace=enabled=on (the server writes a JSON trace of the optimizer's
// work for every SELECT, UPDATE and DELETE it optimizes: Json_writer::…, exported; it
// about doubles a point query's CPU). In qp100 explain must show the query role's CPU per
// op grown, the trace's functions among its top 3 changes by self CPU, and among its top
// 3 by total CPU once the trace's callers (whose totals hold it) are left out, or else
// the query role first among the roles; performance_schema must show the point query's
// execution time per call larger; every step stores its statements and waits. (The
// general log, the obvious candidate, costs the insert connection of l.i0 only ~7%, 100
// rows a statement: less than this machine's run-to-run noise, so explain cannot be
// asked to put it first; see docs/profiles.md.)
//
// Then a run on a server started with performance_schema=OFF: no worker roles, the
// server's samples are the role server, the step's note says why, and --explain records
// nothing, saying why.
func TestRunCPUProfileMariaDB(t *testing.T) {
	needPerfMariaDB(t)
	// Serial (no t.Parallel): it asserts a known change of CPU per op, which another test
	// running beside it would blur.
	dir := t.TempDir()
	profDir := filepath.Join(dir, "prof")
	results := filepath.Join(dir, "r.db")
	// Profiles of the user's own: "trace" is the built-in default plus the optimizer
	// trace; "nops" turns performance_schema off.
	profiles := filepath.Join(dir, "profiles")
	if err := os.MkdirAll(filepath.Join(profiles, "mariadb"), 0o755); err != nil {
		t.Fatal(err)
	}
	def, _, err := server.ReadProfile("", "mariadb", "default")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"trace": def + "\n[mysqld]\noptimizer_trace=enabled=on\n",
		"nops":  "[mysqld]\nperformance_schema=OFF\n",
	} {
		if err := os.WriteFile(filepath.Join(profiles, "mariadb", name+".cnf"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// 999 Hz: the background threads get a handful of samples in l.i1 (~1 s here). Half
	// the tiny scale's rows and 0.3 s of qp100 keep each run near 7 s.
	env := map[string]string{"DBPERF_CPU_PROFILE_HZ": "999"}
	for _, profile := range []string{"default", "trace"} {
		start := time.Now()
		code, out, errOut := runCLI(t, env, "run", "insertbench", "--engine", "mariadb", "--managed",
			"--profiles-dir", profiles, "--profile", profile, "--label", profile,
			"--scale", "tiny", "--rows", "50000", "--steps", "l.i0,l.x,l.i1,qp100", "--time", "0.3", "--quiet",
			"--results", results, "--cpu-profile", profDir, "--explain")
		if code != 0 {
			t.Fatalf("run %s: exit %d\n%s\n%s", profile, code, out, errOut)
		}
		t.Logf("run %s: %.1f s", profile, time.Since(start).Seconds())
	}
	names := foldedNames(t, filepath.Join(profDir, "run-1"))
	t.Logf("profiles: %v", names)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(profDir, "run-1", name))
		if err != nil {
			t.Fatalf("%v (have %v)", err, names)
		}
		return string(b)
	}
	hasFrames := func(what, folded string, fns ...string) {
		t.Helper()
		for _, fn := range fns {
			if !strings.Contains(folded, ";"+fn+";") && !strings.Contains(folded, ";"+fn+" ") {
				t.Errorf("%s: no stack with %s:\n%.4000s", what, fn, folded)
			}
		}
	}
	hasFrames("l.i0 insert role", read("l.i0.insert.folded"), "do_command", "mysql_execute_command", "mysql_insert", "handler::ha_write_row")
	hasFrames("l.i1 insert role", read("l.i1.insert.folded"), "mysql_insert", "handler::ha_write_row")
	hasFrames("l.i1 delete role", read("l.i1.delete.folded"), "mysql_execute_command", "mysql_delete", "handler::ha_delete_row")
	read("l.x.index.folded")
	read("l.i1.client.folded")
	innodb := false
	for _, n := range names {
		if strings.Contains(n, "background:mariadbd") {
			// Threads performance_schema does not list (InnoDB's io_uring completion
			// thread) keep the process's name; say so, it is not an error.
			t.Logf("unnamed server threads: %s", n)
		}
		innodb = innodb || strings.HasPrefix(n, "l.i1.background:innodb_")
	}
	if !innodb {
		t.Errorf("l.i1: no background:innodb/… role in %v", names)
	}

	// What --explain stored: statements and waits in every step of both runs.
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Results(context.Background(), []int64{1, 2})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if e := r.Env["explain"]; !strings.Contains(e, "performance_schema") || strings.Contains(e, "none: ") {
			t.Errorf("run %d: env explain %q", r.ID, e)
		}
		for _, s := range r.Steps {
			// (Other notes may come: "machine busy CPU … is below dbperf's and the
			// server's" on this shared machine.)
			if n := s.Result.Note; strings.Contains(n, "explain:") || strings.Contains(n, "cpu profile:") {
				t.Errorf("run %d step %s: note %q", r.ID, s.Result.Name, n)
			}
			if len(s.Profiles) == 0 || len(s.Statements) == 0 || len(s.Waits) == 0 {
				t.Errorf("run %d step %s: %d profiles, %d statements, %d waits", r.ID, s.Result.Name, len(s.Profiles), len(s.Statements), len(s.Waits))
			}
		}
	}

	// The optimizer trace's cost in qp100.
	s := explainOf(t, results, "default", "trace", "qp100", 60)
	var order []string
	qi, fg := -1, -1 // the query role's index, and the first foreground role's
	for i, r := range s.Roles {
		order = append(order, fmt.Sprintf("%s %+.1f", r.Role, r.Delta))
		if r.Role == "query" {
			qi = i
		}
		if fg < 0 && !strings.HasPrefix(r.Role, "background:") {
			fg = i
		}
	}
	t.Logf("roles by their change of CPU µs/op: %v", order)
	if qi < 0 {
		t.Fatalf("qp100: no query role: %v", order)
	}
	q := s.Roles[qi]
	if q.Delta <= 0 {
		t.Errorf("the query role's CPU per op fell (%+.1f µs/op) with the optimizer trace on", q.Delta)
	}
	// The trace's own frames: its JSON writer, its context (Opt_trace_…, and
	// opt_trace_print_expanded_query, which prints the query into it) and the range
	// optimizer's trace_basic_info.
	isTrace := func(fn string) bool {
		return strings.HasPrefix(fn, "Json_writer") || strings.HasPrefix(fn, "Single_line_formatting_helper") ||
			strings.Contains(strings.ToLower(fn), "opt_trace") || strings.Contains(fn, "::trace_")
	}
	callers, under := traceFrames(t, filepath.Join(profDir, "run-2", "qp100.query.folded"), isTrace)
	// topTrace: the first n changes of fns (the trace's callers left out; with chains, a
	// call chain, frames whose totals are the same in both runs, counted once), and
	// whether one of them is the trace's and grew.
	topTrace := func(fns []explainFunction, n int, chains bool) (top []string, ok bool) {
		var last explainFunction
		for _, f := range fns {
			if callers[f.Function] {
				continue
			}
			if chains && len(top) > 0 && f.Base == last.Base && f.New == last.New {
				top[len(top)-1] += " = " + f.Function
			} else if len(top) == n {
				break
			} else {
				top = append(top, fmt.Sprintf("%+.1f %s", f.Delta, f.Function))
			}
			last = f
			ok = ok || (under[f.Function] && f.Delta > 0)
		}
		return top, ok
	}
	// By self CPU the trace's functions (String::append, under Json_writer…, first) lead
	// the change.
	selfTop, selfOK := topTrace(q.Self, 3, false)
	t.Logf("the query role's top 3 changes by self CPU: %v", selfTop)
	if !selfOK {
		t.Errorf("no optimizer trace function (Json_writer…, or what only it calls) grew among the query role's top 3 changes by self CPU: %v", selfTop)
	}
	// By total CPU the frames every stack passes through and the trace's callers
	// (JOIN::optimize, SQL_SELECT::test_quick_select) change at least as much as the
	// trace (their totals hold its samples): left out. The query role is usually first
	// among the roles that serve a connection, not always: the client role (the test
	// process) swings by tens of µs/op on this shared machine. Background roles are not
	// counted: qp100 runs a fixed time and the trace halves its queries, so the CPU of
	// background work during the step (InnoDB's purge of l.i1's deletes,
	// background:innodb/thread_pool_thread) doubles per query, and how much purge is
	// left is the engine's own timing (+79 µs/op once, above the query role's +58). And
	// the query connection's sends to the client (a wake-up, dearer in this VM when the
	// client sleeps, as it does more while the server traces) can outgrow a trace
	// function by total. Either one suffices.
	totalTop, totalOK := topTrace(q.Total, 3, true)
	t.Logf("the query role's top 3 changes by total CPU, the trace's %d callers left out: %v", len(callers), totalTop)
	if qi != fg && !totalOK {
		t.Errorf("qp100: the query role is not first among the roles that serve a connection (%v), and no optimizer trace function grew among its top 3 changes by total CPU but the trace's callers: %v", order, totalTop)
	}
	points := 0
	for _, st := range s.Statements {
		if strings.HasPrefix(st.Query, "SELECT transactionid") && strings.Contains(st.Query, " IN (") {
			points++
			t.Logf("point query: exec µs per call %.1f → %.1f; query role CPU %+.1f µs/op", st.Base.Exec, st.New.Exec, q.Delta)
			if st.Base.Exec <= 0 || st.New.Exec <= st.Base.Exec {
				t.Errorf("point query %q: exec µs per call %.1f → %.1f, want it larger with the trace", st.Query, st.Base.Exec, st.New.Exec)
			}
		}
	}
	if points != 1 || len(s.Waits) == 0 {
		t.Errorf("explain shows %d point queries, %d waits: %+v", points, len(s.Waits), s)
	}

	// performance_schema=OFF, as a user turns it off: a profile of their own.
	offResults := filepath.Join(dir, "off.db")
	offDir := filepath.Join(dir, "prof-off")
	start := time.Now()
	code, out, errOut := runCLI(t, env, "run", "insertbench", "--engine", "mariadb", "--managed",
		"--profile", "nops", "--profiles-dir", profiles,
		"--scale", "tiny", "--rows", "50000", "--steps", "l.i0", "--quiet",
		"--results", offResults, "--cpu-profile", offDir, "--explain")
	if code != 0 {
		t.Fatalf("performance_schema=OFF: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("run nops: %.1f s", time.Since(start).Seconds())
	names = foldedNames(t, filepath.Join(offDir, "run-1"))
	t.Logf("profiles with performance_schema=OFF: %v", names)
	if want := []string{"l.i0.client.folded", "l.i0.server.folded"}; strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("performance_schema=OFF: profiles %v, want %v (no worker role, the server's samples as role server)", names, want)
	}
	code, out, errOut = runCLI(t, nil, "report", "--results", offResults, "--format", "json")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	var rep struct {
		Runs []struct {
			Env   map[string]string `json:"env"`
			Steps []struct {
				Name string `json:"name"`
				Note string `json:"note"`
			} `json:"steps"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report JSON: %v", err)
	}
	if len(rep.Runs) != 1 || len(rep.Runs[0].Steps) != 1 {
		t.Fatalf("report: %+v", rep)
	}
	if e := rep.Runs[0].Env["explain"]; !strings.Contains(e, "none: performance_schema is off") {
		t.Errorf("performance_schema=OFF: env explain %q, want none and why", e)
	}
	note := rep.Runs[0].Steps[0].Note
	t.Logf("performance_schema=OFF: env explain %q; l.i0's note %q", rep.Runs[0].Env["explain"], note)
	const want = "cpu profile: roles absent, the server's samples are role server: mariadb session pid: performance_schema is off on this server"
	if !strings.Contains(note, want) || strings.Count(note, "cpu profile:") != 1 {
		t.Errorf("l.i0's note %q: want it to say once %q", note, want)
	}
}

// traceFrames reads a folded profile's stacks that hold a frame isTrace: callers are the
// frames above the first such frame (their totals hold the trace's samples), under the
// functions whose samples are at least 80% on such stacks at or below it (the trace's
// own and what they call, String::append, memcpy). Not all: some of the traced run's
// stacks of String::append lose the trace's frames (unnamed [mariadbd] frames, or stacks
// cut short), 2–8% of them in six runs on this VM (2026-11-29), so a bar of 90% missed it
// in one run of nine.
func traceFrames(t *testing.T, path string, isTrace func(string) bool) (callers, under map[string]bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	callers, under = map[string]bool{}, map[string]bool{}
	all, below := map[string]int64{}, map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if i < 0 || err != nil {
			continue
		}
		frames := strings.Split(line[:i], ";")
		first := slices.IndexFunc(frames, isTrace)
		seen := map[string]bool{}
		for k, fr := range frames {
			if seen[fr] {
				continue
			}
			seen[fr] = true
			all[fr] += n
			switch {
			case first >= 0 && k < first:
				callers[fr] = true
			case first >= 0:
				below[fr] += n
			}
		}
	}
	for fr, n := range all {
		if below[fr] >= n*4/5 {
			under[fr] = true
		}
	}
	return callers, under
}

// foldedNames are the folded profiles' file names in dir, sorted.
func foldedNames(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.folded"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	return names
}
