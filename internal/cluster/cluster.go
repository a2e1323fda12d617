// Package cluster runs a managed cluster for a benchmark run (dbperf run --cluster N,
// docs/clusters.md): it starts a PostgreSQL primary with synchronous streaming standbys
// or a Galera cluster of MariaDB nodes on 127.0.0.1 (server.ClusterEngine), every
// replication link through an in-process proxy of internal/netdelay whose delay
// (--node-latency, --node-jitter) is set once the cluster formed, and describes it in the
// run's env (the Env* keys).
//
// While the run measures, a Run is
//   - the step runner's profiler (runner.Profiler): each node's CPU seconds and share,
//     peak memory, the engine's replication counters and gauges per step, handed over by
//     StepFigures as "cluster.nodeI.…" metrics;
//   - the audit of every node after each step (Wrap): once the workload's own audit on
//     node 0 passed, every node must catch up within a bound and hold node 0's tables,
//     rows and contents;
//   - a watch on every node's server process: a node that dies fails the step it died in,
//     naming it ("node 2 (standby, pid 4711) died during qp100"), and when node 0 would
//     wait for it forever (server.WaitEnder: a PostgreSQL primary's commits waiting for a
//     synchronous standby) node 0's sessions waiting for it are ended, so no session
//     waits more than DeathGrace for a dead node;
//   - with --spread, a handle on every node through which the runner places each step's
//     sessions (OpenSpread, Spread).
//
// The command line builds Options from its flags, calls Start, and wires the Run into
// its target, its record (StepFigures) and its profilers.
package cluster

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/netdelay"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/server"
)

// The keys of the run's env a cluster sets.
const (
	// EnvCluster is the cluster's topology (server.Cluster.Topology).
	EnvCluster = "cluster"
	// EnvClusterNodes names each node's process, port and data dir.
	EnvClusterNodes = "cluster_nodes"
	// EnvNodeLatency says what distance the run put between the nodes.
	EnvNodeLatency = "node_latency"
	// EnvClientNodes says where each step's sessions went (--spread or node 0).
	EnvClientNodes = "client_nodes"
)

// agreeTimeout bounds the wait for every node to catch up before a step's cluster audit
// compares them.
const agreeTimeout = 2 * time.Minute

// DeathGrace bounds how long after a node's server process died the run's sessions may
// still wait for it (a PostgreSQL primary's commits waiting for a synchronous standby that
// will never answer): by then they are ended and the step fails, naming the node
// (docs/clusters.md).
const DeathGrace = 5 * time.Second

// poll is how often a step samples its cluster's lags and the nodes' memory.
const poll = 500 * time.Millisecond

// Options are what a managed cluster starts with.
type Options struct {
	// Engine is the engine's name as the user gave it (--engine), for messages.
	Engine string
	// Server is the server engine whose nodes start; it must be a server.ClusterEngine.
	Server server.Engine
	// Node is every node's server options: WorkDir is the directory all the nodes' dirs
	// go under; Version is installed on first use (server.Ensure).
	Node server.Options
	// Nodes is how many nodes (2 to 9).
	Nodes int
	// Latency is the round trip added to every replication link once the cluster formed,
	// Jitter how much it varies by (±).
	Latency, Jitter time.Duration
	// Spread: each step's sessions go on the nodes in turn (the env says so; OpenSpread
	// opens the handles).
	Spread bool
	// Keep: Close leaves the nodes' data directories, saying where through Out.
	Keep bool
	// Out says a line to the user (Close: the kept data directories); nil says nothing.
	Out func(string)
}

// Run is a managed cluster a run measures: its nodes, the proxies on its links, the
// per-node figures of each step and the audit of every node after each step.
type Run struct {
	opts    Options
	cl      *server.Cluster
	proxies []*netdelay.Proxy
	sampler *hwstat.Sampler
	// spread, with --spread, is where the runner places each step's sessions: a handle
	// on every node (OpenSpread).
	spread *runner.Spread
	// stopCluster stops the nodes (nil before they started).
	stopCluster func()

	mu      sync.Mutex
	cur     *step
	figures map[string]map[string]float64 // finished steps' node figures
	// deaths are the nodes whose server process exited while the run used the cluster
	// (watch), in the order found.
	deaths []*nodeDeath
	// watchStop ends watch's goroutines (stopWatch, before the cluster is stopped on
	// purpose); watchWG waits for them.
	watchStop chan struct{}
	watchWG   sync.WaitGroup
}

var _ runner.Profiler = (*Run)(nil)

// Start starts o's cluster under o.Node.WorkDir (every replication link through a proxy,
// its delay set once the cluster formed) and watches its nodes. The caller closes the Run
// (Close) once the run is over; when Start fails it has stopped whatever it started.
func Start(ctx context.Context, o Options) (*Run, error) {
	ce, ok := o.Server.(server.ClusterEngine)
	if !ok {
		return nil, fmt.Errorf("--cluster: dbperf cannot start a cluster of %s", o.Engine)
	}
	if err := server.EnsureFrom(ctx, o.Server, o.Node.MavenURL, o.Node.CacheDir, o.Node.Version); err != nil {
		return nil, err
	}
	r := &Run{opts: o, figures: map[string]map[string]float64{}}
	// The proxies live as long as the run's cluster, not the context of its start.
	pctx := context.WithoutCancel(ctx)
	link := func(ctx context.Context, from, to int, addr string) (string, error) {
		// At no delay while the cluster forms: its handshakes and state transfers are not
		// what is measured.
		p, err := netdelay.Listen(pctx, fmt.Sprintf("node %d → node %d", from, to), addr, 0, 0)
		if err != nil {
			return "", err
		}
		r.proxies = append(r.proxies, p)
		return p.Addr(), nil
	}
	cl, err := ce.StartCluster(ctx, o.Node, server.ClusterOptions{Nodes: o.Nodes, Link: link})
	if err != nil {
		r.Close()
		return nil, err
	}
	r.cl = cl
	r.stopCluster = func() { r.stop(ctx) }
	r.watch(pctx)
	if err := r.ready(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// ready checks that every link carries the cluster's replication, sets the links' delay
// and prepares the nodes' sampling.
func (r *Run) ready() error {
	for _, p := range r.proxies {
		if st := p.Stats(); st.Active == 0 {
			return fmt.Errorf("%s cluster: no connection through the link %s (%s → %s): the nodes do not replicate through dbperf's proxy", r.opts.Engine, p.Name, p.Addr(), p.Target)
		}
		if err := p.SetDelay(r.opts.Latency, r.opts.Jitter); err != nil {
			return err
		}
	}
	var err error
	r.sampler, err = hwstat.New()
	return err
}

// stop ends the watch and stops the nodes (stopping them is no death), then keeps or
// removes their data directories (Options.Keep).
func (r *Run) stop(ctx context.Context) {
	r.stopWatch()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	_ = r.cl.Stop(sctx)
	if r.opts.Keep {
		for i, in := range r.cl.Nodes {
			r.say(fmt.Sprintf("kept the %s data directory of node %d: %s", r.opts.Engine, i, in.DataDir))
		}
	} else {
		_ = r.cl.Remove()
	}
}

// say passes a line to Options.Out, when set.
func (r *Run) say(line string) {
	if r.opts.Out != nil {
		r.opts.Out(line)
	}
}

// Close stops the nodes, keeping or removing their data (Options.Keep), and closes the
// proxies. Close the handles OpenSpread opened before.
func (r *Run) Close() {
	if r.stopCluster != nil {
		r.stopCluster()
		r.stopCluster = nil
	}
	for _, p := range r.proxies {
		_ = p.Close()
	}
}

// Node0 is the cluster's node 0: the primary, or the Galera node the run's handle opens.
func (r *Run) Node0() *server.Instance { return r.cl.Nodes[0] }

// Topology describes the cluster (server.Cluster.Topology).
func (r *Run) Topology() string { return r.cl.Topology }

// Env is what the run's env stores about the cluster, under the Env* keys.
func (r *Run) Env() map[string]string {
	env := map[string]string{
		EnvCluster:      r.cl.Topology,
		EnvClusterNodes: r.nodesLine(),
		EnvNodeLatency:  r.latencyLine(),
		EnvClientNodes:  "every client on node 0",
	}
	if r.opts.Spread {
		env[EnvClientNodes] = spreadLine(r.cl)
	}
	return env
}

// nodesLine names each node's process, port and data dir for the run's env.
func (r *Run) nodesLine() string {
	var parts []string
	for i, in := range r.cl.Nodes {
		parts = append(parts, fmt.Sprintf("node %d: pid %d, 127.0.0.1:%d, %s", i, in.PID(), in.Port, in.DataDir))
	}
	return strings.Join(parts, "; ")
}

// latencyLine says what distance the run put between the nodes.
func (r *Run) latencyLine() string {
	var links []string
	for _, p := range r.proxies {
		links = append(links, p.Name)
	}
	what := fmt.Sprintf("%s round trip", r.opts.Latency)
	if r.opts.Latency == 0 {
		what = "0 (no delay added)"
	}
	if r.opts.Jitter > 0 {
		what += fmt.Sprintf(" ± %s jitter", r.opts.Jitter)
	}
	return fmt.Sprintf("%s on every replication link, through dbperf's in-process proxy (internal/netdelay): %s", what, strings.Join(links, ", "))
}
