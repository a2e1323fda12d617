package workload

import "testing"

func TestStream(t *testing.T) {
	first := func(seed int64, names ...string) uint64 { return Stream(seed, names...).Uint64() }
	if first(1, "insertbench", "l.i0", "insert", "1") != first(1, "insertbench", "l.i0", "insert", "1") {
		t.Fatal("same seed and names gave different streams")
	}
	base := first(1, "insertbench", "l.i0", "insert", "1")
	for _, other := range []uint64{
		first(2, "insertbench", "l.i0", "insert", "1"),
		first(1, "insertbench", "l.i0", "insert", "2"),
		first(1, "insertbench", "l.i1", "insert", "1"),
		first(1, "insertbench", "l.i0", "query", "1"),
		first(1, "insertbenchl.i0", "", "insert", "1"),
	} {
		if other == base {
			t.Errorf("streams collide: %x", other)
		}
	}
}
