package report

import (
	"strings"
	"testing"
)

// A run under --server-memory whose database stayed under the limit is warned about; one
// that outgrew it, or had no limit or no size, is not (issue 42).
func TestCachedNote(t *testing.T) {
	step := func(size int64, known bool) StepReport {
		return StepReport{Name: "l.i0", HW: HWReport{DBSizeBytes: size, DBSizeKnown: known}}
	}
	for _, tc := range []struct {
		name  string
		env   string
		steps []StepReport
		want  string // "" for no note
	}{
		{"cached", "128MiB, page cache included (cgroup v1 memory.limit_in_bytes)", []StepReport{step(90<<20, true), step(100<<20, true)},
			"the database stayed under --server-memory 128MiB (0.0977 GiB at its largest)"},
		{"outgrew", "128MiB, page cache included", []StepReport{step(90<<20, true), step(300<<20, true)}, ""},
		{"gibibytes", "2GiB, page cache included", []StepReport{step(1<<30, true)}, "under --server-memory 2GiB"},
		{"no limit", "", []StepReport{step(1<<20, true)}, ""},
		{"no size", "128MiB, page cache included", []StepReport{step(0, false)}, ""},
		{"unreadable", "lots", []StepReport{step(1<<20, true)}, ""},
	} {
		r := RunReport{Env: map[string]string{"server_memory": tc.env}, Steps: tc.steps}
		got := r.cachedNote()
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if tc.want != "" && !strings.Contains(strings.Join(r.Notes(), "\n"), tc.want) {
			t.Errorf("%s: not among the run's notes", tc.name)
		}
	}
}
