package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// TestMismatches: configs differing in workload, its version, scale or a stored parameter
// are one line per difference; what comparisons vary (profile, engine version, …) and
// bookkeeping (label, repeat, trial, …) are not; a config's runs that differ among
// themselves are said so; LSM options are ignored where a profile sets them.
func TestMismatches(t *testing.T) {
	ib := func(id int64, params map[string]any) RunReport {
		p := map[string]any{"scale": "tiny", "rows": json.Number("100000"), "clients": json.Number("1"),
			"steps": []any{"l.i0"}, "repeat": json.Number("1"), "profile": "default", "managed": false}
		for k, v := range params {
			if v == nil {
				delete(p, k)
				continue
			}
			p[k] = v
		}
		return RunReport{ID: id, Workload: "insertbench", WorkloadVersion: 3, Engine: "sqlite", Params: p}
	}
	kv := func(id int64, profileText string, params map[string]any) RunReport {
		r := RunReport{ID: id, Workload: "dbbench", WorkloadVersion: 1, Engine: "rocksdb",
			EngineSettings: map[string]string{"dbperf.profile_text": profileText},
			Params:         map[string]any{"scale": "tiny", "compression": "lz4", "write_buffer_size": json.Number("1048576")}}
		for k, v := range params {
			r.Params[k] = v
		}
		return r
	}
	run := func(id int64) Group { return Group{Name: fmt.Sprintf("run %d", id), RunIDs: []int64{id}} }
	for _, c := range []struct {
		name   string
		runs   []RunReport
		groups []Group
		want   []string
	}{
		{"same", []RunReport{ib(1, nil), ib(2, nil)}, []Group{run(1), run(2)}, nil},
		{"what comparisons vary and bookkeeping", []RunReport{
			ib(1, nil),
			ib(2, map[string]any{"label": "b", "repeat": json.Number("4"), "trial": "b1/s2", "sweep": "sw", "design": "abba",
				"block": json.Number("1"), "slice": json.Number("2"), "profile": "cached", "engine_version": "16", "storage_engine": "rocksdb",
				"managed": true, "steps": []any{"l.i0", "l.x"}, "tests": []any{"point-query"}, "report_interval_sec": 5.0, "think_us": json.Number("10"),
				"rows_per_commit": map[string]any{"l.i0": 1000}}),
		}, []Group{run(1), run(2)}, nil},
		{"numbers of any type", []RunReport{ib(1, map[string]any{"rows": 100000.0}), ib(2, map[string]any{"rows": 100000})},
			[]Group{run(1), run(2)}, nil},
		{"workload: nothing else compared", []RunReport{ib(12, nil),
			{ID: 2, Workload: "sysbench", WorkloadVersion: 2, Params: map[string]any{"scale": "small"}}},
			[]Group{{Name: "run 12", RunIDs: []int64{12}}, run(2)},
			[]string{"workload: insertbench (run 12) vs sysbench (run 2)"}},
		{"workload version", []RunReport{ib(1, nil), func() RunReport { r := ib(2, nil); r.WorkloadVersion = 4; return r }()},
			[]Group{{Name: "a", RunIDs: []int64{1}}, {Name: "b", RunIDs: []int64{2}}},
			[]string{"workload version: 3 (a) vs 4 (b)"}},
		{"scale and what it sets", []RunReport{
			ib(5, map[string]any{"scale": "small", "rows": json.Number("1000000")}), ib(6, map[string]any{"scale": "small", "rows": json.Number("1000000")}),
			ib(1, nil)},
			[]Group{{Name: "rpc100", RunIDs: []int64{5, 6}}, run(1)},
			[]string{"scale: small (rpc100) vs tiny (run 1)", "rows: 1000000 (rpc100) vs 100000 (run 1)"}},
		{"three configs, a missing parameter", []RunReport{ib(1, nil), ib(2, map[string]any{"clients": json.Number("4")}), ib(3, map[string]any{"clients": nil})},
			[]Group{{Name: "a", RunIDs: []int64{1}}, {Name: "b", RunIDs: []int64{2}}, {Name: "c", RunIDs: []int64{3}}},
			[]string{"clients: 1 (a) vs 4 (b) vs unset (c)"}},
		{"two configs alike, one not", []RunReport{ib(1, nil), ib(2, nil), ib(3, map[string]any{"delete": true})},
			[]Group{{Name: "a", RunIDs: []int64{1}}, {Name: "b", RunIDs: []int64{2}}, {Name: "c", RunIDs: []int64{3}}},
			[]string{"delete: unset (a, b) vs true (c)"}},
		{"within a config", []RunReport{ib(3, nil), ib(4, nil), ib(5, map[string]any{"scale": "small"}), ib(6, nil)},
			[]Group{{Name: "a", RunIDs: []int64{3, 4, 5}}, {Name: "b", RunIDs: []int64{6}}},
			[]string{"scale differs within a: tiny (runs 3, 4) vs small (run 5)"}},
		{"lists", []RunReport{ib(1, map[string]any{"shape": []any{"a"}}), ib(2, map[string]any{"shape": []any{"a", "b"}})},
			[]Group{run(1), run(2)}, []string{`shape: ["a"] (run 1) vs ["a","b"] (run 2)`}},
		{"LSM option a profile sets", []RunReport{kv(1, "# default\n", nil), kv(2, "compression = zstd # smaller\n", map[string]any{"compression": "zstd", "profile": "zstd"})},
			[]Group{run(1), run(2)}, nil},
		{"LSM option a flag sets", []RunReport{kv(1, "", nil), kv(2, "", map[string]any{"write_buffer_size": json.Number("2097152")})},
			[]Group{run(1), run(2)}, []string{"write_buffer_size: 1048576 (run 1) vs 2097152 (run 2)"}},
		{"LSM option of another profile, no text kept", []RunReport{
			func() RunReport {
				r := kv(1, "", map[string]any{"profile": "default"})
				r.EngineSettings = nil
				return r
			}(),
			func() RunReport {
				r := kv(2, "", map[string]any{"profile": "big", "write_buffer_size": json.Number("2097152")})
				r.EngineSettings = nil
				return r
			}()},
			[]Group{run(1), run(2)}, nil},
		{"a scale's LSM options", []RunReport{kv(1, "compression = zstd", map[string]any{"compression": "zstd"}),
			kv(2, "compression = zstd", map[string]any{"compression": "zstd", "scale": "small", "write_buffer_size": json.Number("2097152")})},
			[]Group{run(1), run(2)}, []string{"scale: tiny (run 1) vs small (run 2)", "write_buffer_size: 1048576 (run 1) vs 2097152 (run 2)"}},
	} {
		got := Mismatches(Report{Runs: c.runs}, c.groups)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: Mismatches =\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}
