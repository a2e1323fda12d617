package engine

import (
	"fmt"
	"strconv"
)

// ArgKind is the type of one statement argument.
type ArgKind uint8

// Argument kinds: the types benchmark statements bind.
const (
	ArgNull ArgKind = iota
	ArgInt
	ArgText
)

// Args is the argument list of one execution of a prepared statement, kept unboxed:
// integers are stored as int64 and text is appended to one byte buffer, so filling the
// arguments of a 100-row INSERT allocates nothing once the Args has grown to size, and
// each engine encodes the values in its own way (PostgreSQL straight into its wire
// format). It is reused: Reset empties it and keeps its memory. It is not safe for
// concurrent use; an engine reads it only during the call it is passed to.
//
// Why not []any: an int64 in an interface is a heap allocation (or a lookup in a table of
// boxed values, a cache miss per value), and the data column's text was built by string
// concatenation, one allocation per row: together they were most of the row generator's
// and the encoder's cost (profile of l.i0, issue #9).
type Args struct {
	kinds []ArgKind
	// vals holds an ArgInt's value, or an ArgText's start<<32 | end in text.
	vals []int64
	text []byte
}

// NewArgs returns arguments for the given values, which must be integers (int, int32,
// int64), strings or nil; any other type panics. It is for literal argument lists
// (setup code, tests); hot paths fill a reused Args with Int and Text.
func NewArgs(vals ...any) *Args {
	a := &Args{}
	for i, v := range vals {
		switch v := v.(type) {
		case nil:
			a.Null()
		case int:
			a.Int(int64(v))
		case int32:
			a.Int(int64(v))
		case int64:
			a.Int(v)
		case string:
			a.Text(v)
		default:
			panic(fmt.Sprintf("engine.NewArgs: argument %d has unsupported type %T", i+1, v))
		}
	}
	return a
}

// Reset empties the list, keeping its memory.
func (a *Args) Reset() {
	a.kinds, a.vals, a.text = a.kinds[:0], a.vals[:0], a.text[:0]
}

// Len is the number of arguments (0 for a nil *Args).
func (a *Args) Len() int {
	if a == nil {
		return 0
	}
	return len(a.kinds)
}

// Int appends an integer.
func (a *Args) Int(v int64) {
	a.kinds = append(a.kinds, ArgInt)
	a.vals = append(a.vals, v)
}

// Text appends a text value.
func (a *Args) Text(s string) {
	start := len(a.text)
	a.text = append(a.text, s...)
	a.addText(start)
}

// Text2 appends the text value s+t without building the string s+t.
func (a *Args) Text2(s, t string) {
	start := len(a.text)
	a.text = append(a.text, s...)
	a.text = append(a.text, t...)
	a.addText(start)
}

func (a *Args) addText(start int) {
	a.kinds = append(a.kinds, ArgText)
	a.vals = append(a.vals, int64(start)<<32|int64(len(a.text)))
}

// Null appends SQL NULL.
func (a *Args) Null() {
	a.kinds = append(a.kinds, ArgNull)
	a.vals = append(a.vals, 0)
}

// Kind is the type of argument i (0-based).
func (a *Args) Kind(i int) ArgKind { return a.kinds[i] }

// IntAt is the value of integer argument i.
func (a *Args) IntAt(i int) int64 { return a.vals[i] }

// TextAt is the bytes of text argument i. They belong to the Args: valid until it is
// reset or appended to, and not to be modified.
func (a *Args) TextAt(i int) []byte {
	v := a.vals[i]
	start, end := v>>32, v&(1<<32-1)
	return a.text[start:end:end]
}

// String renders the arguments for error messages and tests, e.g. (1, 'x', NULL).
func (a *Args) String() string {
	b := []byte{'('}
	for i := range a.Len() {
		if i > 0 {
			b = append(b, ", "...)
		}
		switch a.kinds[i] {
		case ArgNull:
			b = append(b, "NULL"...)
		case ArgInt:
			b = strconv.AppendInt(b, a.vals[i], 10)
		case ArgText:
			b = strconv.AppendQuote(b, string(a.TextAt(i)))
		}
	}
	return string(append(b, ')'))
}
