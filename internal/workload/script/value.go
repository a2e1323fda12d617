package script

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// kind is a value's type, as pgbench's PgBenchValueType.
type kind uint8

const (
	kNone   kind = iota // a variable never set
	kNull               // NULL
	kBool               // i is 0 or 1
	kInt                // i
	kDouble             // d
	kText               // s: a \gset value that is not an integer, typed when used
)

// value is a script value, kept unboxed: evaluating an expression allocates nothing.
type value struct {
	k kind
	i int64
	d float64
	s string
}

func intVal(i int64) value      { return value{k: kInt, i: i} }
func doubleVal(d float64) value { return value{k: kDouble, d: d} }
func boolVal(b bool) value {
	if b {
		return value{k: kBool, i: 1}
	}
	return value{k: kBool}
}

func (v value) typeName() string {
	switch v.k {
	case kNull:
		return "null"
	case kBool:
		return "boolean"
	case kInt:
		return "int"
	case kDouble:
		return "double"
	case kText:
		return "text"
	}
	return "none"
}

// String renders v as pgbench's getVariable does (doubles with 15 significant digits).
func (v value) String() string {
	switch v.k {
	case kNull:
		return "NULL"
	case kBool:
		return strconv.FormatBool(v.i != 0)
	case kInt:
		return strconv.FormatInt(v.i, 10)
	case kDouble:
		return strconv.FormatFloat(v.d, 'g', 15, 64)
	case kText:
		return v.s
	}
	return ""
}

// typed converts a text value as pgbench's makeVariableValue does: null, the boolean
// words (and their prefixes), an integer, else a double; anything else is an error.
func (v value) typed() (value, error) {
	if v.k != kText {
		return v, nil
	}
	s := v.s
	n := len(s)
	low := strings.ToLower(s)
	switch {
	case n == 0:
		return v, fmt.Errorf("empty value is not a number")
	case low == "null":
		return value{k: kNull}, nil
	case strings.HasPrefix("true", low) || strings.HasPrefix("yes", low) || low == "on":
		return boolVal(true), nil
	case strings.HasPrefix("false", low) || strings.HasPrefix("no", low) || low == "off" || low == "of":
		return boolVal(false), nil
	}
	if i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
		return intVal(i), nil
	}
	d, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return v, fmt.Errorf("malformed value %q", s)
	}
	return doubleVal(d), nil
}

func (v value) toInt() (int64, error) {
	switch v.k {
	case kInt:
		return v.i, nil
	case kDouble:
		d := math.RoundToEven(v.d)
		if math.IsNaN(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0 {
			return 0, fmt.Errorf("double to int overflow for %f", d)
		}
		return int64(d), nil
	}
	return 0, fmt.Errorf("cannot coerce %s to int", v.typeName())
}

func (v value) toDouble() (float64, error) {
	switch v.k {
	case kDouble:
		return v.d, nil
	case kInt:
		return float64(v.i), nil
	}
	return 0, fmt.Errorf("cannot coerce %s to double", v.typeName())
}

func (v value) toBool() (bool, error) {
	if v.k == kBool {
		return v.i != 0, nil
	}
	return false, fmt.Errorf("cannot coerce %s to boolean", v.typeName())
}

// truth is pgbench's valueTruth, the condition of \if: non-zero numbers are true, NULL
// is false.
func (v value) truth() bool {
	switch v.k {
	case kBool, kInt:
		return v.i != 0
	case kDouble:
		return v.d != 0
	}
	return false
}
