package workload

import "github.com/dbperf/dbperf/internal/engine"

// CloseStmts closes the non-nil statements and returns the first error: a worker's Close
// of the statements its Init prepared (some may not have been prepared when Init failed).
func CloseStmts(stmts ...engine.Stmt) error {
	var first error
	for _, st := range stmts {
		if st == nil {
			continue
		}
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
