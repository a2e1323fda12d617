package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeDriver answers a cluster's queries from tables per node.
type fakeDriver struct {
	tables  []map[string]TableSum
	catchUp error
}

func (d *fakeDriver) CatchUp(context.Context, *Cluster) error { return d.catchUp }
func (d *fakeDriver) Tables(_ context.Context, _ *Cluster, i int) (map[string]TableSum, error) {
	return d.tables[i], nil
}
func (d *fakeDriver) Figures(context.Context, *Cluster, int) (map[string]float64, error) {
	return nil, nil
}
func (d *fakeDriver) Close() {}

// TestClusterAgree: nodes agree when every table of node 0 has its rows and checksum on
// every node; a missing table, another count, other contents or an extra table is a
// difference naming the node and table; a node that does not catch up is an error.
func TestClusterAgree(t *testing.T) {
	t.Parallel()
	same := map[string]TableSum{"pi1": {Rows: 10, Sum: "a"}, "pi2": {Rows: 5, Sum: "b"}}
	for _, tc := range []struct {
		name  string
		other map[string]TableSum
		want  string
	}{
		{"agree", same, ""},
		{"missing", map[string]TableSum{"pi1": {Rows: 10, Sum: "a"}}, "node 2: table pi2 missing (node 0: 5 rows)"},
		{"rows", map[string]TableSum{"pi1": {Rows: 9, Sum: "a"}, "pi2": {Rows: 5, Sum: "b"}}, "node 2: pi1: 9 rows (node 0: 10)"},
		{"contents", map[string]TableSum{"pi1": {Rows: 10, Sum: "x"}, "pi2": {Rows: 5, Sum: "b"}}, "node 2: pi1: 10 rows as on node 0, but other contents"},
		{"extra", map[string]TableSum{"pi1": {Rows: 10, Sum: "a"}, "pi2": {Rows: 5, Sum: "b"}, "t": {}}, "node 2: table t that node 0 does not have"},
	} {
		c := &Cluster{Engine: "fake", Nodes: make([]*Instance, 3), Driver: &fakeDriver{tables: []map[string]TableSum{same, same, tc.other}}}
		a, err := c.Agree(context.Background(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(a.Differences, "\n")
		if tc.want == "" && got != "" || tc.want != "" && !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: differences %q, want %q", tc.name, got, tc.want)
		}
		if sum := a.Summary(3); (tc.want == "") != strings.HasPrefix(sum, "3 nodes agree: pi1 10 rows, pi2 5 rows") {
			t.Errorf("%s: summary %q", tc.name, sum)
		}
	}
	c := &Cluster{Engine: "fake", Nodes: make([]*Instance, 2), Driver: &fakeDriver{catchUp: errors.New("behind")}}
	if _, err := c.Agree(context.Background(), time.Second); err == nil || !strings.Contains(err.Error(), "did not catch up") {
		t.Errorf("a node behind: %v", err)
	}
}
