package report

import (
	"strings"
	"testing"
)

// TestDistanceNote: configs run on clusters at different node latencies (or one server
// beside a cluster) get a note naming each one's distance and why commits pay for it;
// configs at the same distance get none.
func TestDistanceNote(t *testing.T) {
	t.Parallel()
	group := func(name string, env map[string]string) GroupReport {
		return GroupReport{Group: Group{Name: name}, Runs: []RunReport{{Env: env}}}
	}
	near := map[string]string{"cluster": "primary + 2 standbys", "node_latency": "0 (no delay added) on every replication link, through …"}
	far := map[string]string{"cluster": "primary + 2 standbys", "node_latency": "5ms round trip on every replication link, through …"}
	c := Comparison{Groups: []GroupReport{group("single", nil), group("c0", near), group("c5", far)}}
	n, ok := c.distanceNote()
	if !ok || n.Kind != NoteDistance ||
		!strings.HasPrefix(n.Text, "distance: single: one server; c0: cluster, no delay added; c5: cluster, 5ms round trip between nodes. ") ||
		!strings.Contains(n.Text, "at least one round trip") {
		t.Errorf("note %+v %v", n, ok)
	}
	if _, ok := (Comparison{Groups: []GroupReport{group("a", far), group("b", far)}}).distanceNote(); ok {
		t.Error("a note for configs at the same distance")
	}
}
