package fleet

import (
	"maps"
	"testing"

	"github.com/dbperf/dbperf/internal/store"
)

// TestRunEnv: a run its agent started records the job's identity in its env; one started
// by hand records nothing.
func TestRunEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{EnvJob: "42", EnvAttempt: "2", EnvAgent: "h-1", EnvAgentClass: "c8r32", EnvAgentHost: "h"}
	got := RunEnv(func(k string) string { return env[k] })
	want := map[string]string{store.EnvQueueJob: "42", store.EnvQueueAttempt: "2", store.EnvAgent: "h-1",
		store.EnvAgentClass: "c8r32", store.EnvAgentHost: "h"}
	if !maps.Equal(got, want) {
		t.Errorf("RunEnv = %v, want %v", got, want)
	}
	if got := RunEnv(func(string) string { return "" }); got != nil {
		t.Errorf("by hand: RunEnv = %v, want nil", got)
	}
}
