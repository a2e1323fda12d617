package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbperf/dbperf/internal/server"
)

// Cluster settings.
const (
	// pgClusterConf is written into a cluster's primary before the profile, so a profile
	// may change any of it (synchronous_commit, the synchronous level, is the profile's:
	// sync-on, sync-remote-write, sync-remote-apply). hot_standby_feedback keeps the
	// primary's vacuum from removing rows a standby's audit reads.
	pgClusterConf = `
# ---- dbperf managed cluster: the primary of streaming standbys ----
wal_level = replica
max_wal_senders = 10
hot_standby = on
hot_standby_feedback = on
wal_keep_size = 1GB
`
	// pgStandbyWait bounds the wait for the standbys to stream synchronously.
	pgStandbyWait = 60 * time.Second
)

// standbyName is the application_name of node i, a standby, as
// synchronous_standby_names and pg_stat_replication name it.
func standbyName(i int) string { return fmt.Sprintf("node%d", i) }

// StartCluster starts a primary (node 0) and c.Nodes-1 streaming standbys of it, each a
// copy of the primary made with pg_basebackup after the database ib was created, with its
// own instance dir, port and socket, connecting to the primary through the address
// c.Link gives (a delaying proxy, or the primary's port). Once every standby streams, the
// primary waits for all of them: synchronous_standby_names = 'ANY N (node1, …)', each
// commit waiting for what the profile's synchronous_commit says (on: flushed on every
// standby, remote_write: written, remote_apply: applied and visible there). The standbys
// accept read-only sessions (hot_standby).
func (e Engine) StartCluster(ctx context.Context, o server.Options, c server.ClusterOptions) (*server.Cluster, error) {
	if c.Nodes < 2 {
		return nil, fmt.Errorf("postgres cluster: %d nodes: a cluster has a primary and at least one standby", c.Nodes)
	}
	if o.Limits.Set() {
		return nil, fmt.Errorf("postgres cluster: --server-memory and --server-cpus apply to one server, not to a cluster")
	}
	primary, bins, cred, err := e.start(ctx, o, pgClusterConf)
	if err != nil {
		return nil, err
	}
	cl := &server.Cluster{Engine: e.Name(), Nodes: []*server.Instance{primary}, ReadOnlyStandbys: true}
	drv := &pgClusterDriver{}
	cl.Driver = drv
	fail := func(err error) (*server.Cluster, error) {
		sctx := context.WithoutCancel(ctx)
		_ = cl.Stop(sctx)
		_ = cl.Remove()
		drv.Close()
		return nil, err
	}
	var names []string
	for i := 1; i < c.Nodes; i++ {
		addr, err := c.LinkAddr(ctx, i, 0, fmt.Sprintf("127.0.0.1:%d", primary.Port))
		if err != nil {
			return fail(fmt.Errorf("postgres cluster: %w", err))
		}
		cl.Links = append(cl.Links, server.ClusterLink{From: i, To: 0, Addr: addr})
		sb, err := startStandby(ctx, e, o, primary, bins, cred, i, addr)
		if err != nil {
			return fail(err)
		}
		cl.Nodes = append(cl.Nodes, sb)
		names = append(names, standbyName(i))
	}
	ssn := fmt.Sprintf("ANY %d (%s)", len(names), strings.Join(names, ", "))
	level, err := syncStandbys(ctx, primary, names, ssn)
	if err != nil {
		return fail(err)
	}
	cl.Topology = fmt.Sprintf("PostgreSQL %s: primary (node 0) + %d streaming standbys (hot standby), synchronous_standby_names = '%s', synchronous_commit = %s",
		primary.Version, len(names), ssn, level)
	return cl, nil
}

// startStandby makes node i: a base backup of the primary through link into a new
// instance dir, configured as a standby streaming from link, started and serving
// read-only sessions.
func startStandby(ctx context.Context, e Engine, o server.Options, primary *server.Instance, bins pgBinaries,
	cred *syscall.Credential, i int, link string) (*server.Instance, error) {
	in, err := server.NewNodeInstance(e, o, primary)
	if err != nil {
		return nil, err
	}
	in.DataDir, in.LogPath = filepath.Join(in.Dir, "data"), filepath.Join(in.Dir, "postgres.log")
	in.Profile, in.Config, in.ProfileSource, in.Version = primary.Profile, primary.Config, primary.ProfileSource, primary.Version
	in.AfterStop(func() error { return removeSocketDir(in) })
	fail := func(err error) (*server.Instance, error) {
		_ = in.Stop(context.WithoutCancel(ctx))
		_ = removeSocketDir(in)
		_ = os.RemoveAll(in.Dir)
		return nil, fmt.Errorf("postgres cluster: standby node %d: %w", i, err)
	}
	if cred != nil {
		if err := checkTraversable(in.Dir, cred); err != nil {
			return fail(err)
		}
	}
	sockDir, err := placeInstance(in, cred)
	if err != nil {
		return fail(err)
	}
	host, port, err := splitHostPort(link)
	if err != nil {
		return fail(err)
	}
	conninfo := fmt.Sprintf("host=%s port=%s user=%s application_name=%s sslmode=disable", host, port, pgSuperuser, standbyName(i))
	if err := baseBackup(ctx, in, bins, cred, conninfo); err != nil {
		return fail(err)
	}
	// The copied postgresql.conf is the primary's; the last value of a setting wins.
	var b strings.Builder
	fmt.Fprintf(&b, "\n# ---- dbperf managed cluster: standby node %d ----\n", i)
	fmt.Fprintf(&b, "port = %d\nunix_socket_directories = '%s'\n", in.Port, strings.ReplaceAll(sockDir, "'", "''"))
	fmt.Fprintf(&b, "primary_conninfo = '%s password=%s'\n", conninfo, strings.ReplaceAll(in.Password(), "'", "''"))
	if err := appendFile(filepath.Join(in.DataDir, "postgresql.conf"), b.String()); err != nil {
		return fail(err)
	}
	sig := filepath.Join(in.DataDir, "standby.signal")
	if err := os.WriteFile(sig, nil, 0o600); err != nil {
		return fail(err)
	}
	if cred != nil {
		if err := os.Chown(sig, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(err)
		}
	}
	cmd := exec.Command(filepath.Join(bins.bin, "postgres"), "-D", in.DataDir)
	cmd.Dir, cmd.Env = in.Dir, bins.env()
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if err := in.Launch(cmd); err != nil {
		return fail(err)
	}
	in.DSN = pgURL(in.Port, pgDatabase, in.Password())
	in.TCPDSN = in.DSN
	err = in.WaitReady(ctx, pgReadyTimeout, func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		c, err := pgx.Connect(cctx, in.DSN)
		if err != nil {
			return err
		}
		return c.Close(cctx)
	})
	if err != nil {
		return fail(err)
	}
	return in, nil
}

// syncStandbys waits until every standby streams, then makes the primary wait for all of
// them (ssn) and waits until it does; it returns the synchronous_commit in force.
func syncStandbys(ctx context.Context, primary *server.Instance, names []string, ssn string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, pgStandbyWait)
	defer cancel()
	conn, err := pgx.Connect(cctx, primary.DSN)
	if err != nil {
		return "", fmt.Errorf("postgres cluster: connect to the primary: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	wait := func(state, col string) error {
		for {
			var n int
			err := conn.QueryRow(cctx, "SELECT count(*) FROM pg_stat_replication WHERE application_name = ANY($1) AND "+col+" = $2",
				names, state).Scan(&n)
			if err != nil {
				return fmt.Errorf("postgres cluster: pg_stat_replication: %w", err)
			}
			if n == len(names) {
				return nil
			}
			select {
			case <-cctx.Done():
				return fmt.Errorf("postgres cluster: %d of %d standbys %s after %s", n, len(names), state, pgStandbyWait)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	if err := wait("streaming", "state"); err != nil {
		return "", err
	}
	if _, err := conn.Exec(cctx, "ALTER SYSTEM SET synchronous_standby_names = '"+ssn+"'"); err != nil {
		return "", fmt.Errorf("postgres cluster: set synchronous_standby_names: %w", err)
	}
	if _, err := conn.Exec(cctx, "SELECT pg_reload_conf()"); err != nil {
		return "", fmt.Errorf("postgres cluster: reload: %w", err)
	}
	if err := wait("quorum", "sync_state"); err != nil {
		return "", err
	}
	var level string
	if err := conn.QueryRow(cctx, "SHOW synchronous_commit").Scan(&level); err != nil {
		return "", fmt.Errorf("postgres cluster: synchronous_commit: %w", err)
	}
	return level, nil
}

// pgClusterDriver asks a PostgreSQL cluster's nodes, one connection per node kept open.
type pgClusterDriver struct {
	mu    sync.Mutex
	conns map[int]*pgx.Conn
}

func (d *pgClusterDriver) conn(ctx context.Context, c *server.Cluster, i int) (*pgx.Conn, error) {
	if d.conns == nil {
		d.conns = map[int]*pgx.Conn{}
	}
	if cn := d.conns[i]; cn != nil && !cn.IsClosed() {
		return cn, nil
	}
	cn, err := pgx.Connect(ctx, c.Nodes[i].DSN)
	if err != nil {
		return nil, err
	}
	d.conns[i] = cn
	return cn, nil
}

// Close closes the driver's connections.
func (d *pgClusterDriver) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, cn := range d.conns {
		_ = cn.Close(context.Background())
		delete(d.conns, i)
	}
}

// CatchUp waits until every standby replayed the primary's WAL up to its current position.
func (d *pgClusterDriver) CatchUp(ctx context.Context, c *server.Cluster) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, err := d.conn(ctx, c, 0)
	if err != nil {
		return err
	}
	var lsn string
	if err := p.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn); err != nil {
		return fmt.Errorf("pg_current_wal_lsn: %w", err)
	}
	for i := 1; i < len(c.Nodes); i++ {
		s, err := d.conn(ctx, c, i)
		if err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		for {
			var done bool
			if err := s.QueryRow(ctx, "SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)", lsn).Scan(&done); err != nil {
				return fmt.Errorf("node %d: pg_last_wal_replay_lsn: %w", i, err)
			}
			if done {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("node %d has not replayed the primary's WAL up to %s: %w", i, lsn, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// Tables reads every table of the public schema: its rows and the sum of the first 64
// bits of each row's md5 (order-independent, one scan, no sort).
func (d *pgClusterDriver) Tables(ctx context.Context, c *server.Cluster, i int) (map[string]server.TableSum, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cn, err := d.conn(ctx, c, i)
	if err != nil {
		return nil, err
	}
	rows, err := cn.Query(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")
	if err != nil {
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	out := make(map[string]server.TableSum, len(names))
	for _, n := range names {
		var ts server.TableSum
		q := fmt.Sprintf(`SELECT count(*), coalesce(sum(('x' || substr(md5(t::text), 1, 16))::bit(64)::bigint::numeric), 0)::text FROM %s t`,
			pgx.Identifier{n}.Sanitize())
		if err := cn.QueryRow(ctx, q).Scan(&ts.Rows, &ts.Sum); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out[n] = ts
	}
	return out, nil
}

// Figures reads, on the primary (node 0), each standby's lags from pg_stat_replication
// (ms; absent while PostgreSQL shows none: no WAL to measure them on) and how many
// bytes of WAL it has yet to replay: "node1.replay_lag_ms", "node1.replay_behind_bytes".
// A standby has no figures of its own.
func (d *pgClusterDriver) Figures(ctx context.Context, c *server.Cluster, i int) (map[string]float64, error) {
	if i != 0 {
		return nil, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	cn, err := d.conn(ctx, c, 0)
	if err != nil {
		return nil, err
	}
	rows, err := cn.Query(ctx, `SELECT application_name,
		extract(epoch FROM write_lag) * 1000, extract(epoch FROM flush_lag) * 1000, extract(epoch FROM replay_lag) * 1000,
		pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::float8
		FROM pg_stat_replication`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var name string
		var w, f, r *float64
		var behind *float64
		if err := rows.Scan(&name, &w, &f, &r, &behind); err != nil {
			return nil, err
		}
		for k, v := range map[string]*float64{"write_lag_ms": w, "flush_lag_ms": f, "replay_lag_ms": r, "replay_behind_bytes": behind} {
			if v != nil {
				out[name+"."+k] = *v
			}
		}
	}
	return out, rows.Err()
}

// EndWaits terminates the primary's sessions waiting for synchronous replication
// (wait_event SyncRep), on a connection of its own (the driver's may be busy with a
// catch-up): a commit waiting for a standby that died never returns, and a query cancel
// only warns and leaves it committed locally, so the session is ended. PostgreSQL then
// warns "canceling the wait for synchronous replication and terminating connection" and
// the client's session fails.
func (d *pgClusterDriver) EndWaits(ctx context.Context, c *server.Cluster) (int, error) {
	cn, err := pgx.Connect(ctx, c.Nodes[0].DSN)
	if err != nil {
		return 0, fmt.Errorf("postgres cluster: connect to the primary: %w", err)
	}
	defer cn.Close(context.WithoutCancel(ctx))
	var n int
	err = cn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE wait_event = 'SyncRep' AND pid <> pg_backend_pid()`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres cluster: end the sessions waiting for synchronous replication: %w", err)
	}
	return n, nil
}

// appendFile appends text to the existing file path, keeping its owner and mode.
func appendFile(path, text string) error { return writeExisting(path, os.O_APPEND, text) }

// splitHostPort splits "127.0.0.1:5432".
func splitHostPort(addr string) (string, string, error) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return "", "", errors.New("address without a port: " + addr)
	}
	return addr[:i], addr[i+1:], nil
}
