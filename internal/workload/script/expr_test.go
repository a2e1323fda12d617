package script

import (
	"strings"
	"sync/atomic"
	"testing"
)

// eval parses and evaluates one expression with x = 10, d = 2.5, t = the text "7",
// s = the text "abc", n = NULL.
func eval(src string) (value, error) {
	vars := newVarTable()
	n, _, err := parseExpr(src, vars)
	if err != nil {
		return value{}, err
	}
	vals := make([]value, len(vars.names))
	for name, v := range map[string]value{"x": intVal(10), "d": doubleVal(2.5), "t": {k: kText, s: "7"},
		"s": {k: kText, s: "abc"}, "n": {k: kNull}, "yes": {k: kText, s: "on"}, "default_seed": intVal(0)} {
		if s, ok := vars.slots[name]; ok {
			vals[s] = v
		}
	}
	r := newPRNG(1)
	e := env{vars: vals, names: vars.names, rng: &r}
	return e.eval(n)
}

func TestEval(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"1 + 2 * 3", "int 7"},
		{"(1 + 2) * 3", "int 9"},
		{"7 / 2", "int 3"},
		{"-7 / 2", "int -3"},
		{"-7 % 3", "int -1"},
		{"7 % -3", "int 1"},
		{"5 / -1", "int -5"},
		{"-9223372036854775808 % -1", "int 0"},
		{"7.0 / 2", "double 3.5"},
		{"1 / 2.0", "double 0.5"},
		{":x * :d", "double 25"},
		{":t + 1", "int 8"},
		{":yes", "boolean true"},
		{"int(2.5)", "int 2"},
		{"int(-3.5)", "int -4"},
		{"double(:x) / 4", "double 2.5"},
		{"5 # 3", "int 6"},
		{"~0", "int -1"},
		{"1 << 62", "int 4611686018427387904"},
		{"-16 >> 2", "int -4"},
		{"6 & 3 | 8", "int 10"},
		{"1 < 2", "boolean true"},
		{"2 >= 2.0", "boolean true"},
		{"3 != 3", "boolean false"},
		{"3 <> 4", "boolean true"},
		{"not 1 = 2", "boolean true"},
		{"true and false or true", "boolean true"},
		{"false and 1/0 = 1", "boolean false"},
		{"true or 1/0 = 1", "boolean true"},
		{":n + 1", "null"},
		{":n is null", "boolean true"},
		{":x isnull", "boolean false"},
		{":x notnull", "boolean true"},
		{"2 > 1 is true", "boolean true"},
		{"null and true", "null"},
		{"case when :x > 50 then 1 when :x > 5 then 2 else 3 end", "int 2"},
		{"case when false then 1 end", "null"},
		{"abs(-3)", "int 3"},
		{"abs(-3.5)", "double 3.5"},
		{"least(3, 1, 2)", "int 1"},
		{"greatest(3, 1.5)", "double 3"},
		{"mod(10, 3)", "int 1"},
		{"pi()", "double 3.14159265358979"},
		{"sqrt(16)", "double 4"},
		{"pow(2, 0.5) * power(2, 0.5)", "double 2"},
		{"exp(0)", "double 1"},
		{"ln(1)", "double 0"},
		{"debug(42)", "int 42"},
		{"random(7, 7)", "int 7"},
		{"permute(0, 1)", "int 0"},
		{"9223372036854775807", "int 9223372036854775807"},
		{"-9223372036854775808", "int -9223372036854775808"},
		{"1e3", "double 1000"},
		{".25", "double 0.25"},
		{"RANDOM(1, 1) + ABS(-1)", "int 2"},
	} {
		v, err := eval(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if got := debugText(v); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.expr, got, tc.want)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"9223372036854775807 + 1", "bigint add out of range"},
		{"-9223372036854775808 - 1", "bigint sub out of range"},
		{"4611686018427387904 * 2", "bigint mul out of range"},
		{"-9223372036854775808 / -1", "bigint div out of range"},
		{"1 / 0", "division by zero"},
		{"1 % 0", "division by zero"},
		{"int(1e300)", "double to int overflow"},
		{"true + 1", "cannot coerce boolean to int"},
		{"not 1", "cannot coerce int to boolean"},
		{":s + 1", `variable "s": malformed value "abc"`},
		{":nosuch", `undefined variable "nosuch"`},
		{"random(5, 1)", "empty range given to random"},
		{"random(-9223372036854775808, 9223372036854775807)", "random range is too large"},
		{"random_gaussian(1, 10, 1.5)", "gaussian parameter must be at least 2"},
		{"random_zipfian(1, 10, 1)", "zipfian parameter must be in range"},
		{"random_exponential(1, 10, 0)", "exponential parameter must be greater than zero"},
		{"permute(1, 0)", "permute size parameter must be greater than zero"},
		{"1 << 64", "out of range"},
		// Parse errors.
		{"1 +", "expression ends too early"},
		{"(1 + 2", "missing )"},
		{"1 = 2 = 3", `unexpected "="`},
		{"nosuch(1)", `unknown function "nosuch"`},
		{"random(1)", "random takes 2 arguments, not 1"},
		{"pi(1)", "pi takes 0 arguments, not 1"},
		{"least()", "least takes at least 1 arguments, not 0"},
		{"9223372036854775808", "bigint constant overflow"},
		{"99999999999999999999", "bigint constant overflow"},
		{"1 $ 2", "unexpected character '$'"},
		{"case when true then 1", "END expected"},
		{"case 1 end", "CASE needs at least one WHEN"},
		{"1 is 2", "IS must be followed by"},
		{"'a'", "unexpected character"},
		{"12abc", "after number"},
	} {
		_, err := eval(tc.expr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.expr, err, tc.want)
		}
	}
}

func TestTyped(t *testing.T) {
	for in, want := range map[string]string{"null": "null", "NULL": "null", "t": "boolean true", "ye": "boolean true",
		"off": "boolean false", "n": "boolean false", "42": "int 42", "-3": "int -3", "2.5": "double 2.5", "1e2": "double 100"} {
		v, err := value{k: kText, s: in}.typed()
		if err != nil || debugText(v) != want {
			t.Errorf("%q: %s %v, want %s", in, debugText(v), err, want)
		}
	}
}

func TestParseInt(t *testing.T) {
	for in, want := range map[string]bool{"0": true, "-12": true, "9223372036854775807": true, "-9223372036854775808": true,
		"9223372036854775808": false, "007": false, "+1": false, "": false, "1.5": false, "-": false, "18446744073709551616": false} {
		v, ok := parseInt([]byte(in))
		if ok != want || ok && value.String(intVal(v)) != in {
			t.Errorf("%q: %d %v, want ok=%v", in, v, ok, want)
		}
	}
}

// TestNoAllocs: evaluating a transaction's \set expressions (pgbench's tpcb-like: random
// over :scale) and binding its variables allocate nothing.
func TestNoAllocs(t *testing.T) {
	_, text, _ := builtin("tpcb-like")
	prog := compileTexts(t, text)
	var retries atomic.Int64
	c := newClient(prog, 0, clientSeeds{fn: 1, scale: 10}, &retries)
	cmds := prog.Scripts[0].cmds
	allocs := testing.AllocsPerRun(1000, func() {
		for i := range cmds {
			cmd := &cmds[i]
			switch cmd.kind {
			case cSet:
				v, err := c.e.eval(cmd.expr)
				if err != nil {
					t.Fatal(err)
				}
				c.vars[cmd.slot] = v
			case cSQL:
				if err := c.bind(cmd); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per transaction", allocs)
	}
}
