package engine

import (
	"testing"
)

func TestArgs(t *testing.T) {
	var a Args
	for round := range 2 { // the second round reuses the memory Reset kept
		a.Reset()
		a.Int(-7)
		a.Text("hello")
		a.Null()
		a.Text2("aaa", "XyZ")
		a.Text("")
		a.Int(1 << 40)
		if a.Len() != 6 {
			t.Fatalf("round %d: Len = %d", round, a.Len())
		}
		want := []struct {
			kind ArgKind
			i    int64
			s    string
		}{{ArgInt, -7, ""}, {ArgText, 0, "hello"}, {ArgNull, 0, ""}, {ArgText, 0, "aaaXyZ"}, {ArgText, 0, ""}, {ArgInt, 1 << 40, ""}}
		for i, w := range want {
			if a.Kind(i) != w.kind {
				t.Errorf("round %d arg %d: kind %d, want %d", round, i, a.Kind(i), w.kind)
				continue
			}
			switch w.kind {
			case ArgInt:
				if a.IntAt(i) != w.i {
					t.Errorf("round %d arg %d: %d, want %d", round, i, a.IntAt(i), w.i)
				}
			case ArgText:
				if got := string(a.TextAt(i)); got != w.s {
					t.Errorf("round %d arg %d: %q, want %q", round, i, got, w.s)
				}
			}
		}
		if got := a.String(); got != `(-7, "hello", NULL, "aaaXyZ", "", 1099511627776)` {
			t.Errorf("String = %s", got)
		}
	}
	// Appending after reading must not change what TextAt returned (capacity is clipped).
	v := a.TextAt(1)
	_ = append(v, '!')
	if got := string(a.TextAt(3)); got != "aaaXyZ" {
		t.Errorf("appending to a returned text changed the next one: %q", got)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		a.Reset()
		for range 100 {
			a.Text("2026-01-01 00:00:00")
			a.Int(123456)
			a.Text2("aaaaaaaaaaaa", "Zm9v")
		}
	}); allocs != 0 {
		t.Errorf("filling a reused Args allocates %.0f times", allocs)
	}
}

func TestNewArgs(t *testing.T) {
	a := NewArgs(1, int32(2), int64(3), "x", nil)
	if got := a.String(); got != `(1, 2, 3, "x", NULL)` {
		t.Errorf("NewArgs = %s", got)
	}
	var nilArgs *Args
	if nilArgs.Len() != 0 {
		t.Error("a nil *Args has arguments")
	}
	defer func() {
		if recover() == nil {
			t.Error("NewArgs accepted a float")
		}
	}()
	NewArgs(1.5)
}
