package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/netdelay"
	"github.com/dbperf/dbperf/internal/probe"
	"github.com/dbperf/dbperf/internal/record"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/workload"
)

// Managed clusters (dbperf run --cluster N, issue 28): the run's env keys.
const (
	envCluster      = "cluster"
	envClusterNodes = "cluster_nodes"
	envNodeLatency  = "node_latency"
	envClientNodes  = "client_nodes"
)

// clusterAgreeTimeout bounds the wait for every node to catch up before a step's
// cluster audit compares them.
const clusterAgreeTimeout = 2 * time.Minute

// clusterDeathGrace bounds how long after a node's server process died the run's
// sessions may still wait for it (a PostgreSQL primary's commits waiting for a
// synchronous standby that will never answer): by then they are ended and the step fails,
// naming the node (docs/clusters.md).
const clusterDeathGrace = 5 * time.Second

// clusterPoll is how often a step samples its cluster's lags and the nodes' memory.
const clusterPoll = 500 * time.Millisecond

// clusterFlags are --cluster, --node-latency, --node-jitter and --spread.
type clusterFlags struct {
	nodes   int
	latency string
	jitter  string
	spread  bool
}

// add registers the cluster flags on fl.
func (f *clusterFlags) add(fl *pflag.FlagSet) {
	fl.IntVar(&f.nodes, "cluster", 0, "with --managed: start a cluster of N nodes on 127.0.0.1 (postgres: a primary and N-1 synchronous streaming standbys, synchronous level by --profile sync-on|sync-remote-write|sync-remote-apply; mariadb: N Galera nodes) and audit every node after every step (docs/clusters.md)")
	fl.StringVar(&f.latency, "node-latency", "", "with --cluster: round-trip delay added to every replication link between nodes by dbperf's in-process proxy, e.g. 1ms, 5ms (default 0: links through the proxy, no delay); dbperf sweep takes a list, e.g. 0,1ms,5ms")
	fl.StringVar(&f.jitter, "node-jitter", "", "with --node-latency: the round trip varies by up to ± this much (uniform per chunk, order kept)")
	fl.BoolVar(&f.spread, "spread", false, "with --cluster: each step's sessions on the nodes in turn instead of all on node 0 (mariadb: every session, each Galera node takes writes; postgres: the read-only sessions, such as queries, on the standbys, writers on the primary); each step's note says which session went where (docs/clusters.md)")
}

// apply checks the cluster flags' values and sets them in cfg.
func (f *clusterFlags) apply(cfg *config.Run, changed func(string) bool) []error {
	var errs []error
	if changed("cluster") {
		if f.nodes < 2 || f.nodes > 9 {
			errs = append(errs, fmt.Errorf("--cluster %d: a cluster has 2 to 9 nodes", f.nodes))
		} else {
			cfg.Cluster = f.nodes
		}
	}
	if changed("node-latency") {
		d, err := parseNodeLatency(f.latency)
		if err != nil {
			errs = append(errs, fmt.Errorf("--node-latency %w", err))
		} else {
			cfg.NodeLatency = d
		}
	}
	if changed("node-jitter") {
		d, err := parseNodeLatency(f.jitter)
		if err != nil {
			errs = append(errs, fmt.Errorf("--node-jitter %w", err))
		} else {
			cfg.NodeJitter = d
		}
	}
	cfg.Spread = f.spread
	return errs
}

// parseNodeLatency reads one delay: a Go duration ("5ms", "500us") or a number of
// milliseconds ("5", "0").
func parseNodeLatency(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if ms, err := strconv.ParseFloat(s, 64); err == nil {
		d = time.Duration(ms * float64(time.Millisecond))
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("%q: want a duration such as 5ms or 500us, or milliseconds (5)", s)
	}
	if d < 0 || d > 10*time.Second {
		return 0, fmt.Errorf("%q: want 0 to 10s", s)
	}
	return d, nil
}

// checkCluster refuses cluster flags that cannot apply, one line each.
func checkCluster(cfg *config.Run, meta engine.Meta) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if cfg.Cluster < 2 {
		if cfg.NodeLatency > 0 || cfg.NodeJitter > 0 || cfg.Spread {
			add("--node-latency, --node-jitter and --spread are for a cluster: add --cluster 3")
		}
		return errors.Join(errs...)
	}
	if !cfg.Managed {
		add("--cluster %d starts a cluster of managed servers: add --managed", cfg.Cluster)
	}
	if srv, err := catalog.Server(meta.Name); err != nil || meta.Embedded {
		add("--cluster: --engine %s has no servers to replicate", meta.Name)
	} else if _, ok := srv.(server.ClusterEngine); !ok {
		add("--cluster: dbperf cannot start a cluster of %s", meta.Name)
	}
	if cfg.ServerMemory > 0 || cfg.ServerCPUs > 0 {
		add("--server-memory and --server-cpus limit one server: not a --cluster")
	}
	if cfg.NodeJitter > cfg.NodeLatency {
		add("--node-jitter %s is more than --node-latency %s", cfg.NodeJitter, cfg.NodeLatency)
	}
	if cfg.Spread && (cfg.CPUProfileDir != "" || cfg.Explain) {
		// Both read node 0's server only: sessions on other nodes would be missing.
		add("--spread: --cpu-profile and --explain see node 0's server only: run them without --spread")
	}
	return errors.Join(errs...)
}

// clusterRun is a managed cluster a run measures: its nodes, the proxies on its links,
// the per-node figures of each step and the audit of every node after each step.
type clusterRun struct {
	cl      *server.Cluster
	proxies []*netdelay.Proxy
	sampler *hwstat.Sampler
	// spread, with --spread, is where the runner places each step's sessions: a handle
	// on every node (openSpread).
	spread *runner.Spread

	mu      sync.Mutex
	cur     *clusterStep
	figures map[string]map[string]float64 // finished steps' node figures
	// deaths are the nodes whose server process exited while the run used the cluster
	// (watch), in the order found.
	deaths []*nodeDeath
	// watchStop ends watch's goroutines (stopWatch, before the cluster is stopped on
	// purpose); watchWG waits for them.
	watchStop chan struct{}
	watchWG   sync.WaitGroup
}

// nodeDeath is a node whose server process exited during the run.
type nodeDeath struct {
	node, pid int
	role      string // "primary", "standby" or "node"
	at        time.Time
	// ended is how many of node 0's sessions waiting for the node were ended
	// (server.WaitEnder); endErr the last error ending them.
	ended  int
	endErr error
	// reported: a step's result names it already (stepFigures).
	reported bool
}

// clusterStep is what a step's sampling holds between Start and Stop.
type clusterStep struct {
	name       string
	cpu0       []float64 // each node's process tree CPU seconds at the start
	counters0  map[string]float64
	start      time.Time
	gauges     map[string]float64 // maximum over the step
	sessions   []int              // the step's sessions on each node
	stop, done chan struct{}
}

// openCluster starts cfg's cluster under base (every replication link through a proxy,
// its delay set once the cluster formed) and fills in the target: node 0's DSN and data
// dir, what the run stores about the cluster, and how it is stopped.
func openCluster(ctx context.Context, cfg *config.Run, engineName, base string, t *target, tg *engine.Target,
	closers *[]func(), out func(string)) error {
	srv, err := catalog.Server(engineName)
	if err != nil {
		return err
	}
	ce, ok := srv.(server.ClusterEngine)
	if !ok {
		return fmt.Errorf("--cluster: dbperf cannot start a cluster of %s", engineName)
	}
	o := serverOptions(cfg, base)
	if err := server.Ensure(ctx, srv, o.CacheDir, o.Version); err != nil {
		return err
	}
	cr := &clusterRun{figures: map[string]map[string]float64{}}
	// The proxies live as long as the run's cluster, not the context of its start.
	pctx := context.WithoutCancel(ctx)
	*closers = append(*closers, func() {
		for _, p := range cr.proxies {
			_ = p.Close()
		}
	})
	link := func(ctx context.Context, from, to int, addr string) (string, error) {
		// At no delay while the cluster forms: its handshakes and state transfers are not
		// what is measured.
		p, err := netdelay.Listen(pctx, fmt.Sprintf("node %d → node %d", from, to), addr, 0, 0)
		if err != nil {
			return "", err
		}
		cr.proxies = append(cr.proxies, p)
		return p.Addr(), nil
	}
	cl, err := ce.StartCluster(ctx, o, server.ClusterOptions{Nodes: cfg.Cluster, Link: link})
	if err != nil {
		return err
	}
	cr.cl = cl
	*closers = append(*closers, func() {
		// Stopping the nodes is no death.
		cr.stopWatch()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		_ = cl.Stop(sctx)
		if cfg.Keep {
			for i, in := range cl.Nodes {
				out(fmt.Sprintf("kept the %s data directory of node %d: %s", engineName, i, in.DataDir))
			}
		} else {
			_ = cl.Remove()
		}
	})
	cr.watch(pctx)
	for _, p := range cr.proxies {
		if st := p.Stats(); st.Active == 0 {
			return fmt.Errorf("%s cluster: no connection through the link %s (%s → %s): the nodes do not replicate through dbperf's proxy", engineName, p.Name, p.Addr(), p.Target)
		}
		if err := p.SetDelay(cfg.NodeLatency, cfg.NodeJitter); err != nil {
			return err
		}
	}
	if cr.sampler, err = hwstat.New(); err != nil {
		return err
	}
	n0 := cl.Nodes[0]
	tg.DSN, t.dir, t.serverPID = n0.DSN, n0.DataDir, n0.PID()
	t.settings["dbperf.managed"] = "true"
	t.settings["dbperf.profile"] = n0.Profile
	t.settings["dbperf.profile_text"] = n0.Config
	t.settings["dbperf.dsn"] = RedactDSN(n0.DSN)
	t.settings["dbperf.cluster"] = cl.Topology
	if t.env == nil {
		t.env = map[string]string{}
	}
	t.env[envCluster] = cl.Topology
	t.env[envClusterNodes] = cr.nodesLine()
	t.env[envNodeLatency] = cr.latencyLine(cfg)
	t.env[envClientNodes] = "every client on node 0"
	if cfg.Spread {
		t.env[envClientNodes] = spreadLine(cl)
	}
	t.cluster = cr
	out(fmt.Sprintf("cluster: %s; %s", cl.Topology, t.env[envNodeLatency]))
	return nil
}

// role is node i's part in the cluster, as a death names it.
func (cr *clusterRun) role(i int) string {
	switch {
	case !cr.cl.ReadOnlyStandbys:
		return "node"
	case i == 0:
		return "primary"
	default:
		return "standby"
	}
}

// watch watches every node's server process until stopWatch: one that exits is recorded
// (deaths: the step it happened in fails, naming it) and, when it is not node 0 and the
// engine's node 0 can wait for it forever (server.WaitEnder: a PostgreSQL primary's
// commits waiting for a synchronous standby), node 0's sessions waiting for it are ended
// at once and every clusterPoll after, so no session of the run waits more than
// clusterDeathGrace for a dead node: the step fails instead of hanging.
func (cr *clusterRun) watch(ctx context.Context) {
	stop := make(chan struct{})
	cr.mu.Lock()
	cr.watchStop = stop
	cr.mu.Unlock()
	we, _ := cr.cl.Driver.(server.WaitEnder)
	for i, in := range cr.cl.Nodes {
		pid := in.PID()
		cr.watchWG.Add(1)
		go func() {
			defer cr.watchWG.Done()
			select {
			case <-stop:
				return
			case <-in.Done():
			}
			d := &nodeDeath{node: i, pid: pid, role: cr.role(i), at: time.Now()}
			cr.mu.Lock()
			cr.deaths = append(cr.deaths, d)
			cr.mu.Unlock()
			if i == 0 || we == nil {
				return
			}
			tick := time.NewTicker(clusterPoll)
			defer tick.Stop()
			for {
				ectx, cancel := context.WithTimeout(ctx, clusterDeathGrace)
				n, err := we.EndWaits(ectx, cr.cl)
				cancel()
				cr.mu.Lock()
				d.ended += n
				if err != nil {
					d.endErr = err
				}
				cr.mu.Unlock()
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		}()
	}
}

// stopWatch ends watch (nothing when it never started); safe to call more than once.
func (cr *clusterRun) stopWatch() {
	cr.mu.Lock()
	stop := cr.watchStop
	cr.watchStop = nil
	cr.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	cr.watchWG.Wait()
}

// deadLine names the nodes that died so far, one clause each, for step (its load started
// at start: a node that died before is said to): "node 2 (standby, pid 4711) died during
// qp100: the primary's 2 sessions waiting for it (synchronous replication) were ended".
// "" when every node runs. unreported only: those no step's result named yet; mark: they
// are now. A clause already in have is left out (it named the node in the step's error).
func (cr *clusterRun) deadLine(step string, start time.Time, have string, unreported, mark bool) string {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	var parts []string
	for _, d := range cr.deaths {
		if unreported && d.reported {
			continue
		}
		if mark {
			d.reported = true
		}
		head := fmt.Sprintf("node %d (%s, pid %d) died", d.node, d.role, d.pid)
		if strings.Contains(have, head) {
			continue
		}
		when := "during"
		if !start.IsZero() && d.at.Before(start) {
			when = "before"
		}
		line := fmt.Sprintf("%s %s %s", head, when, step)
		switch {
		case d.ended > 0:
			line += fmt.Sprintf(": the primary's %s waiting for it (synchronous replication) ended", plural(d.ended, "session"))
		case d.endErr != nil:
			line += fmt.Sprintf(" (ending the primary's sessions waiting for it: %v)", d.endErr)
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, "; ")
}

// spreadLine says, for the run's env, where --spread puts a step's sessions on cl.
func spreadLine(cl *server.Cluster) string {
	n := len(cl.Nodes)
	if cl.ReadOnlyStandbys {
		return fmt.Sprintf("--spread: each step's read-only sessions (queries) on the standbys in turn (nodes 1-%d), writers on the primary (node 0); each step's note says which session went where", n-1)
	}
	return fmt.Sprintf("--spread: each step's sessions on the nodes in turn (session k of a step, its actors in order, on node k mod %d); each step's note says which session went where", n)
}

// openSpread opens a handle on every node but node 0 (whose handle h the run opened) for
// --spread: the runner opens each session on its node through them. They close with the
// target (closers).
func (cr *clusterRun) openSpread(ctx context.Context, eng engine.Engine, h engine.Handle, closers *[]func()) error {
	h0, ok := h.(engine.SQL)
	if !ok {
		return fmt.Errorf("--spread: --engine %s has no sessions to spread", eng.Meta().Name)
	}
	sp := &runner.Spread{Nodes: []engine.SQL{h0}, PIDs: cr.cl.PIDs(), ReadOnlyStandbys: cr.cl.ReadOnlyStandbys}
	for i, in := range cr.cl.Nodes[1:] {
		hi, err := eng.Open(ctx, engine.Target{DSN: in.DSN})
		if err != nil {
			return store.RedactError(fmt.Errorf("--spread: open %s on node %d: %w", eng.Meta().Name, i+1, err), in.DSN)
		}
		*closers = append(*closers, func() { _ = hi.Close() })
		sh, ok := hi.(engine.SQL)
		if !ok {
			return fmt.Errorf("--spread: --engine %s has no sessions to spread", eng.Meta().Name)
		}
		sp.Nodes = append(sp.Nodes, sh)
	}
	cr.spread = sp
	return nil
}

// nodesLine names each node's process, port and data dir for the run's env.
func (cr *clusterRun) nodesLine() string {
	var parts []string
	for i, in := range cr.cl.Nodes {
		parts = append(parts, fmt.Sprintf("node %d: pid %d, 127.0.0.1:%d, %s", i, in.PID(), in.Port, in.DataDir))
	}
	return strings.Join(parts, "; ")
}

// latencyLine says what distance the run put between the nodes.
func (cr *clusterRun) latencyLine(cfg *config.Run) string {
	var links []string
	for _, p := range cr.proxies {
		links = append(links, p.Name)
	}
	what := fmt.Sprintf("%s round trip", cfg.NodeLatency)
	if cfg.NodeLatency == 0 {
		what = "0 (no delay added)"
	}
	if cfg.NodeJitter > 0 {
		what += fmt.Sprintf(" ± %s jitter", cfg.NodeJitter)
	}
	return fmt.Sprintf("%s on every replication link, through dbperf's in-process proxy (internal/netdelay): %s", what, strings.Join(links, ", "))
}

// nodeCPU is the CPU seconds of each node's process tree now, and its memory (the tree's
// private anonymous memory plus its largest shared memory, MiB).
func (cr *clusterRun) nodeCPU() ([]float64, []float64) {
	cpu := make([]float64, len(cr.cl.Nodes))
	mem := make([]float64, len(cr.cl.Nodes))
	for i, in := range cr.cl.Nodes {
		s, err := cr.sampler.Sample(hwstat.Request{TreeOf: in.PID()})
		if err != nil {
			cpu[i], mem[i] = -1, -1
			continue
		}
		var anon, shm uint64
		for _, pid := range s.Tree {
			p := s.Procs[pid]
			cpu[i] += p.TotalCPUSec()
			anon += p.RSSAnonBytes
			shm = max(shm, p.RSSShmemBytes)
		}
		mem[i] = float64(anon+shm) / (1 << 20)
	}
	return cpu, mem
}

// figures reads every node's replication figures: counters (names ending in _total) and
// gauges.
func (cr *clusterRun) nodeFigures(ctx context.Context) map[string]float64 {
	out := map[string]float64{}
	for i := range cr.cl.Nodes {
		f, err := cr.cl.Driver.Figures(ctx, cr.cl, i)
		if err != nil {
			continue
		}
		for k, v := range f {
			out[k] = v
		}
	}
	return out
}

// Start samples the nodes at the start of a step's load and polls their lags and memory
// while it runs (runner.Profiler).
func (cr *clusterRun) Start(ctx context.Context, step string, sessions []runner.ProfiledSession) error {
	cpu, mem := cr.nodeCPU()
	s := &clusterStep{name: step, cpu0: cpu, start: time.Now(), gauges: map[string]float64{},
		stop: make(chan struct{}), done: make(chan struct{})}
	// How many of the step's sessions each node serves (--spread places them).
	s.sessions = make([]int, len(cr.cl.Nodes))
	for _, ps := range sessions {
		if ps.Node >= 0 && ps.Node < len(s.sessions) {
			s.sessions[ps.Node]++
		}
	}
	s.counters0 = map[string]float64{}
	for k, v := range cr.nodeFigures(ctx) {
		if strings.HasSuffix(k, "_total") {
			s.counters0[k] = v
		}
	}
	s.gauge(mem, nil)
	cr.mu.Lock()
	cr.cur = s
	cr.mu.Unlock()
	go func() {
		defer close(s.done)
		tick := time.NewTicker(clusterPoll)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				_, mem := cr.nodeCPU()
				s.gauge(mem, cr.nodeFigures(ctx))
			}
		}
	}()
	return nil
}

// gauge keeps the maximum of each node's memory and each gauge figure.
func (s *clusterStep) gauge(mem []float64, figs map[string]float64) {
	for i, m := range mem {
		if m >= 0 {
			k := fmt.Sprintf("node%d.mem_mib_max", i)
			s.gauges[k] = max(s.gauges[k], m)
		}
	}
	for k, v := range figs {
		if !strings.HasSuffix(k, "_total") {
			s.gauges[k+"_max"] = max(s.gauges[k+"_max"], v)
		}
	}
}

// Stop ends the step's sampling: per node its CPU seconds and CPU share over the load,
// its peak memory, the counters' differences and the gauges' maxima.
func (cr *clusterRun) Stop(ctx context.Context, step string) error {
	cr.mu.Lock()
	s := cr.cur
	cr.cur = nil
	cr.mu.Unlock()
	if s == nil {
		return nil
	}
	close(s.stop)
	<-s.done
	cpu, mem := cr.nodeCPU()
	figs := cr.nodeFigures(ctx)
	s.gauge(mem, figs)
	out := map[string]float64{}
	secs := time.Since(s.start).Seconds()
	for i := range cpu {
		if cpu[i] >= 0 && s.cpu0[i] >= 0 {
			out[fmt.Sprintf("node%d.cpu_sec", i)] = cpu[i] - s.cpu0[i]
			if secs > 0 {
				out[fmt.Sprintf("node%d.cpu_pct", i)] = 100 * (cpu[i] - s.cpu0[i]) / secs
			}
		}
	}
	for k, v := range figs {
		if b, ok := s.counters0[k]; ok {
			out[strings.TrimSuffix(k, "_total")] = v - b
		}
	}
	for k, v := range s.gauges {
		out[k] = v
	}
	for i, n := range s.sessions {
		out[fmt.Sprintf("node%d.sessions", i)] = float64(n)
	}
	cr.mu.Lock()
	cr.figures[step] = out
	cr.mu.Unlock()
	return nil
}

// stepFigures hands over a finished step's node figures, merged into its metrics
// (record.Run.StepMetrics).
func (cr *clusterRun) stepFigures(step string, res *metrics.StepResult) {
	cr.nameDeaths(step, res)
	cr.mu.Lock()
	f := cr.figures[step]
	delete(cr.figures, step)
	cr.mu.Unlock()
	if len(f) == 0 {
		return
	}
	if res.Metrics == nil {
		res.Metrics = map[string]float64{}
	}
	for k, v := range f {
		res.Metrics["cluster."+k] = v
	}
}

// nameDeaths puts the nodes that died (and no earlier step named) first in a failed
// step's error (a session of theirs, or of the primary waiting for them, failed it), in
// an interrupted step's note. An ok step was measured and audited whole: a node that died
// after its audit is named by the next step.
func (cr *clusterRun) nameDeaths(step string, res *metrics.StepResult) {
	switch res.Status {
	case metrics.StatusFailed:
		if line := cr.deadLine(step, res.StartedAt, res.Error, true, true); line != "" {
			res.Error = joinDetail(line, res.Error)
		}
	case metrics.StatusInterrupted:
		if line := cr.deadLine(step, res.StartedAt, res.Note, true, true); line != "" {
			res.Note = joinDetail(res.Note, line)
		}
	}
}

// attach hooks the cluster into a run: its sampling around every step's load and its
// figures into every step's metrics. Nothing without a cluster.
func (cr *clusterRun) attach(rec *record.Run, profs *probe.Set) {
	if cr == nil {
		return
	}
	profs.Add("cluster", cr)
	rec.StepMetrics = cr.stepFigures
}

// wrap makes each step's audit the cluster's too (clusterStep): after the workload's own
// audit on node 0, every node must have node 0's tables, rows and contents.
func (cr *clusterRun) wrap(steps []workload.Step) []workload.Step {
	if cr == nil {
		return steps
	}
	out := make([]workload.Step, len(steps))
	for i, s := range steps {
		out[i] = &auditedStep{Step: s, cr: cr}
	}
	return out
}

// auditedStep is a step whose Verify also compares every node of the cluster with node 0.
type auditedStep struct {
	workload.Step
	cr *clusterRun
}

// Verify runs the step's own audit on node 0, then waits for every node to catch up and
// compares their tables: a node that differs fails the step.
func (s *auditedStep) Verify(ctx context.Context, h engine.Handle) (string, error) {
	// A dead node never catches up: the step fails now, naming it, not after
	// clusterAgreeTimeout.
	if line := s.cr.deadLine(s.Name(), time.Time{}, "", false, false); line != "" {
		return "", errors.New(line)
	}
	detail, err := s.Step.Verify(ctx, h)
	if err != nil {
		return detail, err
	}
	a, err := s.cr.cl.Agree(ctx, clusterAgreeTimeout)
	if err != nil {
		return detail, err
	}
	line := "cluster: " + a.Summary(len(s.cr.cl.Nodes))
	if len(a.Differences) > 0 {
		return joinDetail(detail, line), errors.New(line)
	}
	return joinDetail(detail, line), nil
}

// Note passes on the step's own note (workload.Noter).
func (s *auditedStep) Note() string {
	if n, ok := s.Step.(workload.Noter); ok {
		return n.Note()
	}
	return ""
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// sweepLatencies reads dbperf sweep's --node-latency, a list (0,1ms,5ms): the distance
// axis. The flag's own value is left at the first, so the shared checks see one latency;
// each point gets its own (withNodeLatency). None (or one) is no axis.
func sweepLatencies(changed bool, f *clusterFlags) ([]time.Duration, error) {
	if !changed {
		return nil, nil
	}
	var out []time.Duration
	for _, v := range strings.Split(f.latency, ",") {
		d, err := parseNodeLatency(v)
		if err != nil {
			return nil, fmt.Errorf("--node-latency %w", err)
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if len(out) > 0 {
		f.latency = out[0].String()
	}
	if len(out) < 2 {
		return nil, nil
	}
	return out, nil
}

// latencyPoints is the cross product of a sweep's points and its node latencies (the
// innermost axis), each point named and labelled with its latency; points unchanged
// without a distance axis.
func latencyPoints(points []sweepPoint, lats []time.Duration, prefix string) []sweepPoint {
	if len(lats) < 2 {
		return points
	}
	out := make([]sweepPoint, 0, len(points)*len(lats))
	for _, pt := range points {
		for _, d := range lats {
			p := pt
			p.latency, p.byLatency = d, true
			p.label = prefix + "/" + p.name()
			out = append(out, p)
		}
	}
	return out
}

// withNodeLatency is a sweep's resolve of a point's configuration with the point's node
// latency set.
func withNodeLatency(resolve func(sweepPoint) (*config.Run, error)) func(sweepPoint) (*config.Run, error) {
	return func(pt sweepPoint) (*config.Run, error) {
		pc, err := resolve(pt)
		if err == nil && pt.byLatency {
			pc.NodeLatency = pt.latency
		}
		return pc, err
	}
}
