package render

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/report"
)

func TestExplainFormats(t *testing.T) {
	e := report.Explain{Base: "a", New: "b", BaseRuns: []int64{1}, NewRuns: []int64{2, 3}, Top: 10,
		Steps: []report.ExplainStep{{Step: "l.i0", BaseOps: 1000, NewOps: 2000, Roles: []report.ExplainRole{{
			Role: "insert", Base: 1500, New: 1750, Delta: 250, BaseSamples: 150, NewSamples: 700,
			Self:  []report.FunctionChange{{Function: "lock", Base: 0, New: 250, Delta: 250, Pct: math.NaN(), Share: 1}},
			Total: []report.FunctionChange{{Function: "heap", Base: 1000, New: 500, Delta: -500, Pct: -50, Share: -2}},
		}}}},
		Notes: []string{"a note"}}
	var buf bytes.Buffer
	if err := ExplainText(&buf, e); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"base a (run 1) → new b (runs 2, 3)", "step l.i0: 1000 ops in a, 2000 in b",
		"role    kind   function             base µs/op  new µs/op  Δ µs/op     Δ %  share\n",
		"insert  all    (150 → 700 samples)        1500       1750     +250  +16.7%   100%\n",
		"        self   lock                       0.00        250     +250     new   100%\n",
		"        total  heap                       1000        500     -500  -50.0%  -200%\n",
		"note: a note"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	buf.Reset()
	if err := ExplainJSON(&buf, e); err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(buf.Bytes(), &j); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	self := j["steps"].([]any)[0].(map[string]any)["roles"].([]any)[0].(map[string]any)["self"].([]any)[0].(map[string]any)
	if self["function"] != "lock" || self["delta_pct"] != nil || self["share"] != 1.0 || self["new_us_per_op"] != 250.0 {
		t.Errorf("json self: %v", self)
	}
}
