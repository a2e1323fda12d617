package metrics

import (
	"testing"
	"time"
)

// TestMergeLabels: the step totals of two parts that measured one step at once merge into
// the totals one recorder of all their operations would have: counts add up and the
// percentiles are those of the merged histograms, not an average of the parts'.
func TestMergeLabels(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(0, 0)
	record := func(r *Recorder, fromUS, toUS int64) {
		for us := fromUS; us <= toUS; us++ {
			r.Record(t0, t0, t0.Add(time.Duration(us)*time.Microsecond), 1, nil)
		}
	}
	spec := LabelSpec{Label: "point-query", Role: "query", Unit: UnitOps}
	a, b, all := NewRegistry(t0), NewRegistry(t0), NewRegistry(t0)
	record(a.Recorder(spec), 1, 1000)
	record(b.Recorder(spec), 1001, 9000)
	ra, rb := all.Recorder(spec), all.Recorder(spec)
	record(ra, 1, 1000)
	record(rb, 1001, 9000)
	for _, g := range []*Registry{a, b, all} {
		g.Tick(t0.Add(time.Second))
	}
	got, err := MergeLabels([][]LabelStats{a.Totals(), b.Totals()})
	if err != nil {
		t.Fatal(err)
	}
	want := all.Totals()[0]
	if len(got) != 1 || got[0].Statements != 9000 || got[0].Rows != 9000 || got[0].Service != want.Service {
		t.Fatalf("merged %+v, want %d statements and the latency of one recorder of all, %+v", got, 9000, want.Service)
	}
	if p := a.Totals()[0].Service.P99; got[0].Service.P99 <= p {
		t.Errorf("merged p99 %d µs should be the second part's, above the first part's %d µs", got[0].Service.P99, p)
	}
	noHist := a.Totals()
	noHist[0].Hist = nil
	if _, err := MergeLabels([][]LabelStats{noHist, b.Totals()}); err == nil {
		t.Error("a part without a histogram merged: its percentiles cannot be")
	}
}
