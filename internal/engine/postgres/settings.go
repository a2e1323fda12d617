package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"
)

// Setting is one session parameter dbperf sets on every connection it opens (a startup
// parameter, in effect before the first statement). Settings is the single list of them
// and of why each value was chosen.
type Setting struct {
	// Name is the PostgreSQL parameter ("application_name"), read back with SHOW.
	Name string
	// Value is the value set, as SHOW reports it.
	Value string
	// Why explains the choice.
	Why string
}

// Settings returns dbperf's per-session PostgreSQL settings.
func Settings() []Setting {
	return []Setting{
		{
			Name: "application_name", Value: "dbperf",
			Why: "names dbperf's backends in pg_stat_activity and the server log, so they can be " +
				"told apart from other clients (and found by perf, as the reference does with pg_backend_pid)",
		},
		{
			Name: "statement_timeout", Value: "0",
			Why: "no statement timeout whatever the server or role default: index builds (l.x) and " +
				"VACUUM (cleanup) of large tables run for minutes and must not be cancelled",
		},
		{
			Name: "idle_in_transaction_session_timeout", Value: "0",
			Why: "benchmark sessions run in autocommit and are never idle in a transaction; a server " +
				"default must not close a session between a step's phases",
		},
	}
}

// Connection behaviour of the driver (pgx), in one place.
const (
	// connectTimeout bounds opening one connection.
	connectTimeout = 30 * time.Second
	// cancelTimeout bounds sending a cancel request for an interrupted statement.
	cancelTimeout = 5 * time.Second
	// execMode is how statements that are not prepared explicitly (Session.Exec with
	// arguments) run: described first, so arguments are encoded for the server's parameter
	// types (a string for a timestamp), and never cached, so DDL that changes a table
	// cannot leave a stale cached plan behind. Prepared statements (Session.Prepare) are
	// named server-side statements, executed without a describe round trip, as the
	// reference's PREPARE/EXECUTE (§1.8).
	execMode = pgx.QueryExecModeDescribeExec
)

// connConfig parses dsn and applies Settings and the driver behaviour above.
func connConfig(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > connectTimeout {
		cfg.ConnectTimeout = connectTimeout
	}
	cfg.DefaultQueryExecMode = execMode
	cfg.StatementCacheCapacity = 0
	cfg.DescriptionCacheCapacity = 0
	for _, s := range Settings() {
		cfg.RuntimeParams[s.Name] = s.Value
	}
	return cfg, nil
}
