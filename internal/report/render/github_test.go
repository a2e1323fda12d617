package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The pull-request comment says "No change" for an A/A and names a known change, with
// the same marks as the tables; the tables follow, folded (issue 42).
func TestGitHub(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		want     []string
		not      []string
	}{
		{"aa", []string{"### dbperf: a2 against a", "**No change**", "<details><summary>The tables</summary>", "</details>"}, []string{"▲ better:", "▼ worse:"}},
		{"effect", []string{"### dbperf: fast against a", "- ▲ better: **fast** l.i0 throughput: 1.2", "- ▲ better: **fast** qp100 throughput: 1.2", "- ▼ worse: **fast** l.x duration (lower is better): ", "- ▲ better: **fast** qp100 server\\_cpupq: 0.69"},
			[]string{"**No change**"}},
	} {
		sc := scenario(t, tc.scenario)
		var buf bytes.Buffer
		if err := GitHub(&buf, sc.c); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", tc.scenario, w, out)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(out, w) {
				t.Errorf("%s: %q in\n%s", tc.scenario, w, out)
			}
		}
	}
}

// BMF is Bencher's JSON: per config and step the throughput median with its interval,
// an index build's duration as "duration".
func TestBMF(t *testing.T) {
	sc := scenario(t, "effect")
	var buf bytes.Buffer
	if err := BMF(&buf, sc.c); err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]struct {
		Value float64  `json:"value"`
		Lower *float64 `json:"lower_value"`
		Upper *float64 `json:"upper_value"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	qp, ok := got["fast/qp100"]["throughput"]
	if !ok || qp.Value <= 0 || qp.Lower == nil || qp.Upper == nil || !(*qp.Lower <= qp.Value && qp.Value <= *qp.Upper) {
		t.Errorf("fast/qp100: %+v (all: %s)", got["fast/qp100"], buf.String())
	}
	if _, ok := got["a/qp100"]["throughput"]; !ok {
		t.Errorf("no a/qp100 throughput: %s", buf.String())
	}
	if d, ok := got["fast/l.x"]["duration"]; !ok || d.Value <= 0 {
		t.Errorf("fast/l.x: %+v, want its duration", got["fast/l.x"])
	}
}
