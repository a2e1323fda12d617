package sweep

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/config"
)

// TestPoints: the cross product's order (versions outer, latencies innermost), each
// point's name and label, the clients axis named only when it is one, and every refused
// point named in the error.
func TestPoints(t *testing.T) {
	a := Axes{Versions: []string{"13", ""}, Profiles: []NamedProfile{{Profile: "default"}, {Name: "b", Profile: "cached"}},
		Think: map[string]time.Duration{"b": time.Millisecond}, Clients: []int{1, 4},
		Vary: []VaryAxis{{Flag: "rows", Values: []string{"10", "20"}}}}
	pts, err := Points(a, "s", func(Point) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pts {
		names = append(names, p.Name())
		if p.Label != "s/"+p.Name() {
			t.Errorf("%s: label %q", p.Name(), p.Label)
		}
		if (p.As == "b") != (p.Think == time.Millisecond) {
			t.Errorf("%s: think %s", p.Name(), p.Think)
		}
	}
	if len(names) != 16 || names[0] != "13/default/c1/rows=10" || names[1] != "13/default/c1/rows=20" ||
		names[4] != "13/b/c1/rows=10" || names[15] != "default/b/c4/rows=20" {
		t.Errorf("points %v", names)
	}

	a = Axes{Versions: []string{""}, Profiles: []NamedProfile{{Name: "a", Profile: "default"}}, Clients: []int{2},
		Latencies: []time.Duration{0, 5 * time.Millisecond}, Embedded: true}
	pts, err = Points(a, "s", func(Point) error { return nil })
	if err != nil || len(pts) != 2 || pts[1].Name() != "a/lat=5ms" || pts[1].Label != "s/a/lat=5ms" || pts[0].Clients != 2 {
		t.Errorf("latency axis: %+v %v", pts, err)
	}

	a = Axes{Versions: []string{"13", "15"}, Profiles: []NamedProfile{{Profile: "default"}}, Clients: []int{1}}
	_, err = Points(a, "s", func(p Point) error {
		if p.Version == "15" {
			return errors.New("not installed")
		}
		return nil
	})
	if err == nil || err.Error() != "15/default: not installed" {
		t.Errorf("refused point: %v", err)
	}
}

// TestOnePoint: --point picks its point alone, or names every point when none matches.
func TestOnePoint(t *testing.T) {
	pts := []Point{{Profile: "a", Embedded: true}, {Profile: "b", Embedded: true}}
	got, err := OnePoint(pts, "b")
	if err != nil || len(got) != 1 || got[0].Name() != "b" {
		t.Errorf("OnePoint b: %v %v", got, err)
	}
	if _, err := OnePoint(pts, "c"); err == nil || !strings.HasSuffix(err.Error(), "its points: a, b") {
		t.Errorf("OnePoint c: %v", err)
	}
}

// TestCrossVary: every combination, the last axis innermost; one empty one without axes.
func TestCrossVary(t *testing.T) {
	if got := CrossVary(nil); len(got) != 1 || got[0] != nil {
		t.Errorf("no axes: %v", got)
	}
	got := CrossVary([]VaryAxis{{Flag: "x", Values: []string{"1", "2"}}, {Flag: "y", Values: []string{"a", "b", "c"}}})
	var flat []string
	for _, c := range got {
		flat = append(flat, c[0][1]+c[1][1])
	}
	if want := []string{"1a", "1b", "1c", "2a", "2b", "2c"}; !slices.Equal(flat, want) {
		t.Errorf("CrossVary: %v, want %v", flat, want)
	}
}

// TestDefaultsAndLabel: an axis not given is the sweep's own configuration's; a sweep
// without --label is named by its workload, engine (storage engine told apart) and start.
func TestDefaultsAndLabel(t *testing.T) {
	cfg := &config.Run{Workload: "w", Engine: "mariadb", Profile: "cached", Clients: 3}
	a := Axes{Clients: []int{1, 2}}.Defaults(cfg)
	if !slices.Equal(a.Versions, []string{""}) || len(a.Profiles) != 1 || a.Profiles[0] != (NamedProfile{Profile: "cached"}) || !slices.Equal(a.Clients, []int{1, 2}) {
		t.Errorf("defaults: %+v", a)
	}
	if a := (Axes{}).Defaults(cfg); !slices.Equal(a.Clients, []int{3}) {
		t.Errorf("default clients: %v", a.Clients)
	}
	at := time.Date(2026, 11, 28, 13, 4, 5, 0, time.UTC)
	if got := Label(cfg, at); got != "sweep-w-mariadb-innodb-20261128-130405" {
		t.Errorf("Label = %q", got)
	}
	cfg.Label = "mine"
	if got := Label(cfg, at); got != "mine" {
		t.Errorf("Label with --label = %q", got)
	}
}
