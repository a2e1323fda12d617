package parts

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/store"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Spec
		ok   bool
	}{
		{"abc/1/2", Spec{"abc", 1, 2}, true},
		{"abc/3/3", Spec{"abc", 3, 3}, true},
		{"abc/0/2", Spec{}, false},
		{"abc/3/2", Spec{}, false},
		{"abc/1/1", Spec{}, false},
		{"/1/2", Spec{}, false},
		{"abc/1", Spec{}, false},
		{"abc/x/2", Spec{}, false},
	} {
		got, err := Parse(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestMerge: the merged step takes the machine and server figures of the part that
// saw the server (with the client CPU of every part on that host), sums the counts and
// client CPU, and says in its note what each host's client used; with no part on the
// server's host nor the coordinator's, the figures are absent and the note says why.
func TestMerge(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1700000000, 0)
	part := func(host string, serverSeen bool, clientCPU float64, us int64) store.Run {
		g := metrics.NewRegistry(t0)
		rec := g.Recorder(metrics.LabelSpec{Label: "insert", Role: "insert", Unit: metrics.UnitRows})
		for i := range int64(100) {
			rec.Record(t0, t0, t0.Add(time.Duration(us+i)*time.Microsecond), 1, nil)
		}
		iv := g.Tick(t0.Add(time.Second))
		hw := &metrics.HW{Server: metrics.ProcHW{Known: serverSeen, CPUSec: 2}, Client: metrics.ProcHW{Known: true, CPUSec: clientCPU}}
		return store.Run{RunMeta: store.RunMeta{Params: map[string]any{"clients": json.Number("1")}, Env: map[string]string{"hostname": host},
			StartedAt: t0}, Status: store.RunOK, FinishedAt: t0.Add(2 * time.Second),
			Steps: []store.Step{{Seq: 1, Result: metrics.StepResult{Name: "l.i0", Status: metrics.StatusOK, StartedAt: t0, Seconds: 1,
				Primary: "insert", Labels: g.Totals(), ClientCPUSec: clientCPU, HW: hw}, Intervals: []metrics.Interval{iv}}}}
	}
	m, err := mergeParts([]store.Run{part("a", false, 0.5, 100), part("db", true, 0.25, 1000), part("db", false, 0.125, 2000)}, "L", "elsewhere", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := m.Steps[0].Result
	if got := r.PrimaryCount(); got != 300 || r.ClientCPUSec != 0.875 || m.Params["clients"] != 3 || m.Steps[0].Intervals[0].Labels[0].Rows != 300 {
		t.Errorf("merged: %d rows, client CPU %v, clients %v, interval rows %d; want 300, 0.875, 3, 300", got, r.ClientCPUSec, m.Params["clients"], m.Steps[0].Intervals[0].Labels[0].Rows)
	}
	if r.HW == nil || !r.HW.Server.Known || r.HW.Client.CPUSec != 0.375 {
		t.Errorf("merged HW %+v: want the server host's part's, with its two parts' client CPU (0.375 s)", r.HW)
	}
	if !strings.Contains(r.Note, "client CPU by host: a 0.50 s, db 0.25 s, db 0.12 s") {
		t.Errorf("note %q", r.Note)
	}
	m, err = mergeParts([]store.Run{part("a", false, 0.5, 100), part("b", false, 0.25, 200)}, "L", "c", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Steps[0].Result; r.HW != nil || !strings.Contains(r.Note, "no machine or server figures") {
		t.Errorf("no part on the server's or coordinator's host: HW %+v, note %q", r.HW, r.Note)
	}
	// A part whose step started after the other's ended (a retry that ran alone): the
	// merged step and run are failed, saying so.
	late := part("b", false, 0.25, 200)
	late.Steps[0].Result.StartedAt = t0.Add(5 * time.Second)
	m, err = mergeParts([]store.Run{part("a", false, 0.5, 100), late}, "L", "c", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Steps[0].Result; m.Status != store.RunFailed || r.Status != metrics.StatusFailed ||
		!strings.Contains(r.Error, "part 2's l.i0 started at ") || !strings.Contains(m.Env[EnvAgentsPartial], "the parts never ran it together") {
		t.Errorf("parts that never overlapped: run %s, step %s %q, %s %q: want failed, saying so", m.Status, r.Status, r.Error, EnvAgentsPartial, m.Env[EnvAgentsPartial])
	}
	// A part whose barrier was not passed (it came again after the others went on): its
	// step failed before its load. The merged run is failed and not whole, saying why;
	// the audits are every part's.
	again := part("b", false, 0, 200)
	again.Status = store.RunFailed
	again.Steps[0].Result.Status, again.Steps[0].Result.Error = metrics.StatusFailed, BarrierName+": step l.i0: part 2 of 2 arrives again"
	again.Steps[0].Result.Labels = nil
	first := part("a", false, 0.5, 100)
	first.Steps[0].Result.Audit = metrics.Audit{Status: "ok", Detail: "pi1: 100 rows"}
	again.Steps[0].Result.Audit = metrics.Audit{Status: "ok", Detail: "pi2: 0 rows"}
	m, err = mergeParts([]store.Run{first, again}, "L", "c", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Steps[0].Result; m.Status != store.RunFailed || r.Status != metrics.StatusFailed ||
		!strings.Contains(m.Env[EnvAgentsPartial], "part 2's l.i0 did not start with the other parts' (agents barrier: step l.i0: part 2 of 2 arrives again)") ||
		!strings.Contains(r.Audit.Detail, "part 1: pi1") || !strings.Contains(r.Audit.Detail, "part 2: pi2") {
		t.Errorf("a part that did not pass its barrier: run %s, step %s %q, %s %q, audit %q: want failed, not whole, saying why, both parts' audits",
			m.Status, r.Status, r.Error, EnvAgentsPartial, m.Env[EnvAgentsPartial], r.Audit.Detail)
	}
	// A part that stopped before its second step (its agent killed in the first): the
	// merged run has both steps, the second not ok, naming the part. Before, the merge
	// failed ("part 2 ran 1 steps, part 1 2") and nothing was stored.
	two := part("a", false, 0.5, 100)
	qp := two.Steps[0]
	qp.Seq, qp.Result.Name = 2, "qp100"
	two.Steps = append(two.Steps, qp)
	m, err = mergeParts([]store.Run{two, part("b", false, 0.25, 200)}, "L", "c", nil, nil)
	if err != nil {
		t.Fatalf("a part with fewer steps: %v", err)
	}
	if len(m.Steps) != 2 || m.Steps[1].Result.Status != metrics.StatusInterrupted || m.Status != store.RunFailed ||
		m.Steps[1].Result.Error != "part 2: not run: this part stopped before it" {
		t.Errorf("a part with fewer steps: run %s, %d steps, the last %+v", m.Status, len(m.Steps), m.Steps[len(m.Steps)-1].Result)
	}
}
