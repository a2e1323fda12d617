package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
)

var _ engine.ThreadNamer = (*handle)(nil)

// serverThreadsTimeout bounds ServerThreads' queries.
const serverThreadsTimeout = 5 * time.Second

// ServerThreads maps the server's OS thread ids to their performance_schema.threads NAME
// without its "thread/" prefix ("innodb/page_cleaner_thread", "innodb/thread_pool_thread",
// "sql/one_connection", "aria/checkpoint_background"). MariaDB does not name its threads
// for the OS (every thread's comm is "mariadbd"), so performance_schema is the only place
// that tells them apart. It runs on a connection of the handle's pool, never a session's.
// Threads performance_schema does not instrument (InnoDB's io_uring or libaio completion
// thread) are absent. Without performance_schema it fails, saying so.
func (h *handle) ServerThreads(ctx context.Context) (map[int]string, error) {
	ctx, cancel := context.WithTimeout(ctx, serverThreadsTimeout)
	defer cancel()
	c, err := h.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("mariadb server threads: %w", err)
	}
	defer c.Close()
	var on sql.NullString
	if err := c.QueryRowContext(ctx, "SELECT @@performance_schema").Scan(&on); err != nil {
		return nil, fmt.Errorf("mariadb server threads: @@performance_schema: %w", err)
	}
	if on.String != "1" && !strings.EqualFold(on.String, "ON") {
		return nil, errors.New("mariadb server threads: performance_schema is off on this server: start it with performance_schema=ON to name its threads")
	}
	rows, err := c.QueryContext(ctx, "SELECT THREAD_OS_ID, NAME FROM performance_schema.threads WHERE THREAD_OS_ID IS NOT NULL")
	if err != nil {
		return nil, fmt.Errorf("mariadb server threads: %w", err)
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var tid int64
		var name string
		if err := rows.Scan(&tid, &name); err != nil {
			return nil, fmt.Errorf("mariadb server threads: %w", err)
		}
		if tid > 0 && name != "" {
			out[int(tid)] = threadName(name)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mariadb server threads: %w", err)
	}
	return out, nil
}

// threadName is a performance_schema.threads NAME without its "thread/" prefix.
func threadName(name string) string {
	return strings.TrimPrefix(name, "thread/")
}
