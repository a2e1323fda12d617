package engine

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// ErrConflict is wrapped by the error of a statement the engine aborted because of a
// conflict with a concurrent transaction: a deadlock, a lock wait timeout, a
// serialization failure, SQLite's busy lock or stale snapshot. Nothing of the statement
// (in autocommit) or of its transaction committed; once the transaction is rolled back,
// running it again may succeed, as sysbench does with its "ignorable" errors.
var ErrConflict = errors.New("conflict with a concurrent transaction")

// ErrDuplicateKey is wrapped by the error of a statement that would have duplicated a
// unique key. Between concurrent transactions it can be a conflict too: PostgreSQL
// reports a row deleted and inserted again by another transaction this way (sysbench
// treats it as ignorable there).
var ErrDuplicateKey = errors.New("duplicate key")

// ClientQuery is a query prepared on the client only (Session.PrepareClient): its text
// split at the placeholders, so that every execution renders it with the arguments
// inlined as SQL literals into a reused buffer, as sysbench's --db-ps-mode=disable (and a
// driver's client-side "interpolation") sends statements.
type ClientQuery struct {
	// parts[i] precedes placeholder i; the last part follows the last placeholder.
	parts []string
	// args[i] is the 0-based argument placeholder i takes.
	args []int
	// n is the number of arguments the query takes.
	n int
}

// ParseClientQuery splits query at its placeholders: "?" (each the next argument) or,
// with dollar, "$n" (argument n). Quoted literals and identifiers ('…', "…", `…`) are
// skipped, so a placeholder character inside them is text.
func ParseClientQuery(query string, dollar bool) (ClientQuery, error) {
	var q ClientQuery
	start := 0
	for i := 0; i < len(query); i++ {
		switch c := query[i]; c {
		case '\'', '"', '`':
			end := i + 1
			for end < len(query) && query[end] != c {
				end++
			}
			if end == len(query) {
				return ClientQuery{}, fmt.Errorf("unterminated %c in %q", c, query)
			}
			i = end
		case '?':
			if dollar {
				continue
			}
			q.parts = append(q.parts, query[start:i])
			q.args = append(q.args, len(q.args))
			start = i + 1
		case '$':
			if !dollar {
				continue
			}
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			if j == i+1 {
				continue
			}
			n, err := strconv.Atoi(query[i+1 : j])
			if err != nil || n < 1 {
				return ClientQuery{}, fmt.Errorf("bad placeholder %s in %q", query[i:j], query)
			}
			q.parts = append(q.parts, query[start:i])
			q.args = append(q.args, n-1)
			start = j
			i = j - 1
		}
	}
	q.parts = append(q.parts, query[start:])
	for _, a := range q.args {
		q.n = max(q.n, a+1)
	}
	return q, nil
}

// NumArgs is the number of arguments the query takes.
func (q *ClientQuery) NumArgs() int { return q.n }

// Render appends the query with args inlined to buf: integers in decimal, NULL, text in
// single quotes with every ' doubled and, with backslashEscapes (MySQL's default SQL
// mode), every backslash doubled and NUL written as \0. It allocates nothing once buf has
// grown to size.
func (q *ClientQuery) Render(buf []byte, args *Args, backslashEscapes bool) ([]byte, error) {
	if n := args.Len(); n != q.n {
		return buf, fmt.Errorf("%d arguments for %d parameters", n, q.n)
	}
	for i, a := range q.args {
		buf = append(buf, q.parts[i]...)
		switch args.Kind(a) {
		case ArgNull:
			buf = append(buf, "NULL"...)
		case ArgInt:
			buf = strconv.AppendInt(buf, args.IntAt(a), 10)
		case ArgText:
			buf = appendQuoted(buf, args.TextAt(a), backslashEscapes)
		}
	}
	return append(buf, q.parts[len(q.parts)-1]...), nil
}

func appendQuoted(buf, s []byte, backslashEscapes bool) []byte {
	buf = append(buf, '\'')
	if bytes.IndexByte(s, '\'') < 0 && (!backslashEscapes || bytes.IndexByte(s, '\\') < 0 && bytes.IndexByte(s, 0) < 0) {
		buf = append(buf, s...)
		return append(buf, '\'')
	}
	for _, c := range s {
		switch {
		case c == '\'':
			buf = append(buf, '\'', '\'')
		case backslashEscapes && c == '\\':
			buf = append(buf, '\\', '\\')
		case backslashEscapes && c == 0:
			buf = append(buf, '\\', '0')
		default:
			buf = append(buf, c)
		}
	}
	return append(buf, '\'')
}
