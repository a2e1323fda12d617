package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
)

// Cleanup limits (spec/insert-benchmark.md "Cleanup per engine"). The reference sleeps a
// fixed time instead (§1.10); dbperf polls and stops waiting once the debt is gone, and the
// workload's --cleanup-wait sleeps the remainder.
const (
	// debtWait bounds each wait for flushing or compaction.
	debtWait = 60 * time.Second
	// debtPoll is the polling interval of those waits.
	debtPoll = time.Second
	// restoreTimeout bounds restoring the InnoDB variables, which runs even when ctx is done.
	restoreTimeout = 10 * time.Second
)

// ReduceDebt is the writeback-debt reduction for the handle's storage engine, followed by
// ANALYZE TABLE of each table (reference §1.10; the reference's `reset master` is left
// out: dbperf's servers run without a binary log). The detail says what ran and how long.
//
// Its connection's server thread is told to ctx's engine.ConnObserver (when
// performance_schema names it), so its CPU is measured as the cleanup's.
func (h *handle) ReduceDebt(ctx context.Context, tables []string) (string, error) {
	c, err := h.db.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("mariadb cleanup: %w", err)
	}
	defer c.Close()
	if o := engine.ConnObserverFrom(ctx); o != nil {
		if tid, err := threadOSID(ctx, c); err == nil {
			o.ConnOpened(tid)
			defer o.ConnClosing(tid)
		}
	}

	var parts []string
	if h.storage == RocksDB {
		parts, err = rocksDebt(ctx, c)
	} else {
		parts, err = innoDebt(ctx, c)
	}
	if err != nil {
		return strings.Join(parts, "; "), fmt.Errorf("mariadb cleanup: %w", err)
	}
	start := time.Now()
	for _, t := range tables {
		if err := analyze(ctx, c, t); err != nil {
			return strings.Join(parts, "; "), fmt.Errorf("mariadb cleanup: %w", err)
		}
	}
	if len(tables) > 0 {
		parts = append(parts, fmt.Sprintf("ANALYZE TABLE %s in %s", strings.Join(tables, ", "), since(start)))
	}
	return strings.Join(parts, "; "), nil
}

// innoDebt makes InnoDB's page cleaner write back (almost) every dirty page: it saves
// innodb_max_dirty_pages_pct, innodb_max_dirty_pages_pct_lwm and innodb_idle_flush_pct
// (MySQL 8.0.18+ only; MariaDB 10.11 has none), sets them to 1, 1 and 100, waits until at
// most 1% of the buffer pool's pages are dirty or debtWait passes, and restores the saved
// values (also on error or cancellation).
//
// Order matters: the server keeps lwm ≤ max_dirty (setting max_dirty below lwm is refused
// or changes lwm), so lwm is lowered before max_dirty and max_dirty raised before lwm.
func innoDebt(ctx context.Context, c *sql.Conn) (parts []string, err error) {
	const (
		maxDirty = "innodb_max_dirty_pages_pct"
		lwm      = "innodb_max_dirty_pages_pct_lwm"
		idle     = "innodb_idle_flush_pct"
	)
	saved := map[string]string{}
	for _, v := range []string{maxDirty, lwm, idle} {
		val, ok, err := globalVar(ctx, c, v)
		if err != nil {
			return nil, err
		}
		if ok {
			saved[v] = val
		}
	}
	if _, ok := saved[maxDirty]; !ok {
		return nil, errors.New("innodb cleanup: innodb_max_dirty_pages_pct does not exist: is InnoDB enabled?")
	}
	set := []struct{ name, value string }{{lwm, "1"}, {maxDirty, "1"}, {idle, "100"}}
	restore := []string{maxDirty, lwm, idle}

	var changed []string
	defer func() {
		// Restore with a context of its own: a cancelled run must not leave the server
		// flushing aggressively.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
		defer cancel()
		var errs []error
		for _, name := range restore {
			if !slices.Contains(changed, name) {
				continue
			}
			if err := setGlobal(rctx, c, name, saved[name]); err != nil {
				errs = append(errs, fmt.Errorf("restore: %w", err))
			}
		}
		if len(changed) > 0 && len(errs) == 0 {
			var rs []string
			for _, name := range restore {
				if slices.Contains(changed, name) {
					rs = append(rs, name+"="+saved[name])
				}
			}
			parts = append(parts, "restored "+strings.Join(rs, ", "))
		}
		err = errors.Join(append([]error{err}, errs...)...)
	}()

	for _, s := range set {
		if _, ok := saved[s.name]; !ok {
			continue
		}
		if err := setGlobal(ctx, c, s.name, s.value); err != nil {
			return parts, err
		}
		changed = append(changed, s.name)
	}
	setText := "set innodb_max_dirty_pages_pct_lwm=1, innodb_max_dirty_pages_pct=1"
	if _, ok := saved[idle]; ok {
		setText += ", innodb_idle_flush_pct=100"
	} else {
		setText += " (no innodb_idle_flush_pct)"
	}
	parts = append(parts, setText)

	total, ok, err := globalStatusInt(ctx, c, "Innodb_buffer_pool_pages_total")
	if err != nil {
		return parts, err
	}
	if !ok {
		return parts, errors.New("innodb cleanup: no Innodb_buffer_pool_pages_total status")
	}
	limit := total / 100
	start := time.Now()
	first, last := int64(-1), int64(-1)
	for {
		dirty, _, err := globalStatusInt(ctx, c, "Innodb_buffer_pool_pages_dirty")
		if err != nil {
			return parts, err
		}
		if first < 0 {
			first = dirty
		}
		last = dirty
		if dirty <= limit || time.Since(start) >= debtWait {
			break
		}
		if err := sleep(ctx, debtPoll); err != nil {
			return parts, err
		}
	}
	verdict := "≤ 1% of the buffer pool"
	if last > limit {
		verdict = fmt.Sprintf("still above 1%% (%d pages) after the %s limit", limit, debtWait)
	}
	parts = append(parts, fmt.Sprintf("dirty pages %d → %d (%s) in %s", first, last, verdict, since(start)))
	return parts, nil
}

// rocksDebt waits until no compaction or memtable flush is running, forces a memtable
// flush (rocksdb_force_flush_memtable_now=1), waits again, and compacts L0
// (rocksdb_compact_lzero_now=1) where the variable exists — not in MariaDB 10.11. The
// reference's combined rocksdb_force_flush_memtable_and_lzero_now is not used: it is not
// safe (MyRocks issues 1200, 1295).
func rocksDebt(ctx context.Context, c *sql.Conn) ([]string, error) {
	var parts []string
	wait := func(what string) error {
		d, how, err := rocksIdle(ctx, c)
		if err != nil {
			return err
		}
		parts = append(parts, fmt.Sprintf("%s: %s %s", what, how, d))
		return nil
	}
	if err := wait("wait for compactions"); err != nil {
		return parts, err
	}
	start := time.Now()
	if err := setGlobal(ctx, c, "rocksdb_force_flush_memtable_now", "1"); err != nil {
		return parts, err
	}
	parts = append(parts, "rocksdb_force_flush_memtable_now=1 in "+since(start))
	if err := wait("wait for flush"); err != nil {
		return parts, err
	}
	if _, ok, err := globalVar(ctx, c, "rocksdb_compact_lzero_now"); err != nil {
		return parts, err
	} else if ok {
		start := time.Now()
		if err := setGlobal(ctx, c, "rocksdb_compact_lzero_now", "1"); err != nil {
			return parts, err
		}
		parts = append(parts, "rocksdb_compact_lzero_now=1 in "+since(start))
	} else {
		parts = append(parts, "no rocksdb_compact_lzero_now on this server")
	}
	return parts, nil
}

// rocksIdle polls until MyRocks runs no compaction or flush, at most debtWait. It reads
// information_schema.ROCKSDB_ACTIVE_COMPACTION_STATS where it exists (MyRocks of
// Facebook's MySQL, the reference's source) and otherwise the COMPACTION_PENDING and
// MEM_TABLE_FLUSH_PENDING rows of ROCKSDB_CFSTATS (MariaDB). It reports how long it waited
// and with which source; without either table it does not wait.
func rocksIdle(ctx context.Context, c *sql.Conn) (string, string, error) {
	var query, how string
	switch {
	case tableExists(ctx, c, "ROCKSDB_ACTIVE_COMPACTION_STATS"):
		query = "SELECT COUNT(*) FROM information_schema.ROCKSDB_ACTIVE_COMPACTION_STATS"
		how = "ROCKSDB_ACTIVE_COMPACTION_STATS empty after"
	case tableExists(ctx, c, "ROCKSDB_CFSTATS"):
		query = "SELECT COALESCE(SUM(VALUE), 0) FROM information_schema.ROCKSDB_CFSTATS " +
			"WHERE STAT_TYPE IN ('COMPACTION_PENDING', 'MEM_TABLE_FLUSH_PENDING')"
		how = "no compaction or flush pending (ROCKSDB_CFSTATS) after"
	default:
		return "", "no MyRocks compaction view: skipped", nil
	}
	start := time.Now()
	for {
		var n int64
		if err := c.QueryRowContext(ctx, query).Scan(&n); err != nil {
			return "", "", fmt.Errorf("myrocks cleanup: %s: %w", query, err)
		}
		if n == 0 {
			return since(start), how, nil
		}
		if time.Since(start) >= debtWait {
			return since(start), fmt.Sprintf("gave up with %d still running/pending after", n), nil
		}
		if err := sleep(ctx, debtPoll); err != nil {
			return "", "", err
		}
	}
}

// analyze runs ANALYZE TABLE and fails on an error row.
func analyze(ctx context.Context, c *sql.Conn, table string) error {
	rows, err := c.QueryContext(ctx, "ANALYZE TABLE "+quoteIdent(table))
	if err != nil {
		return fmt.Errorf("ANALYZE TABLE %s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var tbl, op, typ, text sql.NullString
		if err := rows.Scan(&tbl, &op, &typ, &text); err != nil {
			return fmt.Errorf("ANALYZE TABLE %s: %w", table, err)
		}
		if strings.EqualFold(typ.String, "error") {
			return fmt.Errorf("ANALYZE TABLE %s: %s", table, text.String)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("ANALYZE TABLE %s: %w", table, err)
	}
	return nil
}

// globalVar reads a global variable; ok is false when the server has no such variable.
func globalVar(ctx context.Context, c *sql.Conn, name string) (string, bool, error) {
	var n, v string
	err := c.QueryRowContext(ctx, "SHOW GLOBAL VARIABLES LIKE "+likeExact(name)).Scan(&n, &v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", name, err)
	}
	return v, true, nil
}

// globalStatusInt reads an integer global status variable.
func globalStatusInt(ctx context.Context, c *sql.Conn, name string) (int64, bool, error) {
	var n, v string
	err := c.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE "+likeExact(name)).Scan(&n, &v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read status %s: %w", name, err)
	}
	i, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("read status %s: %w", name, err)
	}
	return i, true, nil
}

// setGlobal sets a numeric global variable. The value is checked to be a number (values
// come from the server or from this file) and written into the statement, since SET
// does not take every variable's value as a bind parameter.
func setGlobal(ctx context.Context, c *sql.Conn, name, value string) error {
	if _, err := strconv.ParseFloat(value, 64); err != nil {
		return fmt.Errorf("set %s: value %q is not a number", name, value)
	}
	if _, err := c.ExecContext(ctx, "SET GLOBAL "+name+" = "+value); err != nil {
		return fmt.Errorf("SET GLOBAL %s = %s: %w", name, value, err)
	}
	return nil
}

// tableExists says whether information_schema has the table (errors count as absent).
func tableExists(ctx context.Context, c *sql.Conn, name string) bool {
	var n int
	err := c.QueryRowContext(ctx,
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME = ?",
		name).Scan(&n)
	return err == nil && n > 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func since(t time.Time) string { return time.Since(t).Round(time.Millisecond).String() }

// likeExact renders a variable name as the quoted pattern of SHOW … LIKE, which takes no
// bind parameter: '_' (a wildcard) is escaped, and names are this file's constants, made of
// letters, digits and '_' only (anything else is dropped, so nothing can be injected).
// A string literal keeps \_ as is, with or without NO_BACKSLASH_ESCAPES.
func likeExact(name string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range name {
		switch {
		case r == '_':
			b.WriteString(`\_`)
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
