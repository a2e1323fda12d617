package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
)

// TestConcurrencyHTML: a comparison of runs that ran a test at two thread counts (x.t1,
// x.t2) draws its rate by thread count, one line per config, and prints the tables.
func TestConcurrencyHTML(t *testing.T) {
	rep, groups := reporttest.ThreadFixture()
	c := report.Compare(rep, groups, 0)
	rep.Comparison = &c
	var buf bytes.Buffer
	if err := HTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"Throughput by concurrency", "x: throughput by threads", "Throughput by threads relative to 1 thread"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	buf.Reset()
	if err := CompareText(&buf, c, false); err != nil || !strings.Contains(buf.String(), "Throughput by threads\nstep  config               1 thread           2 threads\nx     a ") {
		t.Errorf("text (%v):\n%s", err, buf.String())
	}
}

func TestLimitsNote(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{nil, ""},
		{map[string]string{"server_memory": "256MiB, page cache included (cgroup v1 memory.limit_in_bytes …)"}, ", limited to memory 256MiB, page cache included"},
		{map[string]string{"server_memory": "1GiB", "server_cpus": "1-2 (cgroup cpuset)"}, ", limited to memory 1GiB, cpus 1-2"},
	} {
		if got := limitsNote(tc.env); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.env, got, tc.want)
		}
	}
}
