package sqlite

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Setting is one connection setting dbperf applies to every SQLite connection. The list
// returned by Settings is the single source for the DSN (so every pooled connection gets
// the same values) and for the documentation of why each value was chosen.
type Setting struct {
	// Param is the mattn/go-sqlite3 DSN parameter ("_journal_mode").
	Param string
	// Value is the value given to it ("WAL").
	Value string
	// Pragma is the PRAGMA that reads the effective value back (Info), or "" when the
	// setting is a driver behaviour with no PRAGMA (transaction locking).
	Pragma string
	// Why explains the choice; it is shown by documentation and kept next to the value.
	Why string
}

// Settings returns dbperf's SQLite connection settings in the order they appear in the DSN.
// The driver applies them on every new connection, before the connection is handed out.
func Settings() []Setting {
	return []Setting{
		{
			Param: "_journal_mode", Value: "WAL", Pragma: "journal_mode",
			Why: "write-ahead log: readers do not block the writer and the writer does not block " +
				"readers, so the query actors of the read-write steps run beside the insert and " +
				"delete actors; it is also how SQLite is deployed for concurrent use",
		},
		{
			Param: "_synchronous", Value: "NORMAL", Pragma: "synchronous",
			Why: "in WAL mode NORMAL syncs the log at checkpoints, not at every commit: the database " +
				"is always consistent and durable as of the last checkpoint; it is the common " +
				"benchmark and production setting (FULL would measure fsync latency per commit)",
		},
		{
			Param: "_busy_timeout", Value: "60000", Pragma: "busy_timeout",
			Why: "SQLite has a single writer: the insert and delete actors of every client queue on " +
				"it. A 60 s busy timeout lets them wait their turn, so contention shows up as " +
				"latency in the measurements instead of SQLITE_BUSY errors a short timeout would raise",
		},
		{
			Param: "_cache_size", Value: "-65536", Pragma: "cache_size",
			Why: "64 MiB page cache per connection (negative = KiB) instead of the 2 MiB default, " +
				"so the secondary indexes' upper levels stay cached as on the server engines",
		},
		{
			Param: "_foreign_keys", Value: "0", Pragma: "foreign_keys",
			Why: "no benchmark table has foreign keys; off is SQLite's default, stated so that a " +
				"build with a different default cannot change the measurements",
		},
		{
			Param: "_txlock", Value: "immediate", Pragma: "",
			Why: "benchmark statements run in autocommit mode or send their own BEGIN (sysbench's " +
				"transactions; Dialect.BeginWrite), so this does not affect them; an explicit " +
				"transaction opened through database/sql takes the write " +
				"lock at BEGIN and waits in the busy timeout, instead of failing with SQLITE_BUSY " +
				"when a deferred reader upgrades to a writer (which the busy handler cannot resolve)",
		},
	}
}

// infoPragmas lists the PRAGMAs Info reads back, in order: the settings above and the
// defaults that shape performance (page size, checkpoint interval, temp store, mmap).
func infoPragmas() []string {
	return []string{
		"journal_mode", "synchronous", "busy_timeout", "cache_size", "foreign_keys", "page_size",
		"wal_autocheckpoint", "temp_store", "mmap_size", "auto_vacuum", "locking_mode",
	}
}

// pragmaValue renders the answer of a PRAGMA: enumerated ones by name ("NORMAL"), others as is.
func pragmaValue(pragma, v string) string {
	var names []string
	switch pragma {
	case "synchronous":
		names = []string{"OFF", "NORMAL", "FULL", "EXTRA"}
	case "temp_store":
		names = []string{"DEFAULT", "FILE", "MEMORY"}
	case "auto_vacuum":
		names = []string{"NONE", "FULL", "INCREMENTAL"}
	case "journal_mode", "locking_mode":
		return strings.ToUpper(v)
	}
	if i, err := strconv.Atoi(v); err == nil && i >= 0 && i < len(names) {
		return names[i]
	}
	return v
}

// dsn renders the driver's data source name for a database file: the path followed by the
// Settings as query parameters, in order.
func dsn(path string) (string, error) {
	if strings.ContainsRune(path, '?') {
		// The driver splits the DSN at the first '?'.
		return "", fmt.Errorf("database path %q must not contain '?'", path)
	}
	var b strings.Builder
	b.WriteString(path)
	for i, s := range Settings() {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(s.Param))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(s.Value))
	}
	return b.String(), nil
}
