package session

import (
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/probe"
)

// TestCheckTarget: how each kind of engine is reached, and a cluster's settings, each
// refused in one line of the joined error; a target reached right has none.
func TestCheckTarget(t *testing.T) {
	t.Parallel()
	meta := func(name string) engine.Meta {
		e, err := catalog.Engine(name, catalog.EngineOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return e.Meta()
	}
	if err := CheckTarget(&config.Run{Engine: "sqlite"}, meta("sqlite"), nil); err != nil {
		t.Errorf("embedded sqlite refused: %v", err)
	}
	if err := CheckTarget(&config.Run{Engine: "postgres", DSN: "postgres://h/db"}, meta("postgres"), nil); err != nil {
		t.Errorf("postgres --dsn refused: %v", err)
	}
	for _, c := range []struct {
		cfg  config.Run
		want []string
	}{
		{config.Run{Engine: "sqlite", Managed: true}, []string{"--engine sqlite runs inside dbperf: drop --managed and --dsn"}},
		{config.Run{Engine: "postgres"}, []string{"--engine postgres needs a server"}},
		{config.Run{Engine: "postgres", DSN: "postgres://h/db", EngineVersion: "13"}, []string{"--engine-version picks the binaries of a managed server: add --managed"}},
		{config.Run{Engine: "postgres", DSN: "postgres://h/db", Spread: true}, []string{"--node-latency, --node-jitter and --spread are for a cluster"}},
		{config.Run{Engine: "postgres", DSN: "postgres://h/db", Cluster: 3, NodeJitter: time.Millisecond},
			[]string{"--cluster 3 starts a cluster of managed servers: add --managed", "--node-jitter 1ms is more than --node-latency 0s"}},
		{config.Run{Engine: "sqlite", StorageEngine: "rocksdb"}, []string{"--mysql-storage-engine applies to --engine mariadb only"}},
		{config.Run{Engine: "sqlite", ServerCPUs: 1}, []string{"--server-cpus 1: limits for a server dbperf starts (--engine postgres|mariadb --managed)"}},
	} {
		err := CheckTarget(&c.cfg, meta(c.cfg.Engine), nil)
		if err == nil {
			t.Errorf("%+v: accepted", c.cfg)
			continue
		}
		if lines := strings.Split(err.Error(), "\n"); len(lines) != len(c.want) {
			t.Errorf("%+v: %d lines, want %d: %v", c.cfg, len(lines), len(c.want), err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v lacks %q", c.cfg, err, w)
			}
		}
	}
}

// TestCPUOptionsCallGraph: each engine's default call graph comes from its Meta's
// StackCopy: DWARF deep enough for the servers' stacks, frame pointers for the rest.
func TestCPUOptionsCallGraph(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{"postgres": "dwarf,16384", "mariadb": "dwarf,65528", "sqlite": "fp", "rocksdb": "fp", "pebble": "fp"} {
		cfg := &config.Run{Engine: name, CPUProfileDir: "/p", CPUProfileHz: 49}
		if note := probe.CPUNote(CPUOptions(cfg)); !strings.Contains(note, "--call-graph "+want+" ") {
			t.Errorf("%s: %q does not say --call-graph %s", name, note, want)
		}
	}
}
