package sqlite

import (
	"context"
	"fmt"
)

// MaxSessionsCap is how many sessions dbperf opens on one embedded SQLite database at
// most. Every session is a connection of its own, with its page cache (settings.go) and
// file handles, all inside dbperf's process, and SQLite serializes writers anyway: 1,200
// sessions (400 Insert Benchmark clients) take about 330 MB and open in a second; 30,000
// took 3.4 GB without writing a row.
const MaxSessionsCap = 1024

// MaxSessions is MaxSessionsCap.
func (h *handle) MaxSessions(context.Context) (int, string, error) {
	return MaxSessionsCap, fmt.Sprintf("dbperf's cap for embedded SQLite, %d sessions in one process", MaxSessionsCap), nil
}
