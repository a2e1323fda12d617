package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDBBenchEnginesCompared is issue 13's acceptance through the CLI: the key-value suite
// at --scale tiny on RocksDB and on Pebble (the steps it checks), every step ok, then one report comparing the
// two with w_amp, stall % and the LSM shape; flush_mt_l0 (flush, then compact L0) leaves
// L0 empty and the memtable empty in the recorded shape; the writing steps' intervals
// carry the engine's stall and L0 figures, and latencies go to p99.99.
func TestDBBenchEnginesCompared(t *testing.T) {
	t.Parallel() // asserts the report's figures are there, not their values
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	// The steps whose figures the report is checked for; the whole current sequence runs on
	// both engines in internal/workload/dbbench (TestTinyCurrentOnEngines).
	steps := "fillseq_disable_wal,readrandom,overwritesome,flush_mt_l0,readwhilewriting"
	for _, e := range []string{"rocksdb", "pebble"} {
		// --duration 2: the timed steps span two intervals, so the report draws them over time.
		code, _, stderr := runCLI(t, nil, "run", "dbbench", "--engine", e, "--scale", "tiny", "--steps", steps, "--duration", "2",
			"--results", results, "--label", e, "--workdir", filepath.Join(dir, e), "--quiet")
		if code != 0 {
			t.Fatalf("run dbbench --engine %s: exit %d: %s", e, code, stderr)
		}
	}

	code, out, stderr := runCLI(t, nil, "report", "--results", results, "--base", "rocksdb", "rocksdb", "pebble")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Key-value engine relative to rocksdb", "w_amp", "stall_pct", "LSM tree shape after each step", "p99.99"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report comparing the engines lacks %q:\n%s", want, out)
		}
	}

	code, out, stderr = runCLI(t, nil, "report", "--results", results, "--format", "json", "rocksdb", "pebble")
	if code != 0 {
		t.Fatalf("report --format json: exit %d: %s", code, stderr)
	}
	var rep struct {
		Runs []struct {
			Engine string `json:"engine"`
			Steps  []struct {
				Name   string                                 `json:"name"`
				Status string                                 `json:"status"`
				Error  string                                 `json:"error"`
				HW     map[string]any                         `json:"hw"`
				Ops    map[string]map[string]any              `json:"ops"`
				Ivs    []struct{ Metrics map[string]float64 } `json:"intervals"`
			} `json:"steps"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report JSON: %v", err)
	}
	if len(rep.Runs) != 2 {
		t.Fatalf("%d runs in the report, want 2", len(rep.Runs))
	}
	for _, r := range rep.Runs {
		if len(r.Steps) != strings.Count(steps, ",")+1 {
			t.Errorf("%s: %d steps, want %s", r.Engine, len(r.Steps), steps)
		}
		for _, s := range r.Steps {
			if s.Status != "ok" {
				t.Errorf("%s %s: status %s (%s), want ok", r.Engine, s.Name, s.Status, s.Error)
			}
			switch s.Name {
			case "flush_mt_l0":
				if v, ok := s.HW["shape.after.l0_files"]; !ok || v != 0.0 {
					t.Errorf("%s flush_mt_l0: L0 files after = %v (present %v), want 0", r.Engine, v, ok)
				}
				if v, ok := s.HW["shape.after.mem_entries"]; ok && v != 0.0 {
					t.Errorf("%s flush_mt_l0: memtable entries after = %v, want 0", r.Engine, v)
				}
				if v, ok := s.HW["shape.after.mem_bytes"]; r.Engine == "rocksdb" && (!ok || v.(float64) > 4096) {
					t.Errorf("%s flush_mt_l0: memtable bytes after = %v (present %v), want an empty memtable", r.Engine, v, ok)
				}
			case "overwritesome", "readwhilewriting":
				stalls, l0 := 0, 0
				for _, iv := range s.Ivs {
					if _, ok := iv.Metrics["stall_pct"]; ok {
						stalls++
					}
					if _, ok := iv.Metrics["l0_files"]; ok {
						l0++
					}
				}
				if stalls == 0 || l0 == 0 || stalls != len(s.Ivs) {
					t.Errorf("%s %s: %d intervals, %d with stall_pct and %d with l0_files, want every one", r.Engine, s.Name, len(s.Ivs), stalls, l0)
				}
			case "readrandom":
				if _, ok := s.Ops["get"]["p9999_us"]; !ok {
					t.Errorf("%s readrandom: get has no p9999_us: %v", r.Engine, s.Ops["get"])
				}
			}
		}
	}
	// The engines' figures must be told apart in the shape: rocksdb has a memtable entry
	// count (0 after flush_mt_l0, checked above), Pebble does not expose one.
	if code, out, _ := runCLI(t, nil, "report", "--results", results, "--format", "html", "rocksdb", "pebble"); code != 0 ||
		!strings.Contains(out, "write stalls over time") || !strings.Contains(out, "L0 files over time") {
		t.Errorf("the HTML report (exit %d) lacks the stall and L0 charts over time", code)
	}
}

// TestDBBenchProfiles: a key-value engine takes its LSM options from a profile (built in
// or in --profiles-dir), a sweep goes over them, and a profile where none applies is
// refused.
func TestDBBenchProfiles(t *testing.T) {
	t.Parallel() // asserts the profiles' settings stored
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	profiles := filepath.Join(dir, "profiles")
	if err := os.MkdirAll(filepath.Join(profiles, "pebble"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profiles, "pebble", "nobloom.conf"), []byte("bloom-bits = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, nil, "sweep", "dbbench", "--engine", "pebble", "--profiles", "zstd,nobloom",
		"--profiles-dir", profiles, "--scale", "tiny", "--steps", "fillseq_disable_wal,readrandom", "--duration", "0.2",
		"--results", results, "--label", "kvsweep", "--workdir", filepath.Join(dir, "w"))
	if code != 0 {
		t.Fatalf("sweep over pebble profiles: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "Throughput relative to default/zstd") {
		t.Errorf("the sweep did not end with the relative report of its points:\n%s", out)
	}
	code, out, stderr = runCLI(t, nil, "report", "--results", results, "--format", "json", "kvsweep/default/zstd", "kvsweep/default/nobloom")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	var rep struct {
		Runs []struct {
			Params   map[string]any    `json:"params"`
			Settings map[string]string `json:"engine_settings"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(rep.Runs))
	}
	if c := rep.Runs[0].Params["compression"]; c != "zstd" || rep.Runs[0].Settings["dbperf.profile"] != "zstd" {
		t.Errorf("the zstd point ran with compression %v, profile %q", c, rep.Runs[0].Settings["dbperf.profile"])
	}
	if b := rep.Runs[1].Params["bloom_bits"]; b != 0.0 || rep.Runs[1].Params["compression"] != "lz4" {
		t.Errorf("the nobloom point ran with bloom_bits %v, compression %v; want 0 and the scale's lz4", b, rep.Runs[1].Params["compression"])
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "insertbench", "--engine", "sqlite", "--profile", "cached"}, "config profiles are for servers dbperf starts"},
		{[]string{"run", "dbbench", "--engine", "rocksdb", "--profile", "nosuch"}, `unknown rocksdb profile "nosuch"`},
		{[]string{"run", "dbbench", "--engine", "rocksdb", "--profile", "zstd", "--compression", "snappy"}, "--compression and profile zstd's compression both given"},
		{[]string{"sweep", "dbbench", "--engine", "rocksdb", "--versions", "7,8"}, "--versions: --engine rocksdb is the library dbperf links"},
	} {
		args := append(c.args, "--scale", "tiny", "--results", filepath.Join(dir, "bad.db"))
		code, _, stderr := runCLI(t, nil, args...)
		if code != ExitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d saying %q", c.args, code, stderr, ExitBadInput, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.db")); err == nil {
		t.Error("bad input left a results store behind")
	}
	if _, out, _ := runCLI(t, nil, "server", "list"); !strings.Contains(out, "rocksdb zstd (built into dbperf)") || !strings.Contains(out, "pebble default (built into dbperf)") {
		t.Errorf("server list does not list the key-value engines' profiles:\n%s", out)
	}
}
