package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/sqlite"
	"github.com/dbperf/dbperf/internal/workload"
)

// TestSpreadPlace: sessions in turn over every node when every node takes writes; only
// read-only groups' sessions, in turn over the standbys, when only node 0 does.
func TestSpreadPlace(t *testing.T) {
	ws := func(n int) []workload.Worker { return make([]workload.Worker, n) }
	groups := []workload.Group{
		{Label: "range-query", ReadOnly: true, Workers: ws(3)},
		{Label: "insert", Workers: ws(2)},
		{Label: "delete", Workers: ws(2)},
	}
	three := make([]engine.SQL, 3)
	for _, tc := range []struct {
		name string
		s    Spread
		want string
	}{
		{"multi-primary", Spread{Nodes: three},
			"[[0 1 2] [0 1] [2 0]]"},
		{"read-only standbys", Spread{Nodes: three, ReadOnlyStandbys: true},
			"[[1 2 1] [0 0] [0 0]]"},
		{"one node", Spread{Nodes: three[:1]},
			"[[0 0 0] [0 0] [0 0]]"},
	} {
		got := tc.s.Place(groups)
		if s := fmt.Sprint(got); s != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, s, tc.want)
		}
	}

	s := Spread{Nodes: three, ReadOnlyStandbys: true}
	if n := s.placementNote(groups, s.Place(groups)); n != "sessions by node (--spread): node 0: insert #1,#2, delete #1,#2; node 1: range-query #1,#3; node 2: range-query #2" {
		t.Errorf("note %q", n)
	}
	writers := groups[1:]
	if n := s.placementNote(writers, s.Place(writers)); !strings.HasSuffix(n, "node 1: none; node 2: none; this step has no read-only sessions, and the standbys take only reads: every session on node 0") {
		t.Errorf("writers' note %q", n)
	}
	many := []workload.Group{{Label: "point-query", Workers: ws(20)}}
	if n := (&Spread{Nodes: three[:2]}).placementNote(many, (&Spread{Nodes: three[:2]}).Place(many)); n != "sessions by node (--spread): node 0: point-query ×10; node 1: point-query ×10" {
		t.Errorf("many workers' note %q", n)
	}
}

// TestSpreadSessionsOnTheirNodes: with two real SQLite databases as the nodes, each
// worker's session is opened on its node (its rows land in that node's table), the
// step's own Prepare and Verify stay on Runner.Handle, and the step's note names the
// placement.
func TestSpreadSessionsOnTheirNodes(t *testing.T) {
	ctx := context.Background()
	r := newRunner(t)
	h1, err := sqlite.New().Open(ctx, engine.Target{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h1.Close() })
	s1, err := h1.(engine.SQL).NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	if _, err := s1.Exec(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)"); err != nil {
		t.Fatal(err)
	}
	r.Spread = &Spread{Nodes: []engine.SQL{r.Handle.(engine.SQL), h1.(engine.SQL)}}
	step := &testStep{load: workload.Load{Kind: "load", Primary: "insert", Groups: []workload.Group{{
		Label: "insert", Role: "insert", Unit: workload.UnitRows, UntilDone: true,
		Workers: []workload.Worker{&insertWorker{quota: 3}, &insertWorker{quota: 5}, &insertWorker{quota: 7}},
	}}}}
	res := r.Run(ctx, step, &collector{})
	if res.Status != "ok" {
		t.Fatalf("status %s: %s", res.Status, res.Error)
	}
	count := func(h engine.Handle) int64 {
		s, err := h.(engine.SQL).NewSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		st, err := s.Prepare(ctx, "SELECT count(*) FROM t")
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		n, _, err := st.QueryInt(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Workers 1 and 3 on node 0, worker 2 on node 1.
	if n0, n1 := count(r.Handle), count(h1); n0 != 10 || n1 != 5 {
		t.Errorf("rows: node 0 %d (want 10), node 1 %d (want 5)", n0, n1)
	}
	if want := "sessions by node (--spread): node 0: insert #1,#3; node 1: insert #2"; !strings.Contains(res.Note, want) {
		t.Errorf("note %q lacks %q", res.Note, want)
	}
}
