package cli

import (
	"strings"
	"testing"
)

func TestParsePart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want partSpec
		ok   bool
	}{
		{"abc/1/2", partSpec{"abc", 1, 2}, true},
		{"abc/3/3", partSpec{"abc", 3, 3}, true},
		{"abc/0/2", partSpec{}, false},
		{"abc/3/2", partSpec{}, false},
		{"abc/1/1", partSpec{}, false},
		{"/1/2", partSpec{}, false},
		{"abc/1", partSpec{}, false},
		{"abc/x/2", partSpec{}, false},
	} {
		got, err := parsePart(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parsePart(%q) = %+v, %v; want %+v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestAgentsBadInput: what --agents cannot run is refused before anything starts, every
// problem on a line of its own, exit 2.
func TestAgentsBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errs := runCLI(t, nil, "run", "insertbench", "--scale", "tiny", "--agents", "3", "--clients", "2",
		"--results", dir+"/r.db", "--repeat", "2")
	for _, want := range []string{
		"--agents: the agents take their parts from the queue in a PostgreSQL results store",
		"--agents: --engine sqlite runs inside each dbperf process",
		"--agents 3: --clients 2 is fewer clients than agents",
		"--repeat: not with --agents yet",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("missing %q", want)
		}
	}
	if code != ExitBadInput || out != "" {
		t.Errorf("exit %d, stdout %q; want 2 and nothing\n%s", code, out, errs)
	}
	code, _, errs = runCLI(t, nil, "run", "sysbench", "--engine", "postgres", "--dsn", "postgres://u:secret@127.0.0.1:1/db",
		"--agents", "2", "--clients", "2", "--results", "postgres://u@127.0.0.1:1/db")
	if code != ExitBadInput || !strings.Contains(errs, "sysbench's clients share tables") || !strings.Contains(errs, "give --dsn @FILE") || strings.Contains(errs, "secret") {
		t.Errorf("sysbench --agents with a password in --dsn: exit %d\n%s", code, errs)
	}
}
