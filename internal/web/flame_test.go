package web

import (
	"context"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/store"
)

// TestCompareFlameGraphs: the comparison page of two runs whose step stored CPU profiles
// has the differential flame graphs (the HTML report's section, render.FlameSVG), offline;
// a run's own page and a comparison without profiles have none.
func TestCompareFlameGraphs(t *testing.T) {
	path := writeRuns(t, 3, 2)
	ctx := context.Background()
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Results(ctx, []int64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{
		"PostmasterMain;PostgresMain;ExecInsert;heap_insert 300\nPostmasterMain;PostgresMain;ExecInsert;operator<< 100\n",
		"PostmasterMain;PostgresMain;ExecInsert;heap_insert 450\nPostmasterMain;PostgresMain;ExecInsert;operator<< 50\n",
	} {
		gz, err := store.CompressFolded([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		p := store.StepProfile{Role: "insert", Event: "cpu-clock", Hz: 99, Samples: []int64{400, 500}[i], Stacks: 2, Folded: gz}
		if err := st.PutStepProfiles(ctx, runs[i].Steps[0].ID, []store.StepProfile{p}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	ts := serveStore(t, path)
	code, body := fetch(t, ts.URL+"/compare?run=1&run=2")
	if code != 200 {
		t.Fatalf("status %d: %.300s", code, body)
	}
	for _, want := range []string{
		`<h2 id="cpu-profile-differences">CPU profile differences</h2>`,
		`<svg class="flame"`,
		`aria-label="l.i0, insert:`,
		"<title>heap_insert\n",
		">operator&lt;&lt;</text>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the comparison page has no %q", want)
		}
	}
	if strings.Contains(body, "http://") || strings.Contains(body, "https://") || strings.Contains(body, "<script") {
		t.Error("the comparison page refers to the network or runs a script")
	}
	for _, u := range []string{"/run/1", "/compare?run=1&run=3"} {
		code, body := fetch(t, ts.URL+u)
		if code != 200 || strings.Contains(body, `class="flame"`) {
			t.Errorf("%s: status %d, flame graph %v", u, code, strings.Contains(body, `class="flame"`))
		}
	}
}
