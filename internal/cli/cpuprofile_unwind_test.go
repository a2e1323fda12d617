package cli

import (
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/profile"
)

func TestCPUProfileCallGraph(t *testing.T) {
	for _, c := range []struct {
		env, want string
		bad       bool
	}{
		{"", cpuProfileDefaultCallGraph, false},
		{"fp", "fp", false},
		{"dwarf", "dwarf", false},
		{"dwarf,16384", "dwarf,16384", false},
		{"dwarf,100", "", true}, // not a multiple of 8
		{"dwarf,70000", "", true},
		{"lbr", "", true},
	} {
		env := Env{Getenv: func(k string) string {
			if k == "DBPERF_CPU_PROFILE_CALLGRAPH" {
				return c.env
			}
			return ""
		}}
		got, err := cpuProfileCallGraph(env)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("DBPERF_CPU_PROFILE_CALLGRAPH=%q: %q, %v; want %q, error %v", c.env, got, err, c.want, c.bad)
		}
	}
	note := cpuProfileNote(&config.Run{CPUProfileDir: "/p", CPUProfileHz: 49, CPUProfileCallGraph: "dwarf,16384"})
	if !strings.Contains(note, "--call-graph dwarf,16384") {
		t.Errorf("note %q does not say the call graph", note)
	}
	note = cpuProfileNote(&config.Run{CPUProfileDir: "/p", CPUProfileHz: 49})
	if !strings.Contains(note, "--call-graph "+cpuProfileDefaultCallGraph+" ") {
		t.Errorf("note %q does not say the default call graph", note)
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
	for _, want := range []string{"run 7", "call graph fp", "client 15%, query 67%", "DBPERF_CPU_PROFILE_CALLGRAPH=" + cpuProfileDwarf} {
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
