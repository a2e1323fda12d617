package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/render"
	"github.com/dbperf/dbperf/internal/report/reporttest"
	"github.com/dbperf/dbperf/internal/store"
)

// TestExplainPointers: a report of two configs ends with one line per step whose
// throughput changed significantly (b is 1.2× a in both steps of the fixture): the
// explain command when both configs recorded the step, how to record it otherwise; a
// report of three configs has none.
func TestExplainPointers(t *testing.T) {
	rep, groups := reporttest.CompareFixture()
	two := groups[:2]
	c := report.Compare(rep, two, 0)
	got := c.ExplainPointers()
	want := []string{
		"l.i0 is faster (+19.6%): to say why, run both with --cpu-profile DIR --explain, then dbperf explain a b --step l.i0",
		"qp100 is faster (+19.6%): to say why, run both with --cpu-profile DIR --explain, then dbperf explain a b --step qp100",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("pointers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Every run of both configs recorded qp100 (a profile in a, statements in b).
	for i := range rep.Runs {
		for j := range rep.Runs[i].Steps {
			if rep.Runs[i].Steps[j].Name == "qp100" {
				if rep.Runs[i].Label == "a" {
					rep.Runs[i].Steps[j].Profiles = []store.StepProfile{{Role: "query"}}
				} else {
					rep.Runs[i].Steps[j].Explained = true
				}
			}
		}
	}
	c = report.Compare(rep, two, 1) // b the base: a is slower
	got = c.ExplainPointers()
	if len(got) != 2 || got[1] != "qp100 is slower (-16.4%): why: dbperf explain b a --step qp100" {
		t.Errorf("pointers with b the base: %q", got)
	}
	var buf bytes.Buffer
	if err := render.CompareText(&buf, c, false); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(buf.String(), "\nqp100 is slower (-16.4%): why: dbperf explain b a --step qp100\n") {
		t.Errorf("the text report does not end with the pointers:\n%s", buf.String())
	}
	if ps := report.Compare(rep, groups, 0).ExplainPointers(); ps != nil {
		t.Errorf("three configs: %q", ps)
	}
}

// TestExplainPointersSweepLabels: a sweep names its configs by short point names
// ("13/default") while their runs are stored as "SWEEP/13/default"; the pointer names the
// stored labels, which `dbperf explain` resolves, not the point names, which it does not.
func TestExplainPointersSweepLabels(t *testing.T) {
	rep, _ := reporttest.CompareFixture()
	stored := map[string]string{"a": "sweep-x-20261128/13/default", "b": "sweep-x-20261128/15/default"}
	groups := []report.Group{{Name: "13/default"}, {Name: "15/default"}}
	for i := range rep.Runs {
		l, ok := stored[rep.Runs[i].Label]
		if !ok {
			continue
		}
		g := &groups[0]
		if rep.Runs[i].Label == "b" {
			g = &groups[1]
		}
		rep.Runs[i].Label = l
		g.RunIDs = append(g.RunIDs, rep.Runs[i].ID)
	}
	got := report.Compare(rep, groups, 0).ExplainPointers()
	if len(got) != 2 {
		t.Fatalf("pointers: %q", got)
	}
	for _, p := range got {
		if !strings.HasSuffix(p, " dbperf explain sweep-x-20261128/13/default sweep-x-20261128/15/default --step "+strings.Fields(p)[0]) {
			t.Errorf("pointer does not name the stored labels: %q", p)
		}
	}

}
