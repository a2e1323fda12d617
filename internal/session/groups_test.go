package session

import (
	"slices"
	"testing"

	"github.com/dbperf/dbperf/internal/workload/tpcc"
)

// TestStoreGroupsPerMinute (issue 41): TPROC-C's run group reaches the store with its
// figures per minute, NOPM over new-order alone and TPM over the five committed types,
// so that comparisons of its runs show them.
func TestStoreGroupsPerMinute(t *testing.T) {
	t.Parallel()
	for _, g := range storeGroups(tpcc.New().Meta().Groups) {
		if g.Name != "run" {
			continue
		}
		if len(g.PerMinute) != 2 || g.PerMinute[0].Name != "NOPM" || !slices.Equal(g.PerMinute[0].Labels, []string{"new-order"}) ||
			g.PerMinute[1].Name != "TPM" || len(g.PerMinute[1].Labels) != 5 || slices.Contains(g.PerMinute[1].Labels, "new-order-rollback") {
			t.Errorf("run group's figures per minute: %+v", g.PerMinute)
		}
		return
	}
	t.Error("TPROC-C has no run group")
}
