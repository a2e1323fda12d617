package server

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// ClusterOptions say how a managed cluster is made (dbperf run --cluster N).
type ClusterOptions struct {
	// Nodes is how many servers: PostgreSQL a primary and Nodes-1 streaming standbys,
	// MariaDB Nodes Galera nodes.
	Nodes int
	// Link, when set, is asked once per replication link before the node that dials it
	// starts: node from will dial addr ("127.0.0.1:PORT") of node to; it returns the
	// address to dial instead (the cli's netdelay proxy in front of addr), or addr. nil:
	// nodes dial each other directly.
	Link func(ctx context.Context, from, to int, addr string) (string, error)
}

// ClusterEngine is a server engine that can start a replicated cluster of itself.
type ClusterEngine interface {
	Engine
	// StartCluster starts o.Nodes servers from the profile o.Profile under o.WorkDir, each
	// with its own data dir and ports on 127.0.0.1, replicating to one another, and waits
	// until every node serves the benchmark database. Node 0 is where clients go by
	// default (PostgreSQL's primary, Galera's bootstrap node). On any failure nothing is
	// left running.
	StartCluster(ctx context.Context, o Options, c ClusterOptions) (*Cluster, error)
}

// Cluster is a running managed cluster.
type Cluster struct {
	Engine string
	// Nodes are the servers, node 0 first. Each is an Instance of its own (dir, ports,
	// log, process group); they share the superuser's password.
	Nodes []*Instance
	// Topology says what the cluster is, for the run's env: "primary + 2 streaming
	// standbys, synchronous_standby_names = 'ANY 2 (node1, node2)', synchronous_commit =
	// remote_apply".
	Topology string
	// Links are the replication links as the nodes dial them.
	Links []ClusterLink
	// Driver has the engine's cluster queries: catching up, node figures, table sums.
	Driver ClusterDriver
	// ReadOnlyStandbys: only node 0 takes writes, the other nodes serve reads only
	// (PostgreSQL's hot standbys); false: every node takes writes (Galera's multi-primary
	// nodes). Each node's DSN is its Instance's.
	ReadOnlyStandbys bool
}

// ClusterLink is one replication link: node From dials node To at Addr (a proxy's or the
// node's own address).
type ClusterLink struct {
	From, To int
	Addr     string
}

// ClusterDriver is what an engine knows how to ask its cluster's nodes.
type ClusterDriver interface {
	// CatchUp waits until every node has applied what node 0 committed so far.
	CatchUp(ctx context.Context, c *Cluster) error
	// Tables reads each table of the benchmark database on node i: its row count and a
	// checksum of its contents that does not depend on the rows' order.
	Tables(ctx context.Context, c *Cluster, i int) (map[string]TableSum, error)
	// Figures reads node i's replication figures now (engine-specific names: PostgreSQL's
	// standby lags in ms, Galera's cumulative wsrep counters).
	Figures(ctx context.Context, c *Cluster, i int) (map[string]float64, error)
	// Close closes what the driver keeps open (its connections to the nodes).
	Close()
}

// WaitEnder is a ClusterDriver whose node 0 can hold sessions waiting for other nodes
// with no bound of its own: a PostgreSQL primary's commits wait for synchronous standbys,
// forever when one died. EndWaits ends node 0's sessions that wait so (their clients get
// an error) and says how many it ended. dbperf calls it while a node is dead
// (internal/cluster: Run.watch), never otherwise.
type WaitEnder interface {
	EndWaits(ctx context.Context, c *Cluster) (int, error)
}

// TableSum is one table's row count and content checksum on one node.
type TableSum struct {
	Rows int64
	Sum  string
}

// Stop closes the driver's connections and stops every node, the last first (standbys
// before their primary); it removes nothing.
func (c *Cluster) Stop(ctx context.Context) error {
	if c.Driver != nil {
		c.Driver.Close()
	}
	var errs []error
	for i := len(c.Nodes) - 1; i >= 0; i-- {
		if err := c.Nodes[i].Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("node %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// Remove deletes every node's instance dir (the cluster must be stopped).
func (c *Cluster) Remove() error {
	var errs []error
	for _, in := range c.Nodes {
		errs = append(errs, in.Remove())
	}
	return errors.Join(errs...)
}

// PIDs are the nodes' main processes, node 0 first.
func (c *Cluster) PIDs() []int {
	out := make([]int, len(c.Nodes))
	for i, in := range c.Nodes {
		out[i] = in.PID()
	}
	return out
}

// Agreement is the result of comparing every node's tables.
type Agreement struct {
	// Tables are node 0's tables by name.
	Tables map[string]TableSum
	// Differences, one line each: "node 2: pi1: 1000 rows (node 0: 1001)"; none when every
	// node has every table of node 0 with the same rows and contents.
	Differences []string
}

// Agree waits until every node caught up with node 0 (within timeout), then compares
// every node's tables (row counts and content checksums) with node 0's.
func (c *Cluster) Agree(ctx context.Context, timeout time.Duration) (Agreement, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.Driver.CatchUp(cctx, c); err != nil {
		return Agreement{}, fmt.Errorf("%s cluster: nodes did not catch up with node 0 within %s: %w", c.Engine, timeout, err)
	}
	sums := make([]map[string]TableSum, len(c.Nodes))
	for i := range c.Nodes {
		s, err := c.Driver.Tables(cctx, c, i)
		if err != nil {
			return Agreement{}, fmt.Errorf("%s cluster: node %d: read tables: %w", c.Engine, i, err)
		}
		sums[i] = s
	}
	a := Agreement{Tables: sums[0]}
	names := make([]string, 0, len(sums[0]))
	for n := range sums[0] {
		names = append(names, n)
	}
	sort.Strings(names)
	for i := 1; i < len(sums); i++ {
		for _, n := range names {
			want := sums[0][n]
			got, ok := sums[i][n]
			switch {
			case !ok:
				a.Differences = append(a.Differences, fmt.Sprintf("node %d: table %s missing (node 0: %d rows)", i, n, want.Rows))
			case got.Rows != want.Rows:
				a.Differences = append(a.Differences, fmt.Sprintf("node %d: %s: %d rows (node 0: %d)", i, n, got.Rows, want.Rows))
			case got.Sum != want.Sum:
				a.Differences = append(a.Differences, fmt.Sprintf("node %d: %s: %d rows as on node 0, but other contents (checksum %s, node 0 %s)", i, n, got.Rows, got.Sum, want.Sum))
			}
		}
		for n := range sums[i] {
			if _, ok := sums[0][n]; !ok {
				a.Differences = append(a.Differences, fmt.Sprintf("node %d: table %s that node 0 does not have", i, n))
			}
		}
	}
	sort.Strings(a.Differences)
	return a, nil
}

// Summary is the agreement in one line: "3 nodes agree: pi1 12000 rows, …".
func (a Agreement) Summary(nodes int) string {
	names := make([]string, 0, len(a.Tables))
	for n := range a.Tables {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %d rows", n, a.Tables[n].Rows))
	}
	if len(a.Differences) > 0 {
		return fmt.Sprintf("%d nodes disagree: %s", nodes, strings.Join(a.Differences, "; "))
	}
	return fmt.Sprintf("%d nodes agree: %s", nodes, strings.Join(parts, ", "))
}

// NewNodeInstance makes the instance of a cluster's node other than the first: as
// NewInstance (its own private dir), with the cluster's password (the first node's), as a
// copy of its data or a node of its cluster needs.
func NewNodeInstance(e Engine, o Options, first *Instance) (*Instance, error) {
	in, err := NewInstance(e, o)
	if err != nil {
		return nil, err
	}
	in.password = first.password
	return in, nil
}

// LinkAddr is the address node from dials to reach addr on node to: c.Link's answer, or
// addr itself without a Link.
func (c ClusterOptions) LinkAddr(ctx context.Context, from, to int, addr string) (string, error) {
	if c.Link == nil {
		return addr, nil
	}
	a, err := c.Link(ctx, from, to, addr)
	if err != nil {
		return "", fmt.Errorf("link node %d → node %d: %w", from, to, err)
	}
	return a, nil
}
