package script

// The expression language of \set and \if is pgbench's (exprparse.y, exprscan.l): integer
// and double arithmetic with pgbench's overflow and coercion rules, comparisons, boolean
// and bitwise operators, CASE, and pgbench's functions with its random generators.
//
// Written here rather than taken from a library: expr-lang/expr, Knetic/govaluate and
// google/cel-go were considered. None has pgbench's semantics — int64 arithmetic that
// fails on overflow instead of wrapping or widening, integer division truncating with
// pgbench's -1 rules, doubles only where an operand is a double, rint() when a double
// becomes an int, SQL-like NULL propagation, `#` as XOR, `:name` variables, CASE … END —
// nor its functions (random_zipfian, permute, hash_murmur2 with pgbench's PRNG), and
// each would box values in interfaces on every evaluation, where this evaluator walks a
// tree of unboxed values and allocates nothing per transaction.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

type op uint8

const (
	opConst op = iota
	opVar
	opAdd
	opSub
	opMul
	opDiv
	opMod
	opEq
	opNe
	opLe
	opLt
	opBitAnd
	opBitOr
	opBitXor
	opLShift
	opRShift
	opNot
	opAnd
	opOr
	opCase
	opIs
	opAbs
	opDebug
	opDouble
	opSqrt
	opLn
	opExp
	opInt
	opLeast
	opGreatest
	opPi
	opPow
	opRandom
	opRandomExp
	opRandomGauss
	opRandomZipf
	opHashMurmur2
	opHashFNV1a
	opPermute
)

// node is one expression node: a constant, a variable (slot) or a function of args.
type node struct {
	op   op
	val  value
	slot int
	args []*node
}

// function is one of pgbench's functions: its op and how many arguments it takes
// (max -1: any number); hash and permute without their seed get :default_seed.
type function struct {
	op       op
	min, max int
	seeded   bool
}

// lookupFunction is the function of a name.
func lookupFunction(name string) (function, bool) {
	switch name {
	case "abs":
		return function{op: opAbs, min: 1, max: 1}, true
	case "debug":
		return function{op: opDebug, min: 1, max: 1}, true
	case "double":
		return function{op: opDouble, min: 1, max: 1}, true
	case "exp":
		return function{op: opExp, min: 1, max: 1}, true
	case "greatest":
		return function{op: opGreatest, min: 1, max: -1}, true
	case "hash":
		return function{op: opHashMurmur2, min: 1, max: 2, seeded: true}, true
	case "hash_fnv1a":
		return function{op: opHashFNV1a, min: 1, max: 2, seeded: true}, true
	case "hash_murmur2":
		return function{op: opHashMurmur2, min: 1, max: 2, seeded: true}, true
	case "int":
		return function{op: opInt, min: 1, max: 1}, true
	case "least":
		return function{op: opLeast, min: 1, max: -1}, true
	case "ln":
		return function{op: opLn, min: 1, max: 1}, true
	case "mod":
		return function{op: opMod, min: 2, max: 2}, true
	case "permute":
		return function{op: opPermute, min: 2, max: 3, seeded: true}, true
	case "pi":
		return function{op: opPi, min: 0, max: 0}, true
	case "pow":
		return function{op: opPow, min: 2, max: 2}, true
	case "power":
		return function{op: opPow, min: 2, max: 2}, true
	case "random":
		return function{op: opRandom, min: 2, max: 2}, true
	case "random_exponential":
		return function{op: opRandomExp, min: 3, max: 3}, true
	case "random_gaussian":
		return function{op: opRandomGauss, min: 3, max: 3}, true
	case "random_zipfian":
		return function{op: opRandomZipf, min: 3, max: 3}, true
	case "sqrt":
		return function{op: opSqrt, min: 1, max: 1}, true
	}
	return function{}, false
}

// maxArgs is pgbench's MAX_FARGS.
const maxArgs = 16

// varTable interns variable names into slots, shared by every script of a run.
type varTable struct {
	slots map[string]int
	names []string
}

func newVarTable() *varTable { return &varTable{slots: map[string]int{}} }

func (t *varTable) slot(name string) int {
	if s, ok := t.slots[name]; ok {
		return s
	}
	t.slots[name] = len(t.names)
	t.names = append(t.names, name)
	return len(t.names) - 1
}

// token kinds of the expression lexer.
type tokKind uint8

const (
	tEOF tokKind = iota
	tInt
	tDouble
	tVar
	tIdent
	tOp // +, -, <=, (, ',' …
)

type token struct {
	k    tokKind
	text string
	i    int64
	d    float64
}

type exprParser struct {
	src  string
	pos  int
	tok  token
	vars *varTable
	used []string // variables read, for the check of undefined variables
}

// parseExpr parses a whole expression.
func parseExpr(src string, vars *varTable) (*node, []string, error) {
	p := &exprParser{src: src, vars: vars}
	if err := p.next(); err != nil {
		return nil, nil, err
	}
	if p.tok.k == tEOF {
		return nil, nil, fmt.Errorf("missing expression")
	}
	n, err := p.or()
	if err != nil {
		return nil, nil, err
	}
	if p.tok.k != tEOF {
		return nil, nil, fmt.Errorf("unexpected %q at column %d of expression %q", p.tok.text, p.pos-len(p.tok.text)+1, src)
	}
	return n, p.used, nil
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func (p *exprParser) next() error {
	s := p.src
	for p.pos < len(s) && (s[p.pos] == ' ' || s[p.pos] == '\t' || s[p.pos] == '\r' || s[p.pos] == '\n') {
		p.pos++
	}
	if p.pos >= len(s) {
		p.tok = token{k: tEOF, text: "end of expression"}
		return nil
	}
	start := p.pos
	c := s[p.pos]
	switch {
	case c >= '0' && c <= '9' || c == '.' && p.pos+1 < len(s) && s[p.pos+1] >= '0' && s[p.pos+1] <= '9':
		isDouble := false
		for p.pos < len(s) && s[p.pos] >= '0' && s[p.pos] <= '9' {
			p.pos++
		}
		if p.pos < len(s) && s[p.pos] == '.' {
			isDouble = true
			p.pos++
			for p.pos < len(s) && s[p.pos] >= '0' && s[p.pos] <= '9' {
				p.pos++
			}
		}
		if p.pos < len(s) && (s[p.pos] == 'e' || s[p.pos] == 'E') {
			j := p.pos + 1
			if j < len(s) && (s[j] == '+' || s[j] == '-') {
				j++
			}
			if j < len(s) && s[j] >= '0' && s[j] <= '9' {
				isDouble = true
				for j < len(s) && s[j] >= '0' && s[j] <= '9' {
					j++
				}
				p.pos = j
			}
		}
		text := s[start:p.pos]
		if p.pos < len(s) && isIdentStart(s[p.pos]) {
			return fmt.Errorf("unexpected character %q after number %s", s[p.pos], text)
		}
		if isDouble {
			d, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return fmt.Errorf("invalid double constant %s", text)
			}
			p.tok = token{k: tDouble, text: text, d: d}
			return nil
		}
		i, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			if text == "9223372036854775808" {
				// Only valid negated: -9223372036854775808 (the parser checks).
				p.tok = token{k: tInt, text: text, i: math.MinInt64}
				return nil
			}
			return fmt.Errorf("bigint constant overflow: %s", text)
		}
		p.tok = token{k: tInt, text: text, i: i}
		return nil
	case c == ':':
		p.pos++
		for p.pos < len(s) && isIdentChar(s[p.pos]) {
			p.pos++
		}
		name := s[start+1 : p.pos]
		if name == "" || !isIdentStart(name[0]) {
			return fmt.Errorf("invalid variable name after ':' at column %d", start+1)
		}
		p.tok = token{k: tVar, text: name}
		return nil
	case isIdentStart(c):
		for p.pos < len(s) && isIdentChar(s[p.pos]) {
			p.pos++
		}
		p.tok = token{k: tIdent, text: strings.ToLower(s[start:p.pos])}
		return nil
	}
	for _, o := range []string{"<=", ">=", "<>", "!=", "<<", ">>", "+", "-", "*", "/", "%", "<", ">", "=", "(", ")", ",", "&", "|", "#", "~"} {
		if strings.HasPrefix(s[p.pos:], o) {
			p.pos += len(o)
			p.tok = token{k: tOp, text: o}
			return nil
		}
	}
	return fmt.Errorf("unexpected character %q at column %d", c, p.pos+1)
}

func (p *exprParser) isOp(o string) bool   { return p.tok.k == tOp && p.tok.text == o }
func (p *exprParser) isWord(w string) bool { return p.tok.k == tIdent && p.tok.text == w }

func fn(o op, args ...*node) *node { return &node{op: o, args: args} }

func (p *exprParser) or() (*node, error) {
	l, err := p.and()
	for err == nil && p.isWord("or") {
		var r *node
		if err = p.next(); err != nil {
			return nil, err
		}
		if r, err = p.and(); err == nil {
			l = fn(opOr, l, r)
		}
	}
	return l, err
}

func (p *exprParser) and() (*node, error) {
	l, err := p.not()
	for err == nil && p.isWord("and") {
		var r *node
		if err = p.next(); err != nil {
			return nil, err
		}
		if r, err = p.not(); err == nil {
			l = fn(opAnd, l, r)
		}
	}
	return l, err
}

func (p *exprParser) not() (*node, error) {
	if p.isWord("not") {
		if err := p.next(); err != nil {
			return nil, err
		}
		e, err := p.not()
		if err != nil {
			return nil, err
		}
		return fn(opNot, e), nil
	}
	return p.is()
}

func constNode(v value) *node { return &node{op: opConst, val: v} }

// is: expr IS [NOT] NULL|TRUE|FALSE, expr ISNULL, expr NOTNULL (non-associative).
func (p *exprParser) is() (*node, error) {
	e, err := p.cmp()
	if err != nil {
		return nil, err
	}
	switch {
	case p.isWord("isnull"):
		return fn(opIs, e, constNode(value{k: kNull})), p.next()
	case p.isWord("notnull"):
		return fn(opNot, fn(opIs, e, constNode(value{k: kNull}))), p.next()
	case p.isWord("is"):
		if err := p.next(); err != nil {
			return nil, err
		}
		neg := false
		if p.isWord("not") {
			neg = true
			if err := p.next(); err != nil {
				return nil, err
			}
		}
		var c value
		switch {
		case p.isWord("null"):
			c = value{k: kNull}
		case p.isWord("true"):
			c = boolVal(true)
		case p.isWord("false"):
			c = boolVal(false)
		default:
			return nil, fmt.Errorf("IS must be followed by [NOT] NULL, TRUE or FALSE, not %q", p.tok.text)
		}
		n := fn(opIs, e, constNode(c))
		if neg {
			n = fn(opNot, n)
		}
		return n, p.next()
	}
	return e, nil
}

func (p *exprParser) cmp() (*node, error) {
	l, err := p.bit()
	if err != nil || p.tok.k != tOp {
		return l, err
	}
	o := p.tok.text
	switch o {
	case "=", "<>", "!=", "<", "<=", ">", ">=":
	default:
		return l, nil
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	r, err := p.bit()
	if err != nil {
		return nil, err
	}
	switch o {
	case "=":
		return fn(opEq, l, r), nil
	case "<>", "!=":
		return fn(opNe, l, r), nil
	case "<":
		return fn(opLt, l, r), nil
	case "<=":
		return fn(opLe, l, r), nil
	case ">":
		return fn(opLt, r, l), nil
	}
	return fn(opLe, r, l), nil // >=
}

func (p *exprParser) bit() (*node, error) {
	l, err := p.add()
	for err == nil && p.tok.k == tOp {
		var o op
		switch p.tok.text {
		case "&":
			o = opBitAnd
		case "|":
			o = opBitOr
		case "#":
			o = opBitXor
		case "<<":
			o = opLShift
		case ">>":
			o = opRShift
		default:
			return l, nil
		}
		var r *node
		if err = p.next(); err != nil {
			return nil, err
		}
		if r, err = p.add(); err == nil {
			l = fn(o, l, r)
		}
	}
	return l, err
}

func (p *exprParser) add() (*node, error) {
	l, err := p.mul()
	for err == nil && (p.isOp("+") || p.isOp("-")) {
		o := opAdd
		if p.tok.text == "-" {
			o = opSub
		}
		var r *node
		if err = p.next(); err != nil {
			return nil, err
		}
		if r, err = p.mul(); err == nil {
			l = fn(o, l, r)
		}
	}
	return l, err
}

func (p *exprParser) mul() (*node, error) {
	l, err := p.unary()
	for err == nil && (p.isOp("*") || p.isOp("/") || p.isOp("%")) {
		o := map[string]op{"*": opMul, "/": opDiv, "%": opMod}[p.tok.text]
		var r *node
		if err = p.next(); err != nil {
			return nil, err
		}
		if r, err = p.unary(); err == nil {
			l = fn(o, l, r)
		}
	}
	return l, err
}

func (p *exprParser) unary() (*node, error) {
	switch {
	case p.isOp("+"):
		if err := p.next(); err != nil {
			return nil, err
		}
		return p.unary()
	case p.isOp("-"):
		if err := p.next(); err != nil {
			return nil, err
		}
		if p.tok.k == tInt && p.tok.i == math.MinInt64 {
			if err := p.next(); err != nil {
				return nil, err
			}
			return constNode(intVal(math.MinInt64)), nil
		}
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		return fn(opSub, constNode(intVal(0)), e), nil
	case p.isOp("~"):
		if err := p.next(); err != nil {
			return nil, err
		}
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		return fn(opBitXor, constNode(intVal(-1)), e), nil
	}
	return p.primary()
}

func (p *exprParser) primary() (*node, error) {
	t := p.tok
	switch t.k {
	case tInt:
		if t.i == math.MinInt64 {
			return nil, fmt.Errorf("bigint constant overflow: %s", t.text)
		}
		return constNode(intVal(t.i)), p.next()
	case tDouble:
		return constNode(doubleVal(t.d)), p.next()
	case tVar:
		p.used = append(p.used, t.text)
		return &node{op: opVar, slot: p.vars.slot(t.text)}, p.next()
	case tOp:
		if t.text == "(" {
			if err := p.next(); err != nil {
				return nil, err
			}
			e, err := p.or()
			if err != nil {
				return nil, err
			}
			if !p.isOp(")") {
				return nil, fmt.Errorf("missing ) before %q", p.tok.text)
			}
			return e, p.next()
		}
	case tIdent:
		switch t.text {
		case "null":
			return constNode(value{k: kNull}), p.next()
		case "true":
			return constNode(boolVal(true)), p.next()
		case "false":
			return constNode(boolVal(false)), p.next()
		case "case":
			return p.caseExpr()
		}
		return p.call(t.text)
	case tEOF:
		return nil, fmt.Errorf("expression ends too early")
	}
	return nil, fmt.Errorf("unexpected %q", t.text)
}

// caseExpr: CASE WHEN c THEN e [WHEN c THEN e]… [ELSE e] END, as a chain of opCase
// nodes (cond, then, else); no ELSE is ELSE NULL.
func (p *exprParser) caseExpr() (*node, error) {
	if err := p.next(); err != nil {
		return nil, err
	}
	var whens [][2]*node
	for p.isWord("when") {
		if err := p.next(); err != nil {
			return nil, err
		}
		c, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.isWord("then") {
			return nil, fmt.Errorf("CASE: THEN expected, not %q", p.tok.text)
		}
		if err := p.next(); err != nil {
			return nil, err
		}
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		whens = append(whens, [2]*node{c, e})
	}
	if len(whens) == 0 {
		return nil, fmt.Errorf("CASE needs at least one WHEN")
	}
	els := constNode(value{k: kNull})
	if p.isWord("else") {
		if err := p.next(); err != nil {
			return nil, err
		}
		var err error
		if els, err = p.or(); err != nil {
			return nil, err
		}
	}
	if !p.isWord("end") {
		return nil, fmt.Errorf("CASE: END expected, not %q", p.tok.text)
	}
	for i := len(whens) - 1; i >= 0; i-- {
		els = fn(opCase, whens[i][0], whens[i][1], els)
	}
	return els, p.next()
}

func (p *exprParser) call(name string) (*node, error) {
	f, ok := lookupFunction(name)
	if !ok {
		return nil, fmt.Errorf("unknown function %q", name)
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	if !p.isOp("(") {
		return nil, fmt.Errorf("%s: ( expected after the function's name", name)
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	var args []*node
	if !p.isOp(")") {
		for {
			a, err := p.or()
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			if p.isOp(")") {
				break
			}
			if !p.isOp(",") {
				return nil, fmt.Errorf("%s: , or ) expected, not %q", name, p.tok.text)
			}
			if err := p.next(); err != nil {
				return nil, err
			}
		}
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	if len(args) < f.min || f.max >= 0 && len(args) > f.max || len(args) > maxArgs {
		want := strconv.Itoa(f.min)
		switch {
		case f.max < 0:
			want = "at least " + want
		case f.max != f.min:
			want += " or " + strconv.Itoa(f.max)
		}
		return nil, fmt.Errorf("%s takes %s arguments, not %d", name, want, len(args))
	}
	if f.seeded && len(args) < f.max {
		p.used = append(p.used, "default_seed")
		args = append(args, &node{op: opVar, slot: p.vars.slot("default_seed")})
	}
	return &node{op: f.op, args: args}, nil
}

// env is what an expression is evaluated in: one client's variables and random stream.
type env struct {
	vars  []value
	names []string // slot → name, for errors
	rng   *prng
	// debug, when set, receives each value debug() returns (pgbench prints it).
	debug func(value)
}

func (e *env) eval(n *node) (value, error) {
	switch n.op {
	case opConst:
		return n.val, nil
	case opVar:
		v := e.vars[n.slot]
		if v.k == kNone {
			return v, fmt.Errorf("undefined variable %q", e.names[n.slot])
		}
		if v.k == kText {
			tv, err := v.typed()
			if err != nil {
				return v, fmt.Errorf("variable %q: %w", e.names[n.slot], err)
			}
			return tv, nil
		}
		return v, nil
	case opAnd, opOr, opCase:
		return e.lazy(n)
	}
	// The arguments on the stack: most functions and operators take at most three, and
	// zeroing pgbench's MAX_FARGS values on every call would cost more than the call.
	if len(n.args) <= 3 {
		var argv [3]value
		return e.evalArgs(n, argv[:len(n.args)])
	}
	var argv [maxArgs]value
	return e.evalArgs(n, argv[:len(n.args)])
}

// evalArgs evaluates n's arguments into argv (len(n.args) long) and applies n's function
// or operator to them; NULL in, NULL out, but for IS and debug().
func (e *env) evalArgs(n *node, argv []value) (value, error) {
	hasNull := false
	for i, a := range n.args {
		v, err := e.eval(a)
		if err != nil {
			return v, err
		}
		argv[i] = v
		hasNull = hasNull || v.k == kNull
	}
	if hasNull && n.op != opIs && n.op != opDebug {
		return value{k: kNull}, nil
	}
	return e.apply(n.op, argv)
}

func (e *env) lazy(n *node) (value, error) {
	a, err := e.eval(n.args[0])
	if err != nil {
		return a, err
	}
	if n.op == opCase {
		if a.truth() {
			return e.eval(n.args[1])
		}
		return e.eval(n.args[2])
	}
	if a.k == kNull {
		return a, nil
	}
	b1, err := a.toBool()
	if err != nil {
		return a, err
	}
	if n.op == opAnd && !b1 || n.op == opOr && b1 {
		return boolVal(b1), nil
	}
	b, err := e.eval(n.args[1])
	if err != nil || b.k == kNull {
		return b, err
	}
	b2, err := b.toBool()
	return boolVal(b2), err
}

func (e *env) apply(o op, a []value) (value, error) {
	switch o {
	case opAdd, opSub, opMul, opDiv, opMod, opEq, opNe, opLe, opLt:
		if (a[0].k == kDouble || a[1].k == kDouble) && o != opMod {
			l, err := a[0].toDouble()
			if err != nil {
				return value{}, err
			}
			r, err := a[1].toDouble()
			if err != nil {
				return value{}, err
			}
			switch o {
			case opAdd:
				return doubleVal(l + r), nil
			case opSub:
				return doubleVal(l - r), nil
			case opMul:
				return doubleVal(l * r), nil
			case opDiv:
				return doubleVal(l / r), nil
			case opEq:
				return boolVal(l == r), nil
			case opNe:
				return boolVal(l != r), nil
			case opLe:
				return boolVal(l <= r), nil
			}
			return boolVal(l < r), nil
		}
		l, err := a[0].toInt()
		if err != nil {
			return value{}, err
		}
		r, err := a[1].toInt()
		if err != nil {
			return value{}, err
		}
		switch o {
		case opAdd:
			s := l + r
			if (s > l) != (r > 0) {
				return value{}, fmt.Errorf("bigint add out of range")
			}
			return intVal(s), nil
		case opSub:
			s := l - r
			if (s < l) != (r > 0) {
				return value{}, fmt.Errorf("bigint sub out of range")
			}
			return intVal(s), nil
		case opMul:
			if l != 0 && r != 0 {
				p := l * r
				if p/r != l || l == -1 && r == math.MinInt64 || r == -1 && l == math.MinInt64 {
					return value{}, fmt.Errorf("bigint mul out of range")
				}
				return intVal(p), nil
			}
			return intVal(0), nil
		case opEq:
			return boolVal(l == r), nil
		case opNe:
			return boolVal(l != r), nil
		case opLe:
			return boolVal(l <= r), nil
		case opLt:
			return boolVal(l < r), nil
		}
		// opDiv, opMod
		if r == 0 {
			return value{}, fmt.Errorf("division by zero")
		}
		if r == -1 {
			if o == opMod {
				return intVal(0), nil
			}
			if l == math.MinInt64 {
				return value{}, fmt.Errorf("bigint div out of range")
			}
			return intVal(-l), nil
		}
		if o == opDiv {
			return intVal(l / r), nil
		}
		return intVal(l % r), nil
	case opBitAnd, opBitOr, opBitXor, opLShift, opRShift:
		l, err := a[0].toInt()
		if err != nil {
			return value{}, err
		}
		r, err := a[1].toInt()
		if err != nil {
			return value{}, err
		}
		switch o {
		case opBitAnd:
			return intVal(l & r), nil
		case opBitOr:
			return intVal(l | r), nil
		case opBitXor:
			return intVal(l ^ r), nil
		}
		if r < 0 || r > 63 {
			return value{}, fmt.Errorf("shift by %d is out of range 0..63", r)
		}
		if o == opLShift {
			return intVal(l << r), nil
		}
		return intVal(l >> r), nil
	case opNot:
		b, err := a[0].toBool()
		return boolVal(!b), err
	case opIs:
		return boolVal(a[0].k == a[1].k && a[0].i == a[1].i), nil
	case opPi:
		return doubleVal(math.Pi), nil
	case opAbs:
		switch a[0].k {
		case kInt:
			if a[0].i < 0 {
				return intVal(-a[0].i), nil
			}
			return a[0], nil
		case kDouble:
			return doubleVal(math.Abs(a[0].d)), nil
		}
		return value{}, fmt.Errorf("abs of %s", a[0].typeName())
	case opDebug:
		if e.debug != nil {
			e.debug(a[0])
		}
		return a[0], nil
	case opDouble, opSqrt, opLn, opExp:
		d, err := a[0].toDouble()
		if err != nil {
			return value{}, err
		}
		switch o {
		case opSqrt:
			d = math.Sqrt(d)
		case opLn:
			d = math.Log(d)
		case opExp:
			d = math.Exp(d)
		}
		return doubleVal(d), nil
	case opInt:
		i, err := a[0].toInt()
		return intVal(i), err
	case opLeast, opGreatest:
		return extremum(o, a)
	case opPow:
		l, err := a[0].toDouble()
		if err != nil {
			return value{}, err
		}
		r, err := a[1].toDouble()
		if err != nil {
			return value{}, err
		}
		return doubleVal(math.Pow(l, r)), nil
	case opRandom, opRandomExp, opRandomGauss, opRandomZipf:
		return e.random(o, a)
	case opHashMurmur2, opHashFNV1a:
		v, err := a[0].toInt()
		if err != nil {
			return value{}, err
		}
		seed, err := a[1].toInt()
		if err != nil {
			return value{}, err
		}
		if o == opHashMurmur2 {
			return intVal(hashMurmur2(v, uint64(seed))), nil
		}
		return intVal(hashFNV1a(v, uint64(seed))), nil
	case opPermute:
		var x [3]int64
		for i := range x {
			v, err := a[i].toInt()
			if err != nil {
				return value{}, err
			}
			x[i] = v
		}
		if x[1] <= 0 {
			return value{}, fmt.Errorf("permute size parameter must be greater than zero")
		}
		return intVal(permute(x[0], x[1], x[2])), nil
	}
	return value{}, fmt.Errorf("internal error: unknown operator %d", o)
}

func extremum(o op, a []value) (value, error) {
	double := false
	for _, v := range a {
		double = double || v.k == kDouble
	}
	if double {
		m, err := a[0].toDouble()
		for _, v := range a[1:] {
			if err != nil {
				break
			}
			var d float64
			if d, err = v.toDouble(); o == opLeast {
				m = min(m, d)
			} else {
				m = max(m, d)
			}
		}
		return doubleVal(m), err
	}
	m, err := a[0].toInt()
	for _, v := range a[1:] {
		if err != nil {
			break
		}
		var i int64
		if i, err = v.toInt(); o == opLeast {
			m = min(m, i)
		} else {
			m = max(m, i)
		}
	}
	return intVal(m), err
}

func (e *env) random(o op, a []value) (value, error) {
	lo, err := a[0].toInt()
	if err != nil {
		return value{}, err
	}
	hi, err := a[1].toInt()
	if err != nil {
		return value{}, err
	}
	if lo > hi {
		return value{}, fmt.Errorf("empty range given to random")
	}
	if d := hi - lo; d < 0 || d+1 < 0 {
		return value{}, fmt.Errorf("random range is too large")
	}
	if o == opRandom {
		return intVal(randInt(e.rng, lo, hi)), nil
	}
	param, err := a[2].toDouble()
	if err != nil {
		return value{}, err
	}
	switch o {
	case opRandomGauss:
		if param < minGaussParam {
			return value{}, fmt.Errorf("gaussian parameter must be at least %f (not %f)", minGaussParam, param)
		}
		return intVal(randGaussian(e.rng, lo, hi, param)), nil
	case opRandomZipf:
		if param < minZipfParam || param > maxZipfParam {
			return value{}, fmt.Errorf("zipfian parameter must be in range [%.3f, %.0f] (not %f)", minZipfParam, maxZipfParam, param)
		}
		return intVal(randZipfian(e.rng, lo, hi, param)), nil
	}
	if param <= 0 {
		return value{}, fmt.Errorf("exponential parameter must be greater than zero (not %f)", param)
	}
	return intVal(randExponential(e.rng, lo, hi, param)), nil
}
