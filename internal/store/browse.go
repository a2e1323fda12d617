package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"
)

// BrowseFilter selects runs for Browse (`dbperf serve`'s runs page). Empty fields and
// zero times match everything.
type BrowseFilter struct {
	Workload, Engine, EngineVersion, Label, Host string
	// Since and Until bound the start time (Until exclusive).
	Since, Until time.Time
	// Limit and Offset page through the matches, newest first (Limit 0: all).
	Limit, Offset int
}

// Browse lists the runs matching f, newest first, one page of them, with how many match
// in all. Its queries are indexed on the run id, so a page of a store with tens of
// thousands of runs takes milliseconds.
func (s *Store) Browse(ctx context.Context, f BrowseFilter) ([]RunSummary, int, error) {
	since, until := "", ""
	if !f.Since.IsZero() {
		since = formatTime(f.Since)
	}
	// Times are compared as text with a 4-digit year, so a bound past year 9999 (the day
	// after "to=9999-12-31") would sort before every run: it bounds nothing.
	if !f.Until.IsZero() && f.Until.UTC().Year() <= 9999 {
		until = formatTime(f.Until)
	}
	where := `
FROM runs r
WHERE (? = '' OR r.workload = ?) AND (? = '' OR r.engine = ?) AND (? = '' OR r.engine_version = ?)
	AND (? = '' OR r.label = ?) AND (? = '' OR r.host = ?)
	AND (? = '' OR r.started_at >= ?) AND (? = '' OR r.started_at < ?)`
	args := []any{f.Workload, f.Workload, f.Engine, f.Engine, f.EngineVersion, f.EngineVersion,
		f.Label, f.Label, f.Host, f.Host, since, since, until, until}
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*)`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: browse runs: %w", err)
	}
	// Literals both databases take: SQLite refuses OFFSET without LIMIT and PostgreSQL a
	// negative LIMIT, so "all" is no clause, or the largest LIMIT when paging past rows.
	page := ""
	if f.Limit > 0 || f.Offset > 0 {
		limit := int64(math.MaxInt64)
		if f.Limit > 0 {
			limit = int64(f.Limit)
		}
		page = fmt.Sprintf("LIMIT %d OFFSET %d", limit, max(f.Offset, 0))
	}
	rows, err := s.db.QueryContext(ctx, `
SELECT r.id, r.started_at, r.workload, r.engine, r.engine_version, r.label, r.status,
	r.pid, r.pid_start_ticks, r.boot_id,
	(SELECT count(*) FROM steps s WHERE s.run_id = r.id), r.host`+where+`
ORDER BY r.id DESC
`+page, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("store: browse runs: %w", err)
	}
	defer rows.Close()
	var out []RunSummary
	for rows.Next() {
		var rs RunSummary
		var started string
		var proc procIdentity
		if err := rows.Scan(&rs.ID, &started, &rs.Workload, &rs.Engine, &rs.EngineVersion, &rs.Label, &rs.Status,
			&proc.PID, &proc.StartTicks, &proc.BootID, &rs.Steps, &rs.Host); err != nil {
			return nil, 0, fmt.Errorf("store: browse runs: %w", err)
		}
		if rs.StartedAt, err = parseTime(started); err != nil {
			return nil, 0, fmt.Errorf("store: browse runs: run %d: %w", rs.ID, err)
		}
		rs.Status = liveStatus(rs.Status, proc, rs.Host)
		out = append(out, rs)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: browse runs: %w", err)
	}
	return out, total, nil
}

// Distinct lists the distinct values of a run column (workload, engine, engine_version,
// label, host) in the store, sorted, for the runs page's choices.
func (s *Store) Distinct(ctx context.Context, column string) ([]string, error) {
	expr := map[string]string{
		"workload": "workload", "engine": "engine", "engine_version": "engine_version", "label": "label",
		"host": "host",
	}[column]
	if expr == "" {
		return nil, fmt.Errorf("store: no run column %q to list", column)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT `+expr+` FROM runs WHERE `+expr+` <> '' ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("store: list %s: %w", column, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v sql.NullString
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("store: list %s: %w", column, err)
		}
		out = append(out, v.String)
	}
	return out, rows.Err()
}

// CheckSchema reads the file's schema version again: a store that a newer dbperf migrated
// while this one has it open (`dbperf serve` runs for days) reads back as
// *SchemaTooNewError, so a page can say so instead of failing on a column it does not know.
func (s *Store) CheckSchema(ctx context.Context) error {
	v, err := s.userVersion(ctx, s.db)
	if err != nil {
		return err
	}
	if v > SchemaVersion {
		return &SchemaTooNewError{Path: s.path, FileVersion: v, KnownVersion: SchemaVersion}
	}
	return nil
}
