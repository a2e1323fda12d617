package engine

import "context"

// ThreadNamer is implemented by handles of a server that is one process of many threads
// (MariaDB) and can say what each thread is, so a CPU profile names the server's
// background threads (InnoDB's page cleaner, its I/O thread pool, …) instead of lumping
// them under the process's name. PostgreSQL has no use for it: each of its processes
// names itself in its title.
type ThreadNamer interface {
	// ServerThreads maps the server's OS thread ids to short readable names
	// ("innodb/page_cleaner_thread", "sql/one_connection"): the threads the server knows
	// of when it is called. It fails when the server cannot tell (MariaDB without
	// performance_schema), saying why.
	ServerThreads(ctx context.Context) (map[int]string, error)
}
