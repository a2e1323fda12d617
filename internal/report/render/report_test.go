package render

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
	"github.com/dbperf/dbperf/internal/store"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test -update rewrites it)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}

func fixtureReport() report.Report {
	rep := report.Build(reporttest.Runs())
	rep.Location = time.UTC
	return rep
}

func TestRenderTextGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Text(&buf, fixtureReport()); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.txt.golden", buf.Bytes())
	for i, line := range strings.Split(buf.String(), "\n") {
		if n := len([]rune(line)); n > 130 {
			t.Errorf("line %d is %d columns wide: %q", i+1, n, line)
		}
		if strings.TrimRight(line, " ") != line {
			t.Errorf("line %d has trailing spaces: %q", i+1, line)
		}
	}
}

func TestRenderJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, fixtureReport()); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json.golden", buf.Bytes())
}

func TestRenderRunsGolden(t *testing.T) {
	var sums []store.RunSummary
	for _, r := range reporttest.Runs() {
		sums = append(sums, store.RunSummary{ID: r.ID, StartedAt: r.StartedAt, Workload: r.Workload, Engine: r.Engine,
			EngineVersion: r.EngineVersion, Label: r.Label, Status: r.Status, Steps: len(r.Steps)})
	}
	var buf bytes.Buffer
	if err := renderRuns(&buf, sums, time.UTC); err != nil {
		t.Fatal(err)
	}
	golden(t, "runs.txt.golden", buf.Bytes())
}

func TestRenderTextLocation(t *testing.T) {
	rep := fixtureReport()
	rep.Location = time.FixedZone("X", 2*3600)
	var buf bytes.Buffer
	if err := Text(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "started 2025-03-04 07:06:07 X") {
		t.Errorf("start time not shown in the report's location:\n%s", buf.String())
	}
}

// The golden file can be rewritten by mistake; the contract's names are checked here too.
func TestJSONContract(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, fixtureReport()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []map[string]json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(raw json.RawMessage) map[string]json.RawMessage {
		t.Helper()
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return m
	}
	has := func(where string, m map[string]json.RawMessage, want ...string) {
		t.Helper()
		for _, k := range want {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: no %q", where, k)
			}
		}
	}
	run := doc.Runs[0]
	has("run", run, "id", "workload", "workload_version", "engine", "engine_version", "engine_settings", "label",
		"seed", "status", "started_at", "finished_at", "params", "env", "steps")
	if got := string(run["started_at"]); got != `"2025-03-04T05:06:07Z"` {
		t.Errorf("started_at = %s", got)
	}
	if got := string(doc.Runs[1]["finished_at"]); got != "null" {
		t.Errorf("unfinished run: finished_at = %s, want null", got)
	}
	if got := string(doc.Runs[1]["params"]); got != "{}" {
		t.Errorf("run without params: params = %s, want {}", got)
	}
	var steps []json.RawMessage
	if err := json.Unmarshal(run["steps"], &steps); err != nil {
		t.Fatal(err)
	}
	qp100 := keys(steps[2])
	has("step", qp100, "name", "status", "error", "seconds", "kind", "primary", "ops", "background", "audit",
		"client_cpu_sec", "client_cpu_us_per_op", "note", "conn_cpu", "conn_cpu_us_per_op", "intervals")
	// per-connection CPU: the seconds, and per operation of each role's own work
	var connSec, connUS map[string]float64
	if err := json.Unmarshal(qp100["conn_cpu"], &connSec); err != nil || connSec["query"] != 3.1 {
		t.Errorf("conn_cpu = %s (%v)", qp100["conn_cpu"], err)
	}
	if err := json.Unmarshal(qp100["conn_cpu_us_per_op"], &connUS); err != nil || math.Round(connUS["query"]) != 117 ||
		math.Round(connUS["insert"]) != 235 {
		t.Errorf("conn_cpu_us_per_op = %s (%v)", qp100["conn_cpu_us_per_op"], err)
	}
	hw := keys(qp100["hw"])
	has("hw", hw, "conn_sessions", "conn_ops", "conn_op_unit")
	var opUnit map[string]string
	if err := json.Unmarshal(hw["conn_op_unit"], &opUnit); err != nil || len(opUnit) != 3 ||
		opUnit["query"] != "query" || opUnit["insert"] != "row" || opUnit["delete"] != "row" {
		t.Errorf("hw.conn_op_unit = %s (%v)", hw["conn_op_unit"], err)
	}
	ops := keys(qp100["ops"])
	opKeys := []string{"unit", "count", "per_sec", "statements", "rows", "errors", "late", "missed",
		"p50_us", "p90_us", "p99_us", "p999_us", "max_us"}
	has("ops.point-query", keys(ops["point-query"]), opKeys...)
	insert := keys(ops["insert"])
	has("ops.insert", insert, append(opKeys, "response", "target_per_sec")...)
	has("ops.insert.response", keys(insert["response"]), "p50_us", "p90_us", "p99_us", "p999_us", "max_us")
	for _, k := range []string{"response", "target_per_sec"} {
		if _, ok := keys(ops["point-query"])[k]; ok {
			t.Errorf("ops.point-query has %q, want it only on rate-limited labels", k)
		}
	}
	bg := keys(qp100["background"])
	if got := slices.Sorted(func(yield func(string) bool) {
		for k := range bg {
			if !yield(k) {
				return
			}
		}
	}); !slices.Equal(got, []string{"delete", "insert"}) {
		t.Errorf("background roles = %v, want [delete insert]", got)
	}
	has("background.delete", keys(bg["delete"]), "target_per_sec", "achieved_per_sec", "intervals_below_target_pct", "sla")
	if got := string(keys(bg["delete"])["sla"]); got != `"failed"` {
		t.Errorf("background.delete.sla = %s, want failed", got)
	}
	has("audit", keys(qp100["audit"]), "status", "detail")
	var ivs []json.RawMessage
	if err := json.Unmarshal(qp100["intervals"], &ivs); err != nil {
		t.Fatal(err)
	}
	iv := keys(ivs[0])
	has("interval", iv, "seq", "start_sec", "end_sec", "client_cpu_sec", "ops")
	ivOps := keys(iv["ops"])
	has("interval.ops.insert", keys(ivOps["insert"]), "count", "per_sec", "p50_us", "p99_us", "max_us", "response_p99_us", "response_max_us")
	if _, ok := keys(ivOps["point-query"])["response_p99_us"]; ok {
		t.Error("interval.ops.point-query has response_p99_us")
	}
}

func TestRenderJSONNeverEmitsNaN(t *testing.T) {
	runs := reporttest.Runs()
	runs[0].Steps[0].Result.Seconds = math.NaN()
	runs[0].Steps[0].Result.ClientCPUSec = math.Inf(1)
	runs[0].Steps[2].Result.Labels[1].TargetPerSec = math.NaN()
	var buf bytes.Buffer
	if err := JSON(&buf, report.Build(runs)); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	if err := Text(&buf, report.Build(runs)); err != nil {
		t.Fatalf("Text: %v", err)
	}
	if s := buf.String(); strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
		t.Errorf("output contains NaN or Inf:\n%s", s)
	}
}

// A step interrupted before its first op finished shows "-", never a 0 that was not
// measured, in text and JSON; a single-op step (a cleanup's wait) shows its one op's time,
// not a rate and percentiles of one sample.
func TestUnmeasuredAndSingleOpFigures(t *testing.T) {
	run := store.Run{ID: 1, Status: store.RunInterrupted, RunMeta: store.RunMeta{Workload: "insertbench", WorkloadVersion: 1, Engine: "sqlite"},
		Steps: []store.Step{
			{ID: 1, Seq: 0, Result: metrics.StepResult{Name: "cleanup", Status: metrics.StatusOK, Seconds: 10, Kind: "cleanup", Primary: "cleanup",
				Labels: []metrics.LabelStats{{Label: "cleanup", Role: "cleanup", Unit: metrics.UnitOps, Statements: 1, Events: 1,
					Service: reporttest.Lat(9_900_000, 9_900_000, 9_900_000, 9_900_000, 9_900_000)}}, ClientCPUSec: 3}},
			{ID: 2, Seq: 1, Result: metrics.StepResult{Name: "l.i1", Status: metrics.StatusInterrupted, Seconds: 0.2, Kind: "load", Primary: "insert",
				Labels: []metrics.LabelStats{{Label: "insert", Role: "insert", Unit: metrics.UnitRows}}}},
		}}
	rep := report.Build([]store.Run{run})
	var buf bytes.Buffer
	if err := Text(&buf, rep); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"cleanup 1 op in 9.90s", "insert -"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"0.10", "300000", "0µs", " 0/s"} {
		if strings.Contains(text, bad) {
			t.Errorf("text shows %q:\n%s", bad, text)
		}
	}
	buf.Reset()
	if err := JSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Runs []struct {
			Steps []struct {
				Ops map[string]map[string]any `json:"ops"`
			} `json:"steps"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	ins := out.Runs[0].Steps[1].Ops["insert"]
	for _, k := range []string{"per_sec", "p50_us", "p99_us", "max_us"} {
		if _, ok := ins[k]; ok {
			t.Errorf("JSON has %s for an op that never finished: %v", k, ins)
		}
	}
}

func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{9.996, "", "10.0"}, // three significant digits, rounded before the decimals are chosen
		{99.96, "", "100"},
		{0.999, "", "0.999"},
		{1.234, "", "1.23"},
		{12.34, "", "12.3"},
		{0.0001234, "", "0.000123"},
		{0, "", "0"},
		{14, "count", "14"},
		{2.5, "count", "2.50"}, // a median between two counts
		{0, "count", "0"},
	} {
		if got := formatValue(c.v, c.unit); got != c.want {
			t.Errorf("formatValue(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}
