package probe

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/profile"
)

// TestCPUProfileCallGraph: $DBPERF_CPU_PROFILE_CALLGRAPH's values (ParseCallGraph), the
// run's env note on its call graph, and each engine's default.
func TestCPUProfileCallGraph(t *testing.T) {
	for _, c := range []struct {
		env, want string
		bad       bool
	}{
		{"", "dwarf,16384", false}, // postgres's default
		{"fp", "fp", false},
		{"dwarf", "dwarf", false},
		{"dwarf,16384", "dwarf,16384", false},
		{"dwarf,100", "", true}, // not a multiple of 8
		{"dwarf,70000", "", true},
		{"lbr", "", true},
	} {
		got, err := ParseCallGraph(c.env, 16384)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("DBPERF_CPU_PROFILE_CALLGRAPH=%q: %q, %v; want %q, error %v", c.env, got, err, c.want, c.bad)
		}
	}
	note := CPUNote(CPUOptions{Dir: "/p", Hz: 49, CallGraph: "dwarf,16384"})
	if !strings.Contains(note, "--call-graph dwarf,16384") {
		t.Errorf("note %q does not say the call graph", note)
	}
	note = CPUNote(CPUOptions{StackCopy: 65528, Dir: "/p", Hz: 49})
	if !strings.Contains(note, "--call-graph dwarf,65528 ") {
		t.Errorf("note %q does not say MariaDB's default call graph", note)
	}
	for stack, want := range map[int]string{16384: "dwarf,16384", 65528: "dwarf,65528", 0: "fp"} {
		if got := DefaultCallGraph(stack); got != want {
			t.Errorf("default call graph of a %d-byte stack copy: %q, want %q", stack, got, want)
		}
	}
}

func TestUnwindNote(t *testing.T) {
	byRole := map[string]profile.Unwinding{
		"query":                {Samples: 300, Truncated: 200},
		"insert":               {Samples: 100, Truncated: 5},  // under 10%
		"background:walwriter": {Samples: 10, Truncated: 10},  // too few samples to say
		"client":               {Samples: 200, Truncated: 30}, // 15%
	}
	note := unwindNote(7, "fp", byRole)
	for _, want := range []string{"run 7", "call graph fp", "client 15%, query 67%", "DBPERF_CPU_PROFILE_CALLGRAPH=dwarf,16384"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	if strings.Contains(note, "insert") || strings.Contains(note, "walwriter") {
		t.Errorf("note %q names a role under the threshold", note)
	}
	if note := unwindNote(7, "dwarf,16384", byRole); !strings.Contains(note, "deeper than the copy of dwarf,16384") {
		t.Errorf("dwarf note %q", note)
	}
	if note := unwindNote(7, "fp", map[string]profile.Unwinding{"query": {Samples: 100, Truncated: 10}}); note != "" {
		t.Errorf("10%%: note %q, want none", note)
	}
}

// fakeNamer is an engine.ThreadNamer of fixed names, or of an error.
type fakeNamer struct {
	names map[int]string
	err   error
}

func (f fakeNamer) ServerThreads(context.Context) (map[int]string, error) { return f.names, f.err }

// TestCPUProfileFilterThreads: how a MariaDB server's samples are attributed, without a
// server: a worker's connection thread is its role, a thread the server names is
// background:<name>, another keeps the process's name; with the workers' sessions
// unknown, the unnamed threads are the role server.
func TestCPUProfileFilterThreads(t *testing.T) {
	const server, self = 100, 7
	p := &CPUProfiler{serverPID: server, self: self, titles: map[int]string{server: "/usr/sbin/mariadbd --defaults-file=x"},
		namer: fakeNamer{names: map[int]string{server: "sql/main", 104: "innodb/page_cleaner_thread", 105: "sql/one_connection"}}}
	w := &stepWindow{sessions: map[int]string{105: "insert"}}
	p.threads = map[int]string{}
	p.readThreads(context.Background())
	tasks := profile.NewTasks()
	for _, c := range []struct {
		absent   string
		pid, tid int
		want     string
	}{
		{"", self, self + 1, RoleClient},
		{"", 999, 999, ""}, // another process: dropped
		{"", server, 105, "insert"},
		{"", server, 104, "background:innodb/page_cleaner_thread"},
		{"", server, server, "background:sql/main"},
		{"", server, 103, "background:mariadbd"}, // a thread performance_schema does not list
		{"performance_schema is off", server, 103, RoleServer},
		{"performance_schema is off", server, 104, "background:innodb/page_cleaner_thread"},
	} {
		w.absent = c.absent
		role, ok := p.filter(w, tasks)(c.pid, c.tid, "mariadbd")
		if role != c.want || ok != (c.want != "") {
			t.Errorf("absent %q, pid %d tid %d: %q %v, want %q", c.absent, c.pid, c.tid, role, ok, c.want)
		}
	}
	p.namer, p.threadsErr = fakeNamer{err: errors.New("performance_schema is off")}, nil
	p.readThreads(context.Background())
	if p.threadsErr == nil || len(p.threads) != 3 {
		t.Errorf("a failed read: error %v, threads %v (want the error kept, the names read before kept)", p.threadsErr, p.threads)
	}
}
