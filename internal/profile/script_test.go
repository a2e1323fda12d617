package profile

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestParseScript(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Event
	}{
		{"sample with kernel, user and unknown frames",
			"postgres  7844/7844  \n" +
				"\tffffffff81e602ad cpuidle_enter ([kernel.kallsyms])\n" +
				"\t          5a1b2c heap_delete (/usr/lib/postgresql/15/bin/postgres)\n" +
				"\t          3f00aa [unknown] (/usr/lib/postgresql/15/bin/postgres)\n" +
				"\t               0 [unknown] ([unknown])\n\n",
			[]Event{{Comm: "postgres", PID: 7844, TID: 7844, Frames: []Frame{
				{"cpuidle_enter", "[kernel.kallsyms]"},
				{"heap_delete", "/usr/lib/postgresql/15/bin/postgres"},
				{"[unknown]", "/usr/lib/postgresql/15/bin/postgres"},
				{"[unknown]", "[unknown]"}}}}},
		{"comm with spaces, C++ symbol with parentheses",
			"Web Content  10/12  \n\t     abc std::vector<int>::push_back(int const&) (/usr/lib/libxul.so)\n\n",
			[]Event{{Comm: "Web Content", PID: 10, TID: 12, Frames: []Frame{
				{"std::vector<int>::push_back(int const&)", "/usr/lib/libxul.so"}}}}},
		{"sample without a call chain: its frame on the header line",
			"         swapper     0/0      ffffffff8225f42b pv_native_safe_halt ([kernel.kallsyms])\n",
			[]Event{{Comm: "swapper", PID: 0, TID: 0, Frames: []Frame{{"pv_native_safe_halt", "[kernel.kallsyms]"}}}}},
		{"sample with no stack at all",
			"mariadbd  5/6  \n\n",
			[]Event{{Comm: "mariadbd", PID: 5, TID: 6}}},
		{"task events",
			"kthreadd     0/0     PERF_RECORD_FORK(3:3):(2:2)\n" +
				"perf  7799/7799  PERF_RECORD_FORK(7799:7801):(7799:7799)\n" +
				"sh  6697/6697  PERF_RECORD_COMM exec: sh:6697/6697\n" +
				"sleep  6699/6699  PERF_RECORD_EXIT(6699:6699):(6697:6697)\n",
			[]Event{
				{Comm: "kthreadd", Task: "FORK", Child: 3, ChildTID: 3, Parent: 2},
				{Comm: "perf", PID: 7799, TID: 7799, Task: "FORK", Child: 7799, ChildTID: 7801, Parent: 7799},
				{Comm: "sh", PID: 6697, TID: 6697, Task: "COMM", Child: 6697, ChildTID: 6697},
				{Comm: "sleep", PID: 6699, TID: 6699, Task: "EXIT", Child: 6699, ChildTID: 6699, Parent: 6697},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []Event
			err := ParseScript(strings.NewReader(tc.in), func(ev *Event) error {
				got = append(got, *ev)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if err := ParseScript(strings.NewReader("garbage line\n"), func(*Event) error { return nil }); err == nil {
		t.Error("a header without pid/tid: no error")
	}
}

func TestFrameName(t *testing.T) {
	for _, tc := range []struct {
		f    Frame
		want string
	}{
		{Frame{"heap_delete", "/usr/lib/postgresql/15/bin/postgres"}, "heap_delete"},
		{Frame{"[unknown]", "/usr/lib/postgresql/15/bin/postgres"}, "[postgres]"},
		{Frame{"[unknown]", "[unknown]"}, "[unknown]"},
		{Frame{"do_syscall_64", "[kernel.kallsyms]"}, "do_syscall_64_[k]"},
		{Frame{"a;b", "x"}, "a:b"},
	} {
		if got := FrameName(tc.f); got != tc.want {
			t.Errorf("FrameName(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func TestFoldLimits(t *testing.T) {
	var in strings.Builder
	for _, sym := range []string{"a", "b", "c", "a", "d"} {
		in.WriteString("p  1/1  \n\t1 " + sym + " (/bin/p)\n\t2 main (/bin/p)\n\n")
	}
	in.WriteString("p  1/1  \n\n")                 // no stack
	in.WriteString("q  2/2  \n\t1 x (/bin/q)\n\n") // dropped
	all := func(pid, tid int, comm string) (string, bool) { return comm, comm == "p" }
	ps, err := FoldScript(strings.NewReader(in.String()), all, nil, Limits{MaxStacks: 3, MaxDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Depth 1 keeps the leaf; the fourth distinct stack (d) and the empty one go over
	// the cap of 3.
	want := map[string]int{"a": 2, "b": 1, "c": 1, OtherStacks: 2}
	if got := ps.Roles["p"].Stacks; !reflect.DeepEqual(got, want) {
		t.Errorf("stacks %v, want %v", got, want)
	}
	ps, err = FoldScript(strings.NewReader(in.String()), all, nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]int{"main;a": 2, "main;b": 1, "main;c": 1, "main;d": 1, NoStack: 1}
	if got := ps.Roles["p"].Stacks; !reflect.DeepEqual(got, want) {
		t.Errorf("stacks %v, want %v", got, want)
	}
	if ps.Samples != 7 || ps.Dropped != 1 || ps.Roles["p"].Samples != 6 {
		t.Errorf("samples %d dropped %d role %d, want 7 1 6", ps.Samples, ps.Dropped, ps.Roles["p"].Samples)
	}
}

func TestTasksAndProcessName(t *testing.T) {
	tk := NewTasks()
	for _, ev := range []Event{
		{Task: "FORK", Child: 10, ChildTID: 10, Parent: 1},
		{Task: "FORK", Child: 11, ChildTID: 11, Parent: 10},
		{Task: "FORK", Child: 11, ChildTID: 12, Parent: 11}, // a thread
	} {
		tk.add(&ev)
	}
	if !tk.Descends(11, 10) || !tk.Descends(10, 10) || tk.Descends(10, 11) || tk.Descends(12, 10) {
		t.Error("Descends wrong")
	}
	for _, tc := range []struct{ title, comm, want string }{
		{"postgres: checkpointer ", "postgres", "checkpointer"},
		{"postgres: autovacuum worker ib", "postgres", "autovacuum worker"},
		{"postgres: dbperf ib 127.0.0.1(4242) idle", "postgres", "backend"},
		{"/usr/lib/postgresql/15/bin/postgres\x00-D\x00/x", "postgres", "postgres"},
		{"", "ib_pg_flush_co", "ib_pg_flush_co"},
		{"", "", "unknown"},
	} {
		if got := ProcessName(tc.title, tc.comm); got != tc.want {
			t.Errorf("ProcessName(%q, %q) = %q, want %q", tc.title, tc.comm, got, tc.want)
		}
	}
}

// TestFoldGolden folds perf script output recorded on the 2-core VM (perf 6.1, cpu-clock,
// fp call graphs) while dbperf ran insertbench l.i0,l.x,l.i1 on a managed PostgreSQL 15:
// dbperf (pid 7800, a Go program) and the postmaster (7823) with its backends and
// auxiliary processes, kernel frames, unsymbolized ([unknown]) frames, idle and kernel
// threads to drop; and a recording without call chains (samples with their frame on the
// header line). The roles are the ones dbperf's filter would give.
func TestFoldGolden(t *testing.T) {
	const self, postmaster = 7800, 7823
	sessions := map[int]string{7835: "insert", 7843: "insert", 7844: "delete"}
	titles := map[int]string{7824: "postgres: checkpointer ", 7827: "postgres: walwriter "}
	for _, name := range []string{"insertbench-postgres", "nocallchain"} {
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", name+".script"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tasks := NewTasks()
			filter := func(pid, tid int, comm string) (string, bool) {
				switch {
				case pid == self:
					return "client", true
				case name == "nocallchain":
					return "all", true
				case !tasks.Descends(pid, postmaster):
					return "", false
				case sessions[tid] != "":
					return sessions[tid], true
				}
				return "background:" + ProcessName(titles[pid], comm), true
			}
			ps, err := FoldScript(f, filter, tasks, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			for _, role := range ps.RoleNames() {
				p := ps.Roles[role]
				out.WriteString("# role " + role + "\n")
				if err := p.WriteFolded(&out); err != nil {
					t.Fatal(err)
				}
			}
			golden := filepath.Join("testdata", name+".folded")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -run TestFoldGolden -update writes it)", err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("folded output differs from %s (go test -update rewrites it); got:\n%s", golden, out.String())
			}
			if name != "insertbench-postgres" {
				return
			}
			for role, fn := range map[string]string{"delete": "heap_delete", "insert": "heap_insert",
				"client": "internal/runner.work", "background:checkpointer": "CheckpointerMain", "background:walwriter": "WalWriterMain"} {
				p := ps.Roles[role]
				if p == nil {
					t.Errorf("no role %s in %v", role, ps.RoleNames())
					continue
				}
				found := false
				for s := range p.Stacks {
					found = found || strings.Contains(s, fn)
				}
				if !found {
					t.Errorf("role %s: no stack with %s", role, fn)
				}
			}
		})
	}
}

// Overlapping windows (a duet's two points at once): a sample goes to the window whose
// filter takes it, whichever comes first; one that none takes is dropped in the first
// window holding it; consecutive windows split by time as before.
func TestFoldWindowsOverlapping(t *testing.T) {
	in := "a  1/1 0.000000100:\n\t1 fa (/bin/a)\n\n" +
		"b  2/2 0.000000150:\n\t1 fb (/bin/b)\n\n" +
		"c  3/3 0.000000160:\n\t1 fc (/bin/c)\n\n" +
		"b  2/2 0.000000300:\n\t1 late (/bin/b)\n\n"
	only := func(pid int) Filter {
		return func(p, tid int, comm string) (string, bool) { return comm, p == pid }
	}
	ws := []Window{{From: 50, To: 200, Filter: only(1)}, {From: 50, To: 200, Filter: only(2)}, {From: 201, To: 400, Filter: only(2)}}
	pss, err := FoldWindows(strings.NewReader(in), ws, NewTasks(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pss[0].Roles["a"]; got == nil || got.Samples != 1 || len(pss[0].Roles) != 1 || pss[0].Samples != 2 || pss[0].Dropped != 1 {
		t.Errorf("window 0: %+v (samples %d dropped %d), want a's one sample and c's dropped", pss[0].Roles, pss[0].Samples, pss[0].Dropped)
	}
	if got := pss[1].Roles["b"]; got == nil || got.Stacks["fb"] != 1 || pss[1].Samples != 1 {
		t.Errorf("window 1: %+v, want b's sample at 150", pss[1].Roles)
	}
	if got := pss[2].Roles["b"]; got == nil || got.Stacks["late"] != 1 || pss[2].Samples != 1 {
		t.Errorf("window 2: %+v, want b's sample at 300", pss[2].Roles)
	}
}
