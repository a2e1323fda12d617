package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/cluster"
	"github.com/dbperf/dbperf/internal/sweep"
)

// clusterReport is the part of `dbperf report --format json` a cluster test reads.
type clusterReport struct {
	Runs []struct {
		Status string            `json:"status"`
		Env    map[string]string `json:"env"`
		Steps  []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
			Error  string `json:"error"`
			Ops    map[string]struct {
				Count int64 `json:"count"`
				P50   int64 `json:"p50_us"`
			} `json:"ops"`
			Audit struct {
				Status string `json:"status"`
				Detail string `json:"detail"`
			} `json:"audit"`
			HW      map[string]any     `json:"hw"`
			Note    string             `json:"note"`
			ConnCPU map[string]float64 `json:"conn_cpu"`
		} `json:"steps"`
	} `json:"runs"`
}

// runCluster runs the Insert Benchmark on a managed 3-node cluster with every replication
// link 5 ms (round trip) long, at a size where l.i2's small commits take a second or two
// at that distance, and checks what issue 28 asks of every cluster: every step ok, its
// audit on every node agreeing (rows and contents), the topology and latency in the
// run's env, every node's CPU and memory per step, and l.i2's commit latency p50 at
// least the round trip. It returns the run and its results store.
func runCluster(t *testing.T, engine string, extra ...string) (clusterReport, string) {
	t.Helper()
	tmp := serverWorkdir(t)
	results := filepath.Join(tmp, "r.db")
	args := append([]string{"run", "insertbench", "--engine", engine, "--managed", "--cluster", "3", "--node-latency", "5ms",
		"--scale", "tiny", "--rows", "10000", "--rows2", "5000", "--time", "1", "--quiet", "--results", results,
		"--workdir", tmp, "--profiles-dir", "../../profiles"}, extra...)
	start := time.Now()
	code, _, stderr := runCLI(t, nil, args...)
	t.Logf("%s cluster run: %s", engine, time.Since(start).Round(time.Second))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	waitNoServers(t, tmp)
	code, out, stderr := runCLI(t, nil, "report", "--results", results, "--format", "json")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	var rep clusterReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	run := rep.Runs[0]
	if run.Status != "ok" || len(run.Steps) != len(allSteps) {
		t.Fatalf("run %s with %d steps", run.Status, len(run.Steps))
	}
	if !strings.Contains(run.Env[cluster.EnvCluster], "node 0") && !strings.Contains(run.Env[cluster.EnvCluster], "3 nodes") {
		t.Errorf("env cluster = %q", run.Env[cluster.EnvCluster])
	}
	if !strings.HasPrefix(run.Env[cluster.EnvNodeLatency], "5ms round trip on every replication link") {
		t.Errorf("env node_latency = %q", run.Env[cluster.EnvNodeLatency])
	}
	for _, st := range run.Steps {
		if st.Status != "ok" || st.Audit.Status != "ok" || !strings.Contains(st.Audit.Detail, "cluster: 3 nodes agree: ") {
			t.Errorf("%s: %s (%s), audit %s: %s", st.Name, st.Status, st.Error, st.Audit.Status, st.Audit.Detail)
		}
		if st.Name == "l.i0" || st.Name == "l.i2" {
			for _, n := range []string{"0", "1", "2"} {
				for _, m := range []string{"cpu_sec", "mem_mib_max"} {
					if v, ok := st.HW["cluster.node"+n+"."+m].(float64); !ok || v <= 0 {
						t.Errorf("%s: node %s %s = %v", st.Name, n, m, st.HW["cluster.node"+n+"."+m])
					}
				}
			}
		}
		if st.Name == "l.i2" {
			// Every commit waits for the other nodes: one round trip at least.
			if ins := st.Ops["insert"]; ins.Count == 0 || ins.P50 < 5000 {
				t.Errorf("l.i2 insert p50 %d µs over %d commits: want at least the 5 ms round trip", ins.P50, ins.Count)
			}
		}
	}
	return rep, results
}

// nodeSessions is how many of a step's sessions each of 3 nodes served
// (cluster.nodeI.sessions), as "0/1/2".
func nodeSessions(hw map[string]any) string {
	var out []string
	for _, n := range []string{"0", "1", "2"} {
		v, ok := hw["cluster.node"+n+".sessions"].(float64)
		if !ok {
			return "absent"
		}
		out = append(out, strconv.Itoa(int(v)))
	}
	return strings.Join(out, "/")
}

// TestClusterPostgres: a primary and two synchronous standbys (remote_apply), 5 ms apart,
// --spread: the query steps' queries on a standby (their CPU in the query role's
// connection CPU), every writer on the primary, and a step without queries says so.
func TestClusterPostgres(t *testing.T) {
	needServer(t, "postgres")
	t.Parallel()
	rep, results := runCluster(t, "postgres", "--profile", "sync-remote-apply", "--spread")
	run := rep.Runs[0]
	// The text report's header says where the clients went.
	if code, out, stderr := runCLI(t, nil, "report", "--results", results); code != 0 || !strings.Contains(out, "\nclients: --spread: each step's read-only sessions (queries) on the standbys in turn (nodes 1-2)") {
		t.Errorf("report: exit %d, %s\n%s", code, stderr, out)
	}
	if c := run.Env[cluster.EnvCluster]; !strings.Contains(c, "2 streaming standbys") || !strings.Contains(c, "synchronous_commit = remote_apply") ||
		!strings.Contains(c, "ANY 2 (node1, node2)") {
		t.Errorf("env cluster = %q", c)
	}
	if c := run.Env[cluster.EnvClientNodes]; !strings.Contains(c, "read-only sessions (queries) on the standbys") {
		t.Errorf("env client_nodes = %q", c)
	}
	for _, st := range run.Steps {
		query := strings.HasPrefix(st.Name, "q")
		switch got := nodeSessions(st.HW); {
		case query && got != "2/1/0":
			t.Errorf("%s: sessions on nodes 0/1/2 %s, want the insert and delete actors on the primary, the query on node 1", st.Name, got)
		case query && (!strings.Contains(st.Note, "node 0: insert #1, delete #1; node 1: ") ||
			!strings.Contains(st.Note, "-query #1; node 2: none") || st.ConnCPU["query"] <= 0):
			t.Errorf("%s: note %q, query connection CPU %v s: want the query on node 1, its CPU measured there", st.Name, st.Note, st.ConnCPU["query"])
		case !query && (!strings.HasSuffix(got, "/0/0") || strings.HasPrefix(got, "0/") || !strings.Contains(st.Note, "this step has no read-only sessions")):
			t.Errorf("%s: sessions on nodes 0/1/2 %s, note %q: want every session on the primary, and why", st.Name, got, st.Note)
		}
		if st.Name == "l.i2" {
			// PostgreSQL clears a standby's lag times once two replies in a row find it
			// fully applied (walsender.c), which a single committer under remote_apply
			// often is between commits: the 500 ms polls may all find NULL, most often
			// on a busy machine. When one found a lag, it is at least the round trip;
			// the commit latency above is the figure that must always rise.
			v, ok := st.HW["cluster.node1.replay_lag_ms_max"].(float64)
			switch {
			case ok && v < 5:
				t.Errorf("l.i2: node 1 replay lag max %v ms: want at least the 5 ms round trip", v)
			case !ok:
				t.Logf("l.i2: no replay lag sampled on node 1 (PostgreSQL showed none at every poll)")
			}
		}
	}
}

// TestClusterMariaDB: three Galera nodes, 5 ms apart, --spread: each step's actors on
// the nodes in turn (l.i2's inserter on node 0, its deleter on node 1; a query step's
// query, insert and delete actors on nodes 0, 1 and 2), each one's connection CPU measured
// on its node.
func TestClusterMariaDB(t *testing.T) {
	needServer(t, "mariadb")
	t.Parallel()
	rep, _ := runCluster(t, "mariadb", "--profile", "galera", "--spread")
	run := rep.Runs[0]
	if c := run.Env[cluster.EnvCluster]; !strings.Contains(c, "Galera cluster (galera-4) of 3 nodes") || !strings.Contains(c, "wsrep_slave_threads 2") {
		t.Errorf("env cluster = %q", c)
	}
	if c := run.Env[cluster.EnvClientNodes]; !strings.Contains(c, "on node k mod 3") {
		t.Errorf("env client_nodes = %q", c)
	}
	for _, st := range run.Steps {
		want := map[string]string{"l.i0": "1/0/0", "l.i1": "1/1/0", "l.i2": "1/1/0", "qr100": "1/1/1", "qp1000": "1/1/1"}[st.Name]
		if got := nodeSessions(st.HW); want != "" && got != want {
			t.Errorf("%s: sessions on nodes 0/1/2 %s, want %s (note %q)", st.Name, got, want, st.Note)
		}
		if st.Name == "qr100" && (!strings.Contains(st.Note, "node 0: range-query #1; node 1: insert #1; node 2: delete #1") ||
			st.ConnCPU["query"] <= 0 || st.ConnCPU["insert"] <= 0 || st.ConnCPU["delete"] <= 0) {
			t.Errorf("qr100: note %q, connection CPU %v: want each actor on its node, its CPU measured there", st.Note, st.ConnCPU)
		}
		if st.Name == "l.i2" {
			// Node 0 commits the inserts, node 1 the deletes; each applies the other's; nobody
			// conflicts (the deleter removes the oldest rows, the inserter adds new ones).
			commits, _ := st.HW["cluster.node0.local_commits"].(float64)
			deletes, _ := st.HW["cluster.node1.local_commits"].(float64)
			received, _ := st.HW["cluster.node1.received"].(float64)
			if commits <= 0 || deletes <= 0 || received < commits {
				t.Errorf("l.i2: node 0 local commits %v, node 1 local commits %v and received %v write sets", st.HW["cluster.node0.local_commits"],
					st.HW["cluster.node1.local_commits"], st.HW["cluster.node1.received"])
			}
			for _, n := range []string{"0", "1", "2"} {
				if v, ok := st.HW["cluster.node"+n+".cert_failures"].(float64); !ok || v != 0 {
					t.Errorf("l.i2: node %s certification failures %v", n, st.HW["cluster.node"+n+".cert_failures"])
				}
			}
		}
	}
}

// TestClusterFlags: the cluster flags' checks, each one line, before anything starts; a
// sweep's --node-latency list becomes the innermost axis, each point named by its latency.
func TestClusterFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "postgres", "--managed", "--cluster", "1"}, "--cluster 1: a cluster has 2 to 9 nodes"},
		{[]string{"--engine", "postgres", "--managed", "--node-latency", "5ms"}, "--node-latency, --node-jitter and --spread are for a cluster: add --cluster 3"},
		{[]string{"--engine", "postgres", "--dsn", "postgres://x@127.0.0.1:1/ib", "--cluster", "3"}, "--cluster 3 starts a cluster of managed servers: add --managed"},
		{[]string{"--engine", "sqlite", "--cluster", "3"}, "--cluster: --engine sqlite has no servers to replicate"},
		{[]string{"--engine", "postgres", "--managed", "--cluster", "3", "--node-latency", "soon"}, `--node-latency "soon": want a duration such as 5ms`},
		{[]string{"--engine", "postgres", "--managed", "--cluster", "3", "--node-latency", "1ms", "--node-jitter", "2ms"}, "--node-jitter 2ms is more than --node-latency 1ms"},
		{[]string{"--engine", "mariadb", "--managed", "--spread"}, "--node-latency, --node-jitter and --spread are for a cluster: add --cluster 3"},
		{[]string{"--engine", "postgres", "--managed", "--cluster", "3", "--spread", "--cpu-profile", t.TempDir()}, "--spread: --cpu-profile and --explain see node 0's server only: run them without --spread"},
		{[]string{"--engine", "mariadb", "--managed", "--cluster", "3", "--spread", "--explain"}, "--spread: --cpu-profile and --explain see node 0's server only"},
		{[]string{"--engine", "postgres", "--managed", "--cluster", "3", "--server-memory", "1G"}, "--server-memory and --server-cpus limit one server: not a --cluster"},
	} {
		code, _, stderr := runCLI(t, nil, append([]string{"run", "insertbench", "--scale", "tiny", "--results", filepath.Join(t.TempDir(), "r.db")}, tc.args...)...)
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}

	f := clusterFlags{latency: "0, 1ms,5,1ms"}
	lats, err := sweepLatencies(true, &f)
	if err != nil || len(lats) != 3 || lats[1] != time.Millisecond || lats[2] != 5*time.Millisecond || f.latency != "0s" {
		t.Fatalf("sweepLatencies: %v %v, flag left at %q", lats, err, f.latency)
	}
	pts := sweep.LatencyPoints([]sweep.Point{{Version: "15", Profile: "sync-on"}}, lats, "s")
	var names []string
	for _, p := range pts {
		names = append(names, p.Label)
	}
	if got := strings.Join(names, " "); got != "s/15/sync-on/lat=0s s/15/sync-on/lat=1ms s/15/sync-on/lat=5ms" {
		t.Errorf("points %s", got)
	}
	if one, _ := sweepLatencies(true, &clusterFlags{latency: "5ms"}); one != nil {
		t.Errorf("one latency is no axis: %v", one)
	}
}

// TestClusterSweep: dbperf sweep --node-latency 0,2ms runs a cluster per point and ends
// with the table by distance, its note saying why commits slow down.
func TestClusterSweep(t *testing.T) {
	needServer(t, "postgres")
	t.Parallel()
	tmp := serverWorkdir(t)
	results := filepath.Join(tmp, "r.db")
	code, out, stderr := runCLI(t, nil, "sweep", "insertbench", "--engine", "postgres", "--cluster", "2", "--node-latency", "0,2ms",
		"--scale", "tiny", "--rows", "5000", "--rows2", "2500", "--steps", "l.i0,l.i2", "--design", "sequential",
		"--label", "dist", "--results", results, "--workdir", tmp, "--profiles-dir", "../../profiles")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	waitNoServers(t, tmp)
	for _, want := range []string{"sweep dist: 2 points", "l.i2  insert  default/default/lat=2ms", "distance: default/default/lat=0s: cluster, no delay added; default/default/lat=2ms: cluster, 2ms round trip between nodes."} {
		if !strings.Contains(out, want) && !strings.Contains(flat(out), want) {
			t.Errorf("sweep output lacks %q:\n%s", want, out)
		}
	}
}

// TestClusterInterrupted: Ctrl-C while a cluster runs a step stops every node (exit 130)
// and removes their data dirs.
func TestClusterInterrupted(t *testing.T) {
	needServer(t, "postgres")
	t.Parallel()
	tmp := serverWorkdir(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once the three nodes run and a second of qp100 has passed.
		for ctx.Err() == nil && len(serverProcs(tmp)) < 3 {
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(2 * time.Second)
		cancel()
	}()
	var out, errb bytes.Buffer
	code := Run(ctx, Env{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }},
		[]string{"run", "insertbench", "--engine", "postgres", "--managed", "--cluster", "3", "--scale", "tiny", "--rows", "5000",
			"--steps", "l.i0,qp100", "--time", "60", "--quiet", "--workdir", filepath.Join(tmp, "w"), "--results", filepath.Join(tmp, "r.db"),
			"--profiles-dir", "../../profiles"})
	if code != ExitInterrupted {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	waitNoServers(t, tmp)
	ents, err := os.ReadDir(filepath.Join(tmp, "w"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "postgres-") {
			t.Errorf("a node's instance dir %s is left after Ctrl-C", e.Name())
		}
	}
}

// A node killed during a step (a PostgreSQL standby, issue 40 H1; a Galera node) is the
// fault matrix's (internal/faulttest TestFaultMatrix, rows postgres-cluster3/standby and
// galera3/node): the same checks, the stored step's error and the run's status too.
