package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/jackc/pgx/v5"
)

// indexCleanupVersion is server_version_num from which VACUUM takes INDEX_CLEANUP (v12).
const indexCleanupVersion = 120000

// ReduceDebt is PostgreSQL's writeback-debt reduction (spec/insert-benchmark.md "Cleanup
// per engine", reference §1.10): every table is vacuumed in parallel on its own connection
// with `VACUUM (ANALYZE, INDEX_CLEANUP ON)` (without INDEX_CLEANUP before v12), then one
// CHECKPOINT writes the dirty buffers. No tables: the whole database, in one VACUUM. The detail lists each statement and its duration.
//
// Its connections are told to ctx's engine.ConnObserver, so their backends' CPU is measured
// as the cleanup's.
func (h *handle) ReduceDebt(ctx context.Context, tables []string) (string, error) {
	c, closeConn, err := h.observedConn(ctx)
	if err != nil {
		return "", fmt.Errorf("postgres cleanup: %w", err)
	}
	defer closeConn()
	var num int
	if err := c.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&num); err != nil {
		return "", fmt.Errorf("postgres cleanup: server_version_num: %w", err)
	}
	opts := "ANALYZE"
	if num >= indexCleanupVersion {
		opts = "ANALYZE, INDEX_CLEANUP ON"
	}

	start := time.Now()
	if len(tables) == 0 {
		// No list (a sweep settling its points between blocks): every table of the
		// database, in one VACUUM.
		tables = []string{""}
	}
	parts := make([]string, len(tables))
	errs := make([]error, len(tables))
	var wg sync.WaitGroup
	for i, t := range tables {
		wg.Go(func() {
			q := strings.TrimSpace("VACUUM (" + opts + ") " + t)
			tc, closeConn, err := h.observedConn(ctx)
			if err != nil {
				errs[i] = fmt.Errorf("postgres cleanup: %s: %w", q, err)
				return
			}
			defer closeConn()
			t0 := time.Now()
			if _, err := tc.Exec(ctx, q); err != nil {
				errs[i] = fmt.Errorf("postgres cleanup: %s: %w", q, err)
				return
			}
			parts[i] = fmt.Sprintf("%s in %s", q, time.Since(t0).Round(time.Millisecond))
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return "", err
		}
	}
	vacuum := time.Since(start)

	t0 := time.Now()
	if _, err := c.Exec(ctx, "CHECKPOINT"); err != nil {
		return "", fmt.Errorf("postgres cleanup: CHECKPOINT: %w", err)
	}
	detail := strings.Join(parts, "; ")
	if detail != "" {
		detail += "; "
	}
	return fmt.Sprintf("%sall VACUUMs in %s; CHECKPOINT in %s", detail,
		vacuum.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond)), nil
}

// observedConn opens a connection and tells ctx's engine.ConnObserver (if any) its backend's
// pid; closeConn tells the observer before it closes the connection.
func (h *handle) observedConn(ctx context.Context) (c *pgx.Conn, closeConn func(), err error) {
	c, err = h.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	o := engine.ConnObserverFrom(ctx)
	pid := int(c.PgConn().PID())
	if o != nil {
		o.ConnOpened(pid)
	}
	return c, func() {
		if o != nil {
			o.ConnClosing(pid)
		}
		_ = c.Close(context.WithoutCancel(ctx))
	}, nil
}

var _ engine.ScheduleResetter = (*handle)(nil)

// ResetSchedules reloads the server's configuration (pg_reload_conf(), as a superuser or
// a role granted it). On a reload the autovacuum launcher rebuilds its list of databases
// to visit, the next visits spread over one autovacuum_naptime from now
// (autovacuum.c: rebuild_database_list, "in case the naptime changed"), whatever the
// server's start.
func (h *handle) ResetSchedules(ctx context.Context) error {
	c, err := h.connect(ctx)
	if err != nil {
		return fmt.Errorf("postgres reload: %w", err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	if _, err := c.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("postgres reload: %w", err)
	}
	return nil
}
