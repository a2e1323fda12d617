package mariadb

import (
	"context"
	"fmt"
	"strconv"

	"github.com/dbperf/dbperf/internal/engine/drvconn"
)

// MaxSessions is max_connections less the connections in use now (MariaDB keeps one more
// for a SUPER user, which dbperf's sessions do not count on).
func (h *handle) MaxSessions(ctx context.Context) (int, string, error) {
	s, err := h.NewSession(ctx)
	if err != nil {
		return 0, "", fmt.Errorf("mariadb max sessions: %w", err)
	}
	defer s.Close()
	ss, ok := s.(*drvconn.Session)
	if !ok {
		return 0, "", fmt.Errorf("mariadb max sessions: %T is not a mariadb session", s)
	}
	rows, err := ss.QueryStrings(ctx, "SELECT @@max_connections, (SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND <> 'Daemon')")
	if err != nil || len(rows) != 1 || len(rows[0]) != 2 {
		return 0, "", fmt.Errorf("mariadb max sessions: %v", err)
	}
	maxConn, err1 := strconv.Atoi(rows[0][0])
	inUse, err2 := strconv.Atoi(rows[0][1])
	if err1 != nil || err2 != nil {
		return 0, "", fmt.Errorf("mariadb max sessions: max_connections %q, in use %q", rows[0][0], rows[0][1])
	}
	inUse = max(inUse-1, 0) // this session closes before the run's open
	return max(maxConn-inUse, 0), fmt.Sprintf("max_connections %d less %d in use", maxConn, inUse), nil
}
