package postgres

import (
	"context"
	"fmt"
)

// MaxSessions is max_connections less the connections reserved for superusers (and for
// roles with pg_use_reserved_connections, PostgreSQL 16+) and those in use now.
func (h *handle) MaxSessions(ctx context.Context) (int, string, error) {
	c, err := h.connect(ctx)
	if err != nil {
		return 0, "", fmt.Errorf("postgres max sessions: %w", err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	var maxConn, reserved, inUse int
	err = c.QueryRow(ctx, `SELECT current_setting('max_connections')::int,
	current_setting('superuser_reserved_connections')::int + coalesce(current_setting('reserved_connections', true)::int, 0),
	(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int`).Scan(&maxConn, &reserved, &inUse)
	if err != nil {
		return 0, "", fmt.Errorf("postgres max sessions: %w", err)
	}
	// This connection closes before the sessions open: it is not one of those in use.
	inUse = max(inUse-1, 0)
	return max(maxConn-reserved-inUse, 0), fmt.Sprintf("max_connections %d less %d reserved and %d in use", maxConn, reserved, inUse), nil
}
