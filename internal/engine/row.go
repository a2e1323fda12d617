package engine

import "context"

// Row is the first row a query returned: each column's name and its value as text, as
// the engine's text output renders it. It is for workloads that keep what a query
// returned (pgbench's \gset); its slices are reused from one query to the next.
type Row struct {
	Names  []string
	Values [][]byte // Values[i] is column i's text; meaningless when Null[i]
	Null   []bool
}

// Reset sizes the row for n columns, keeping its buffers.
func (r *Row) Reset(n int) {
	if cap(r.Values) < n {
		r.Values = append(r.Values[:cap(r.Values)], make([][]byte, n-cap(r.Values))...)
	}
	r.Values = r.Values[:n]
	if cap(r.Null) < n {
		r.Null = make([]bool, n)
	}
	r.Null = r.Null[:n]
	r.Names = r.Names[:0]
}

// Set copies column i's text (nil b with null true for NULL).
func (r *Row) Set(i int, b []byte, null bool) {
	r.Null[i] = null
	r.Values[i] = append(r.Values[i][:0], b...)
}

// RowQuerier is implemented by the statements of the SQL engines that can return a
// query's first row (PostgreSQL, SQLite, MariaDB): a workload type-asserts a Stmt to it.
type RowQuerier interface {
	// QueryRow runs the statement, reads every row it returns, keeps the first one in
	// row (its column names too) and returns the number of rows; with no row, row has
	// the names and no values.
	QueryRow(ctx context.Context, args *Args, row *Row) (rows int64, err error)
}
