package postgres

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/servertest"
)

// TestPostgresClusterLevels: a primary and one standby on each synchronous level the
// sync-on and sync-remote-write profiles set (sync-remote-apply: TestClusterPostgres in
// internal/cli): the standby streams synchronously, a committed row is on both nodes
// (Agree), the standby refuses writes, and Stop leaves no server running.
func TestPostgresClusterLevels(t *testing.T) {
	needDebianPostgres(t)
	for _, level := range []string{"on", "remote_write"} {
		t.Run(level, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			cl, err := New().StartCluster(ctx, server.Options{WorkDir: servertest.WorkDir(t), Profile: "sync-" + strings.ReplaceAll(level, "_", "-")},
				server.ClusterOptions{Nodes: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := cl.Stop(ctx); err != nil {
					t.Error(err)
				}
				for i, in := range cl.Nodes {
					if in.Alive() {
						t.Errorf("node %d still runs after Stop", i)
					}
				}
				if err := cl.Remove(); err != nil {
					t.Error(err)
				}
			}()
			if want := "synchronous_standby_names = 'ANY 1 (node1)', synchronous_commit = " + level; !strings.Contains(cl.Topology, want) {
				t.Errorf("topology %q, want %q", cl.Topology, want)
			}
			if len(cl.Links) != 1 || cl.Links[0].From != 1 || cl.Links[0].To != 0 || !strings.HasSuffix(cl.Links[0].Addr, ":"+strconv.Itoa(cl.Nodes[0].Port)) {
				t.Errorf("links %+v: want node 1 → node 0 at its port %d", cl.Links, cl.Nodes[0].Port)
			}
			p, err := pgx.Connect(ctx, cl.Nodes[0].DSN)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(ctx)
			var state string
			if err := p.QueryRow(ctx, "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'node1'").Scan(&state); err != nil || state != "quorum" {
				t.Errorf("node1 sync_state %q (%v)", state, err)
			}
			if _, err := p.Exec(ctx, "CREATE TABLE t (i int PRIMARY KEY, s text); INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 1000) g"); err != nil {
				t.Fatal(err)
			}
			a, err := cl.Agree(ctx, 30*time.Second)
			if err != nil || len(a.Differences) > 0 || a.Tables["t"].Rows != 1000 {
				t.Errorf("agree: %+v %v", a, err)
			}
			s, err := pgx.Connect(ctx, cl.Nodes[1].DSN)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(ctx)
			if _, err := s.Exec(ctx, "INSERT INTO t VALUES (0, 'x')"); err == nil || !strings.Contains(err.Error(), "read-only") {
				t.Errorf("a write on the standby: %v", err)
			}
		})
	}
}
