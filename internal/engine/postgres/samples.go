package postgres

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgtype"
)

// paramSamples keeps one sample of the parameters each prepared statement ran with, so
// that the diag can EXPLAIN a statement shape with real values (its custom plan) beside
// its generic plan (diag.CustomPlan).
//
// Cost on the workload's path: none per operation beyond one atomic load and compare
// (stmt.roundTrip). A statement copies its arguments only when the epoch moved since its
// last copy, and the epoch moves only when the diag reads the server's statements
// (diag.Statements: at a step's start and end, with --explain only). So each statement
// is sampled at most once per step, by its first execution after the step's start, and
// never without --explain.
type paramSamples struct {
	epoch atomic.Uint64
	mu    sync.Mutex
	// byText holds the last sample per statement text (whitespace collapsed: the text
	// pg_stat_statements shows for a prepared statement is the text prepared).
	byText map[string][]*string // a nil element: NULL
}

// next starts a new epoch: every statement samples its arguments again at its next run.
func (ps *paramSamples) next() { ps.epoch.Add(1) }

// put keeps a statement's current arguments as text: binary integers decoded by their
// parameter's type, text as it is sent, NULL as nil.
func (ps *paramSamples) put(query string, oids []uint32, values [][]byte, formats []int16) {
	sample := make([]*string, len(values))
	for i, v := range values {
		if v == nil {
			continue
		}
		var s string
		if i < len(formats) && formats[i] == pgtype.BinaryFormatCode && i < len(oids) {
			s = binaryInt(oids[i], v)
		} else {
			s = string(v)
		}
		sample[i] = &s
	}
	key := collapse(query)
	ps.mu.Lock()
	if ps.byText == nil {
		ps.byText = map[string][]*string{}
	}
	ps.byText[key] = sample
	ps.mu.Unlock()
}

// get is the text the workload prepared for a statement shape as pg_stat_statements
// shows it (normalized: its constants are parameters too, numbered after the statement's
// own) and the last sample of its arguments; false when no statement of the workload
// matches the shape or has run since the samples began.
func (ps *paramSamples) get(normalized string) (query string, sample []*string, ok bool) {
	n := collapse(normalized)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if s, ok := ps.byText[n]; ok {
		return n, s, true
	}
	// Texts that differ in a constant only (a delete's LIMIT 50 and its last batch's
	// LIMIT 37) are one shape to pg_stat_statements: the first in order stands for it,
	// the same one at every step.
	texts := make([]string, 0, len(ps.byText))
	for q := range ps.byText {
		texts = append(texts, q)
	}
	slices.Sort(texts)
	for _, q := range texts {
		if matchNormalized(n, q) {
			return q, ps.byText[q], true
		}
	}
	return "", nil, false
}

// matchNormalized says whether pg_stat_statements' normalized text n is the text q with
// some of its constants replaced by parameters: every other character is the same, a
// parameter of q stays itself, and a parameter of n beyond q's stands for a constant of
// q (a quoted string, a number).
func matchNormalized(n, q string) bool {
	i, j := 0, 0
	for i < len(n) && j < len(q) {
		if n[i] == '$' && i+1 < len(n) && isDigit(n[i+1]) {
			k := i + 1
			for k < len(n) && isDigit(n[k]) {
				k++
			}
			if strings.HasPrefix(q[j:], n[i:k]) && (j+k-i == len(q) || !isDigit(q[j+k-i])) {
				i, j = k, j+k-i
				continue
			}
			end := constantEnd(q, j)
			if end == j {
				return false
			}
			i, j = k, end
			continue
		}
		if n[i] != q[j] {
			return false
		}
		i++
		j++
	}
	return i == len(n) && j == len(q)
}

// constantEnd is where the constant starting at q[j] ends: a quoted string (” inside
// it a quote) or a number with an optional sign; j when none starts there.
func constantEnd(q string, j int) int {
	switch {
	case q[j] == '\'':
		for k := j + 1; k < len(q); k++ {
			if q[k] == '\'' {
				if k+1 < len(q) && q[k+1] == '\'' {
					k++
					continue
				}
				return k + 1
			}
		}
		return j
	case q[j] == '-' || isDigit(q[j]) || q[j] == '.':
		k := j
		if q[k] == '-' {
			k++
		}
		start := k
		for k < len(q) && (isDigit(q[k]) || q[k] == '.' || q[k] == 'e' || q[k] == 'E') {
			k++
		}
		if k == start {
			return j
		}
		return k
	}
	return j
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// binaryInt is an integer parameter encoded in binary (appendInt) as decimal text.
func binaryInt(oid uint32, v []byte) string {
	switch {
	case oid == pgtype.Int8OID && len(v) == 8:
		return strconv.FormatInt(int64(binary.BigEndian.Uint64(v)), 10)
	case oid == pgtype.Int4OID && len(v) == 4:
		return strconv.FormatInt(int64(int32(binary.BigEndian.Uint32(v))), 10)
	case oid == pgtype.Int2OID && len(v) == 2:
		return strconv.FormatInt(int64(int16(binary.BigEndian.Uint16(v))), 10)
	}
	return string(v)
}

// collapse is a statement's text with its runs of white space as one space.
func collapse(q string) string { return strings.Join(strings.Fields(q), " ") }

// literals are a sample as EXECUTE's argument list: quoted constants, which the server
// coerces to each parameter's type as it would the values bound, and NULL.
func literals(sample []*string) string {
	parts := make([]string, len(sample))
	for i, v := range sample {
		if v == nil {
			parts[i] = "NULL"
			continue
		}
		parts[i] = "'" + strings.ReplaceAll(*v, "'", "''") + "'"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
