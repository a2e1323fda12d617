package mariadb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbperf/dbperf/internal/server"
)

// Galera settings.
const (
	// galeraProvider is Debian's galera-4 (apt-get install galera-4).
	galeraProvider = "/usr/lib/galera/libgalera_smm.so"
	// galeraSyncWait bounds the wait for a node to join and be synced.
	galeraSyncWait = 90 * time.Second
)

// StartCluster starts c.Nodes MariaDB servers as one Galera cluster (Debian's galera-4):
// node 0 bootstraps it (--wsrep-new-cluster), each other node joins through the nodes
// before it, every group-communication link through the address c.Link gives (a delaying
// proxy). Every node gets a copy of node 0's freshly initialised data directory and a
// saved state (grastate.dat) of one new cluster UUID at seqno 0 before any of them
// starts, so the joiners are already up to date when they join: no state transfer runs.
// The database ib is created once every node is synced (DDL replicates in total order).
// Each node listens on 127.0.0.1 only: its SQL port and socket, its group-communication
// port (gmcast.listen_addr), its incremental-state-transfer port (ist.recv_addr) and
// the state-transfer address it would receive a snapshot on. The profile's lines come
// first, so a profile (galera) can tune wsrep_slave_threads and the provider's options;
// the wsrep settings the nodes need are dbperf's: wsrep_on, the provider, the cluster's
// name and addresses, binlog_format=ROW and innodb_autoinc_lock_mode=2. Galera
// replicates InnoDB only: MyRocks is refused.
func (e Engine) StartCluster(ctx context.Context, o server.Options, c server.ClusterOptions) (*server.Cluster, error) {
	if c.Nodes < 2 {
		return nil, fmt.Errorf("mariadb cluster: %d nodes: a Galera cluster needs at least 2", c.Nodes)
	}
	if se := strings.ToLower(o.StorageEngine); se != "" && se != "innodb" {
		return nil, fmt.Errorf("mariadb cluster: Galera replicates InnoDB only, not %s", o.StorageEngine)
	}
	if o.Limits.Set() {
		return nil, fmt.Errorf("mariadb cluster: --server-memory and --server-cpus apply to one server, not to a cluster")
	}
	if !server.IsFile(galeraProvider) {
		return nil, fmt.Errorf("mariadb cluster: %s not found (apt-get install galera-4)", galeraProvider)
	}
	if !fromDebian(o.Version) {
		return nil, fmt.Errorf("mariadb cluster: Galera runs with Debian's MariaDB %s here (galera-4), not %s", mariadbSeries, o.Version)
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("mariadb cluster: %w", err)
	}
	uuid := fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:16])
	name := "dbperf-" + hex.EncodeToString(id[:4])

	// Every node's ports first: each node's cluster address names the nodes before it.
	gports := make([]int, c.Nodes)
	for i := range gports {
		p, err := server.FreePort()
		if err != nil {
			return nil, fmt.Errorf("mariadb cluster: %w", err)
		}
		gports[i] = p
	}
	cl := &server.Cluster{Engine: e.Name()}
	var nodes []*node
	fail := func(err error) (*server.Cluster, error) {
		sctx := context.WithoutCancel(ctx)
		_ = cl.Stop(sctx)
		for _, n := range nodes {
			if !n.in.Alive() {
				n.remove()
			}
		}
		return nil, fmt.Errorf("mariadb cluster: %w", err)
	}
	for i := range c.Nodes {
		var peers []string
		for j := range i {
			addr, err := c.LinkAddr(ctx, i, j, fmt.Sprintf("127.0.0.1:%d", gports[j]))
			if err != nil {
				return fail(err)
			}
			cl.Links = append(cl.Links, server.ClusterLink{From: i, To: j, Addr: addr})
			peers = append(peers, addr)
		}
		extra := func(in *server.Instance) ([]string, error) {
			ist, err1 := server.FreePort()
			sst, err2 := server.FreePort()
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("mariadb cluster: free ports: %v %v", err1, err2)
			}
			return galeraLines(in, o, name, i, gports[i], ist, sst, peers)
		}
		var first *node
		if i > 0 {
			first = nodes[0]
		}
		n, err := e.initNode(ctx, o, extra, first)
		if err != nil {
			return fail(err)
		}
		nodes = append(nodes, n)
		cl.Nodes = append(cl.Nodes, n.in)
	}
	for i, n := range nodes {
		// Galera 4 orders membership changes as events of their own: the bootstrap is
		// seqno 1, node i's join event seqno i+1, so node i is up to date at seqno i.
		state := fmt.Sprintf("# GALERA saved state\nversion: 2.1\nuuid:    %s\nseqno:   %d\nsafe_to_bootstrap: %d\n", uuid, i, map[bool]int{true: 1}[i == 0])
		if err := os.WriteFile(filepath.Join(n.in.DataDir, "grastate.dat"), []byte(state), 0o660); err != nil {
			return fail(err)
		}
	}
	drv := &galeraDriver{}
	cl.Driver = drv
	for i, n := range nodes {
		var args []string
		if i == 0 {
			args = []string{"--wsrep-new-cluster"}
		}
		if err := n.launch(ctx, args, false); err != nil {
			return fail(fmt.Errorf("node %d: %w", i, err))
		}
		if err := drv.waitSynced(ctx, cl, i); err != nil {
			return fail(fmt.Errorf("node %d: %w; last lines of %s:\n%s", i, err, n.in.LogPath, n.in.LogTail(20)))
		}
	}
	db, err := drv.db(cl, 0)
	if err != nil {
		return fail(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+mariadbDatabase); err != nil {
		return fail(fmt.Errorf("create database %s: %w", mariadbDatabase, err))
	}
	var slaves string
	_ = db.QueryRowContext(ctx, "SELECT @@wsrep_slave_threads").Scan(&slaves)
	cl.Topology = fmt.Sprintf("MariaDB %s Galera cluster (galera-4) of %d nodes, node 0 bootstrapped it, wsrep_cluster_name %s, wsrep_slave_threads %s",
		nodes[0].in.Version, c.Nodes, name, slaves)
	return cl, nil
}

// galeraLines are node i's wsrep lines, after the profile's: the provider's options are
// the profile's (its last wsrep_provider_options, when it has one) then the node's own
// addresses.
func galeraLines(in *server.Instance, o server.Options, cluster string, i, gport, ist, sst int, peers []string) ([]string, error) {
	profile := o.Profile
	if profile == "" {
		profile = mariadbDefaultProf
	}
	text, _, err := server.ReadProfile(o.ProfilesDir, "mariadb", profile)
	if err != nil {
		return nil, err
	}
	opts := []string{}
	if p := profileValue(text, "wsrep_provider_options"); p != "" {
		opts = append(opts, strings.TrimRight(p, "; "))
	}
	opts = append(opts, fmt.Sprintf("gmcast.listen_addr=tcp://127.0.0.1:%d", gport),
		fmt.Sprintf("ist.recv_addr=127.0.0.1:%d", ist), "base_host=127.0.0.1", "base_port="+strconv.Itoa(gport))
	return []string{
		"# dbperf: Galera node " + strconv.Itoa(i) + " (dbperf run --cluster)",
		"wsrep_on=ON",
		"wsrep_provider=" + galeraProvider,
		"wsrep_cluster_name=" + cluster,
		"wsrep_cluster_address=gcomm://" + strings.Join(peers, ","),
		"wsrep_node_name=node" + strconv.Itoa(i),
		fmt.Sprintf("wsrep_node_address=127.0.0.1:%d", gport),
		fmt.Sprintf("wsrep_node_incoming_address=127.0.0.1:%d", in.Port),
		fmt.Sprintf("wsrep_sst_receive_address=127.0.0.1:%d", sst),
		"wsrep_sst_method=rsync",
		`wsrep_provider_options="` + strings.Join(opts, ";") + `"`,
		"binlog_format=ROW",
		"innodb_autoinc_lock_mode=2",
	}, nil
}

// profileValue is the value of the last line "name=value" (or "name = value") of a
// my.cnf text, quotes removed; "" when there is none.
func profileValue(text, name string) string {
	var v string
	for _, line := range strings.Split(text, "\n") {
		k, val, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && strings.TrimSpace(k) == name {
			v = strings.Trim(strings.TrimSpace(val), `"'`)
		}
	}
	return v
}

// galeraDriver asks a Galera cluster's nodes, one database/sql pool (one connection)
// per node over TCP, its reads waiting for the node to apply every write the cluster
// committed before them (wsrep_sync_wait = 1).
type galeraDriver struct {
	mu  sync.Mutex
	dbs map[int]*sql.DB
}

func (d *galeraDriver) db(c *server.Cluster, i int) (*sql.DB, error) {
	if d.dbs == nil {
		d.dbs = map[int]*sql.DB{}
	}
	if db := d.dbs[i]; db != nil {
		return db, nil
	}
	in := c.Nodes[i]
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = "root", in.Password()
	cfg.Net, cfg.Addr = "tcp", fmt.Sprintf("127.0.0.1:%d", in.Port)
	cfg.Timeout = 5 * time.Second
	cfg.Logger = &mysql.NopLogger{}
	cfg.Params = map[string]string{"wsrep_sync_wait": "1"}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	d.dbs[i] = db
	return db, nil
}

// Close closes the driver's connections.
func (d *galeraDriver) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, db := range d.dbs {
		_ = db.Close()
		delete(d.dbs, i)
	}
}

// status reads node i's wsrep status variables.
func (d *galeraDriver) status(ctx context.Context, c *server.Cluster, i int) (map[string]string, error) {
	db, err := d.db(c, i)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS LIKE 'wsrep%'")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[strings.ToLower(k)] = v
	}
	return out, rows.Err()
}

// waitSynced waits until node i serves, is Synced and sees i+1 nodes in its primary
// component.
func (d *galeraDriver) waitSynced(ctx context.Context, c *server.Cluster, i int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	deadline := time.Now().Add(galeraSyncWait)
	var last string
	for time.Now().Before(deadline) {
		if !c.Nodes[i].Alive() {
			return fmt.Errorf("mariadbd exited while joining")
		}
		st, err := d.status(ctx, c, i)
		if err == nil {
			last = fmt.Sprintf("state %s, cluster size %s, status %s", st["wsrep_local_state_comment"], st["wsrep_cluster_size"], st["wsrep_cluster_status"])
			if st["wsrep_local_state_comment"] == "Synced" && st["wsrep_ready"] == "ON" && st["wsrep_cluster_size"] == strconv.Itoa(i+1) {
				return nil
			}
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("not synced in the cluster within %s (%s)", galeraSyncWait, last)
}

// CatchUp waits until every node has committed (applied) the last write set node 0 has.
func (d *galeraDriver) CatchUp(ctx context.Context, c *server.Cluster) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	st, err := d.status(ctx, c, 0)
	if err != nil {
		return err
	}
	want, err := strconv.ParseInt(st["wsrep_last_committed"], 10, 64)
	if err != nil {
		return fmt.Errorf("node 0: wsrep_last_committed %q: %w", st["wsrep_last_committed"], err)
	}
	for i := 1; i < len(c.Nodes); i++ {
		for {
			st, err := d.status(ctx, c, i)
			if err != nil {
				return fmt.Errorf("node %d: %w", i, err)
			}
			got, _ := strconv.ParseInt(st["wsrep_last_committed"], 10, 64)
			if got >= want {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("node %d committed up to seqno %d, node 0 %d: %w", i, got, want, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// Tables reads every base table of ib on node i: COUNT(*) and CHECKSUM TABLE (a sum
// over the rows, whatever their order).
func (d *galeraDriver) Tables(ctx context.Context, c *server.Cluster, i int) (map[string]server.TableSum, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	db, err := d.db(c, i)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE' ORDER BY 1", mariadbDatabase)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make(map[string]server.TableSum, len(names))
	for _, n := range names {
		q := "`" + mariadbDatabase + "`.`" + strings.ReplaceAll(n, "`", "``") + "`"
		var ts server.TableSum
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+q).Scan(&ts.Rows); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		var tbl string
		var sum sql.NullString
		if err := db.QueryRowContext(ctx, "CHECKSUM TABLE "+q).Scan(&tbl, &sum); err != nil {
			return nil, fmt.Errorf("%s: checksum: %w", n, err)
		}
		ts.Sum = sum.String
		out[n] = ts
	}
	return out, nil
}

// galeraFigures are the wsrep status variables a step records per node: counters (their
// difference over the step) and gauges (their maximum).
var galeraFigures = map[string]string{
	"wsrep_flow_control_paused_ns": "flow_control_paused_ms_total",
	"wsrep_flow_control_sent":      "flow_control_sent_total",
	"wsrep_flow_control_recv":      "flow_control_recv_total",
	"wsrep_local_cert_failures":    "cert_failures_total",
	"wsrep_local_bf_aborts":        "bf_aborts_total",
	"wsrep_local_commits":          "local_commits_total",
	"wsrep_replicated":             "replicated_total",
	"wsrep_received":               "received_total",
	"wsrep_local_recv_queue":       "recv_queue",
	"wsrep_local_send_queue":       "send_queue",
}

// Figures reads node i's Galera counters: "node1.cert_failures_total", …
func (d *galeraDriver) Figures(ctx context.Context, c *server.Cluster, i int) (map[string]float64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st, err := d.status(ctx, c, i)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for k, name := range galeraFigures {
		v, err := strconv.ParseFloat(st[k], 64)
		if err != nil {
			continue
		}
		if k == "wsrep_flow_control_paused_ns" {
			v /= 1e6
		}
		out[fmt.Sprintf("node%d.%s", i, name)] = v
	}
	return out, nil
}
