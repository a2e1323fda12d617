package fleet

import (
	"slices"
	"strings"
	"testing"
)

// TestJobEnviron: a job's command gets the agent's environment less what the agent sets
// itself (the store's DSN, the job's identity), and environ reads such a list, the last
// of a key winning.
func TestJobEnviron(t *testing.T) {
	t.Setenv("DBPERF_RESULTS", "postgres://old")
	t.Setenv(EnvJob, "41")
	t.Setenv("DBPERF_SPILL_DIR", "/spill")
	env := jobEnviron()
	for _, kv := range env {
		if strings.HasPrefix(kv, "DBPERF_RESULTS=") || strings.HasPrefix(kv, EnvJob+"=") {
			t.Errorf("the agent's own %s reached the job's environment", kv)
		}
	}
	if !slices.Contains(env, "DBPERF_SPILL_DIR=/spill") {
		t.Error("DBPERF_SPILL_DIR did not reach the job's environment")
	}
	get := environ(append(env, "DBPERF_RESULTS=postgres://new", EnvJob+"=42", EnvJob+"=43"))
	if get("DBPERF_RESULTS") != "postgres://new" || get(EnvJob) != "43" || get("DBPERF_SPILL_DIR") != "/spill" || get("NOPE") != "" {
		t.Errorf("environ: %q %q %q", get("DBPERF_RESULTS"), get(EnvJob), get("DBPERF_SPILL_DIR"))
	}
}
