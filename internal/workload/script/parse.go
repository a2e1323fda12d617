package script

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// cmdKind is what one command of a script does.
type cmdKind uint8

const (
	cSQL cmdKind = iota
	cSet
	cSleep
	cIf
	cElif
	cElse
	cEndif
	cPipeStart // \startpipeline
	cPipeSync  // \syncpipeline
	cPipeEnd   // \endpipeline
)

// sqlKind says how a SQL command is sent.
type sqlKind uint8

const (
	sqlExec  sqlKind = iota // rows affected
	sqlQuery                // rows read
	sqlGset                 // one row read into variables
	sqlBegin                // starts a transaction (BEGIN, START TRANSACTION)
	sqlEnd                  // ends one (COMMIT, END, ROLLBACK, ABORT)
)

// command is one command of a parsed script.
type command struct {
	kind cmdKind
	line int // 1-based, where the command starts
	// src is the command as the script has it (a meta-command's line), for reports.
	src string

	// SQL: the text split at its variables (parts[i] precedes variable i), the
	// variables' slots, how it is sent, and \gset's prefix.
	parts  []string
	params []int
	sql    sqlKind
	prefix string

	// \set: the variable and its expression; \if, \elif: the condition.
	slot int
	expr *node

	// \sleep: a constant or a variable (slot ≥ 0) times unit.
	sleepN    int64
	sleepSlot int
	unit      time.Duration

	// \if, \elif: the command of the next branch (\elif, \else or \endif); \if, \elif,
	// \else: the \endif.
	next, end int
}

// Script is one parsed script file (or built-in script) and its weight.
type Script struct {
	Name   string // the file as given, or "builtin: tpcb-like"
	Weight int
	cmds   []command
	// uses are the variables the script reads, with the line reading them.
	uses []varUse
	// sets are the variables it assigns with \set; gsets the prefixes of its \gset.
	sets  []string
	gsets []string
	// pipeline is the line of the script's first \startpipeline (0: none).
	pipeline int
}

type varUse struct {
	name string
	line int
}

// parseError is a problem of a script: its file and line, and what is wrong.
func parseError(name string, line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
}

// Parse parses a script in pgbench's language: SQL commands ending with ';' (several
// lines each, or \gset in place of the ';'), and the meta-commands \set, \sleep, \if,
// \elif, \else, \endif, \gset, \startpipeline, \syncpipeline and \endpipeline.
// Variables are interned in vars.
func Parse(name, text string, vars *varTable) (*Script, error) {
	s := &Script{Name: name, Weight: 1}
	sc := &scanner{src: text, line: 1, name: name}
	var stack []int // open \if and their branches: index of the last branch command
	pipe := 0       // the line of the open \startpipeline (0: none)
	for {
		sc.skipBlank()
		if sc.eof() {
			break
		}
		if sc.peek() == '\\' {
			cmd, err := sc.meta(vars, s)
			if err != nil {
				return nil, err
			}
			i := len(s.cmds)
			if err := checkPipeline(name, &pipe, len(stack) > 0, &cmd); err != nil {
				return nil, err
			}
			if cmd.kind == cPipeStart && s.pipeline == 0 {
				s.pipeline = cmd.line
			}
			switch cmd.kind {
			case cIf:
				stack = append(stack, i)
			case cElif, cElse:
				if len(stack) == 0 {
					return nil, parseError(name, cmd.line, "\\%s without a matching \\if", kindName(cmd.kind))
				}
				prev := stack[len(stack)-1]
				if s.cmds[prev].kind == cElse {
					return nil, parseError(name, cmd.line, "\\%s after \\else (line %d)", kindName(cmd.kind), s.cmds[prev].line)
				}
				s.cmds[prev].next = i
				stack[len(stack)-1] = i
			case cEndif:
				if len(stack) == 0 {
					return nil, parseError(name, cmd.line, "\\endif without a matching \\if")
				}
				last := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if s.cmds[last].kind != cElse {
					s.cmds[last].next = i
				}
				// Every branch of this \if ends here.
				for j := last; ; {
					s.cmds[j].end = i
					if s.cmds[j].kind == cIf {
						break
					}
					j = findPrev(s.cmds, j)
				}
			}
			s.cmds = append(s.cmds, cmd)
			continue
		}
		cmd, err := sc.sql(vars, s)
		if err != nil {
			return nil, err
		}
		if pipe > 0 && cmd.sql == sqlGset {
			return nil, parseError(name, cmd.line, "\\gset inside a pipeline (\\startpipeline at line %d): its row comes back only at \\endpipeline; end the pipeline first", pipe)
		}
		s.cmds = append(s.cmds, cmd)
	}
	if pipe > 0 {
		return nil, parseError(name, pipe, "\\startpipeline without a matching \\endpipeline")
	}
	if len(stack) > 0 {
		return nil, parseError(name, s.cmds[outerIf(s.cmds, stack[len(stack)-1])].line, "\\if without a matching \\endif")
	}
	if len(s.cmds) == 0 {
		return nil, parseError(name, 1, "the script has no commands")
	}
	return s, nil
}

// checkPipeline checks meta-command cmd against the pipeline open at line *pipe (0:
// none) and opens or closes it. A pipeline holds SQL commands and \set only, and opens
// outside \if blocks (inIf), so that every execution of the script reaches its end.
func checkPipeline(name string, pipe *int, inIf bool, cmd *command) error {
	switch cmd.kind {
	case cPipeStart:
		if *pipe > 0 {
			return parseError(name, cmd.line, "\\startpipeline inside a pipeline (\\startpipeline at line %d)", *pipe)
		}
		if inIf {
			return parseError(name, cmd.line, "\\startpipeline inside \\if: dbperf runs a pipeline outside \\if blocks")
		}
		*pipe = cmd.line
	case cPipeSync, cPipeEnd:
		word := map[cmdKind]string{cPipeSync: "syncpipeline", cPipeEnd: "endpipeline"}[cmd.kind]
		if *pipe == 0 {
			return parseError(name, cmd.line, "\\%s without a \\startpipeline", word)
		}
		if cmd.kind == cPipeEnd {
			*pipe = 0
		}
	case cSet:
	default:
		if *pipe > 0 {
			return parseError(name, cmd.line, "\\%s inside a pipeline (\\startpipeline at line %d): a pipeline holds SQL commands and \\set only", kindName(cmd.kind), *pipe)
		}
	}
	return nil
}

// findPrev is the branch command before branch j of the same \if (j: an \elif or
// \else): the command whose next is j.
func findPrev(cmds []command, j int) int {
	for k := j - 1; k >= 0; k-- {
		if (cmds[k].kind == cIf || cmds[k].kind == cElif) && cmds[k].next == j {
			return k
		}
	}
	return 0
}

// outerIf is the \if of branch j.
func outerIf(cmds []command, j int) int {
	for cmds[j].kind != cIf {
		j = findPrev(cmds, j)
	}
	return j
}

func kindName(k cmdKind) string {
	return map[cmdKind]string{cIf: "if", cElif: "elif", cElse: "else", cEndif: "endif", cSet: "set", cSleep: "sleep"}[k]
}

// scanner reads a script's text.
type scanner struct {
	src  string
	pos  int
	line int
	name string
}

func (sc *scanner) eof() bool  { return sc.pos >= len(sc.src) }
func (sc *scanner) peek() byte { return sc.src[sc.pos] }

func (sc *scanner) advance(n int) {
	sc.line += strings.Count(sc.src[sc.pos:sc.pos+n], "\n")
	sc.pos += n
}

// skipBlank skips white space and -- comments between commands.
func (sc *scanner) skipBlank() {
	for !sc.eof() {
		switch c := sc.peek(); {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			sc.advance(1)
		case strings.HasPrefix(sc.src[sc.pos:], "--"):
			end := strings.IndexByte(sc.src[sc.pos:], '\n')
			if end < 0 {
				end = len(sc.src) - sc.pos
			}
			sc.advance(end)
		default:
			return
		}
	}
}

// metaLine reads the rest of a meta-command's line (a backslash at the end of a line
// continues it) and returns it with the line it starts on.
func (sc *scanner) metaLine() (string, int) {
	line := sc.line
	var b strings.Builder
	for !sc.eof() {
		c := sc.peek()
		if c == '\n' {
			break
		}
		if c == '\\' && sc.pos+1 < len(sc.src) && (sc.src[sc.pos+1] == '\n' || strings.HasPrefix(sc.src[sc.pos+1:], "\r\n")) {
			sc.advance(1)
			if sc.peek() == '\r' {
				sc.advance(1)
			}
			sc.advance(1)
			b.WriteByte(' ')
			continue
		}
		b.WriteByte(c)
		sc.advance(1)
	}
	return strings.TrimSpace(b.String()), line
}

// meta parses one meta-command line.
func (sc *scanner) meta(vars *varTable, s *Script) (command, error) {
	text, line := sc.metaLine()
	word, rest, _ := strings.Cut(text[1:], " ")
	rest = strings.TrimSpace(strings.ReplaceAll(rest, "\t", " "))
	if i := strings.IndexAny(word, "\t"); i >= 0 {
		word, rest = word[:i], strings.TrimSpace(word[i:]+" "+rest)
	}
	word = strings.ToLower(word)
	fail := func(format string, args ...any) (command, error) {
		return command{}, parseError(sc.name, line, format, args...)
	}
	cmd := command{line: line, sleepSlot: -1, src: text}
	expr := func(src string) error {
		n, used, err := parseExpr(src, vars)
		if err != nil {
			return parseError(sc.name, line, "\\%s: %v", word, err)
		}
		cmd.expr = n
		for _, u := range used {
			s.uses = append(s.uses, varUse{name: u, line: line})
		}
		return nil
	}
	switch word {
	case "set":
		name, src, _ := strings.Cut(rest, " ")
		if name == "" || strings.TrimSpace(src) == "" {
			return fail("\\set needs a variable name and an expression: \\set NAME EXPRESSION")
		}
		if !validName(name) {
			return fail("\\set: invalid variable name %q", name)
		}
		cmd.kind, cmd.slot = cSet, vars.slot(name)
		s.sets = append(s.sets, name)
		return cmd, expr(src)
	case "sleep":
		f := strings.Fields(rest)
		if len(f) < 1 || len(f) > 2 {
			return fail("\\sleep needs a duration: \\sleep N [us|ms|s]")
		}
		cmd.kind, cmd.unit = cSleep, time.Second
		if strings.HasPrefix(f[0], ":") {
			if !validName(f[0][1:]) {
				return fail("\\sleep: invalid variable %q", f[0])
			}
			cmd.sleepSlot = vars.slot(f[0][1:])
			s.uses = append(s.uses, varUse{name: f[0][1:], line: line})
		} else {
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil || n < 0 {
				return fail("\\sleep: %q is not a whole number ≥ 0 or a :variable", f[0])
			}
			cmd.sleepN = n
		}
		if len(f) == 2 {
			switch strings.ToLower(f[1]) {
			case "us":
				cmd.unit = time.Microsecond
			case "ms":
				cmd.unit = time.Millisecond
			case "s":
			default:
				return fail("\\sleep: unknown unit %q (us, ms or s)", f[1])
			}
		}
		return cmd, nil
	case "if", "elif":
		cmd.kind = cIf
		if word == "elif" {
			cmd.kind = cElif
		}
		if rest == "" {
			return fail("\\%s needs a condition", word)
		}
		return cmd, expr(rest)
	case "else", "endif":
		if rest != "" {
			return fail("\\%s takes no argument, got %q", word, rest)
		}
		cmd.kind = cElse
		if word == "endif" {
			cmd.kind = cEndif
		}
		return cmd, nil
	case "gset", "aset":
		return fail("\\%s must end a SQL command (in place of its ';')", word)
	case "setshell", "shell":
		return fail("\\%s is not supported: dbperf runs no shell commands from a script", word)
	case "startpipeline", "endpipeline", "syncpipeline":
		if rest != "" {
			return fail("\\%s takes no argument, got %q", word, rest)
		}
		cmd.kind = map[string]cmdKind{"startpipeline": cPipeStart, "syncpipeline": cPipeSync, "endpipeline": cPipeEnd}[word]
		return cmd, nil
	}
	return fail("unknown meta-command \\%s (dbperf knows \\set, \\sleep, \\gset, \\if, \\elif, \\else, \\endif, \\startpipeline, \\syncpipeline, \\endpipeline)", word)
}

func validName(n string) bool {
	if n == "" || !isIdentStart(n[0]) {
		return false
	}
	for i := 1; i < len(n); i++ {
		if !isIdentChar(n[i]) {
			return false
		}
	}
	return true
}

// sql reads one SQL command up to its ';' (or \gset), outside quotes, comments and
// parentheses, splitting it at its :variables. '::' casts are text.
func (sc *scanner) sql(vars *varTable, s *Script) (command, error) {
	cmd := command{kind: cSQL, line: sc.line, sleepSlot: -1}
	var b strings.Builder
	depth := 0
	src := sc.src
	fail := func(format string, args ...any) (command, error) {
		return command{}, parseError(sc.name, cmd.line, format, args...)
	}
	// quoted copies a quoted token ending with the byte q ('' or "" doubled inside).
	quoted := func(start int, q byte, backslash bool) bool {
		i := start + 1
		for i < len(src) {
			switch {
			case backslash && src[i] == '\\':
				i += 2
				continue
			case src[i] == q:
				if i+1 < len(src) && src[i+1] == q {
					i += 2
					continue
				}
				b.WriteString(src[start : i+1])
				sc.advance(i + 1 - start)
				return true
			}
			i++
		}
		return false
	}
	for {
		if sc.eof() {
			if strings.TrimSpace(b.String()) != "" {
				return fail("SQL command not terminated by ';' at the end of the file")
			}
			return cmd, nil
		}
		c := src[sc.pos]
		switch {
		case c == ';' && depth == 0:
			sc.advance(1)
			return sc.finishSQL(cmd, b.String())
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '\'':
			backslash := sc.pos > 0 && (src[sc.pos-1] == 'E' || src[sc.pos-1] == 'e') && (sc.pos < 2 || !isIdentChar(src[sc.pos-2]))
			if !quoted(sc.pos, '\'', backslash) {
				return fail("unterminated quoted string")
			}
			continue
		case c == '"':
			if !quoted(sc.pos, '"', false) {
				return fail("unterminated quoted identifier")
			}
			continue
		case c == '$':
			// $tag$ … $tag$ (a dollar-quoted string), not $1.
			j := sc.pos + 1
			for j < len(src) && isIdentChar(src[j]) && !(j == sc.pos+1 && src[j] >= '0' && src[j] <= '9') {
				j++
			}
			if j < len(src) && src[j] == '$' {
				tag := src[sc.pos : j+1]
				end := strings.Index(src[j+1:], tag)
				if end < 0 {
					return fail("unterminated dollar-quoted string %s", tag)
				}
				n := j + 1 + end + len(tag) - sc.pos
				b.WriteString(src[sc.pos : sc.pos+n])
				sc.advance(n)
				continue
			}
		case c == '-' && strings.HasPrefix(src[sc.pos:], "--"):
			end := strings.IndexByte(src[sc.pos:], '\n')
			if end < 0 {
				end = len(src) - sc.pos
			}
			sc.advance(end)
			continue
		case c == '/' && strings.HasPrefix(src[sc.pos:], "/*"):
			nest, i := 0, sc.pos
			for i < len(src) {
				if strings.HasPrefix(src[i:], "/*") {
					nest++
					i += 2
				} else if strings.HasPrefix(src[i:], "*/") {
					nest--
					i += 2
					if nest == 0 {
						break
					}
				} else {
					i++
				}
			}
			if nest != 0 {
				return fail("unterminated /* comment")
			}
			b.WriteString(src[sc.pos:i])
			sc.advance(i - sc.pos)
			continue
		case c == ':':
			j := sc.pos
			for j < len(src) && src[j] == ':' {
				j++
			}
			if j-sc.pos > 1 { // '::' casts (and longer runs) are text
				b.WriteString(src[sc.pos:j])
				sc.advance(j - sc.pos)
				continue
			}
			k := j
			for k < len(src) && isIdentChar(src[k]) {
				k++
			}
			if k > j && isIdentStart(src[j]) {
				name := src[j:k]
				cmd.parts = append(cmd.parts, b.String())
				b.Reset()
				cmd.params = append(cmd.params, vars.slot(name))
				s.uses = append(s.uses, varUse{name: name, line: sc.line})
				sc.advance(k - sc.pos)
				continue
			}
		case c == '\\':
			rest := src[sc.pos+1:]
			word := rest
			if i := strings.IndexAny(rest, " \t\r\n"); i >= 0 {
				word = rest[:i]
			}
			switch strings.ToLower(word) {
			case "gset":
				text, _ := sc.metaLine()
				f := strings.Fields(text)
				if len(f) > 2 {
					return fail("\\gset takes at most a prefix, got %q", text)
				}
				if len(f) == 2 {
					if !validName(f[1]) {
						return fail("\\gset: invalid prefix %q", f[1])
					}
					cmd.prefix = f[1]
				}
				s.gsets = append(s.gsets, cmd.prefix)
				cmd, err := sc.finishSQL(cmd, b.String())
				cmd.sql = sqlGset
				return cmd, err
			case "aset":
				return fail("\\aset is not supported: use \\gset")
			}
			if strings.HasPrefix(rest, ";") {
				return fail("\\; (several statements in one command) is not supported: end each with ';'")
			}
			return fail("meta-command \\%s inside a SQL command: end the command with ';' first", word)
		}
		b.WriteByte(c)
		sc.advance(1)
	}
}

// finishSQL completes a SQL command: its last part, trimmed, and how it is sent.
func (sc *scanner) finishSQL(cmd command, last string) (command, error) {
	cmd.parts = append(cmd.parts, last)
	cmd.parts[0] = strings.TrimLeft(cmd.parts[0], " \t\r\n")
	n := len(cmd.parts) - 1
	cmd.parts[n] = strings.TrimRight(cmd.parts[n], " \t\r\n")
	whole := strings.Join(cmd.parts, "?")
	if strings.TrimSpace(whole) == "" {
		return cmd, parseError(sc.name, cmd.line, "empty SQL command (a ';' alone)")
	}
	words := strings.Fields(strings.ToUpper(stripComments(whole)))
	first := ""
	if len(words) > 0 {
		first = words[0]
	}
	switch first {
	case "BEGIN", "START":
		cmd.sql = sqlBegin
	case "COMMIT", "END", "ROLLBACK", "ABORT":
		cmd.sql = sqlEnd
		if first == "END" && (len(words) == 1 || len(words) == 2 && (words[1] == "TRANSACTION" || words[1] == "WORK")) {
			cmd.parts = []string{"COMMIT"} // END is PostgreSQL's and SQLite's, not MariaDB's
		}
	case "SELECT", "WITH", "VALUES", "SHOW", "TABLE", "EXPLAIN", "PRAGMA":
		cmd.sql = sqlQuery
	default:
		for _, w := range words {
			if w == "RETURNING" {
				cmd.sql = sqlQuery
			}
		}
	}
	return cmd, nil
}

// stripComments removes /* */ comments (for finding a command's first word).
func stripComments(s string) string {
	for {
		i := strings.Index(s, "/*")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], "*/")
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + " " + s[i+j+2:]
	}
}

// predefined are the variables every client has before its first transaction, as
// pgbench sets them.
func predefined() []string { return []string{"scale", "client_id", "default_seed", "random_seed"} }

// checkVariables fails on the first variable a script reads that nothing sets: no \set
// of any script, no predefined variable, and no \gset whose prefix it starts with (the
// columns of a \gset are known only when it runs).
func checkVariables(scripts []*Script, defined []string) error {
	set := map[string]bool{}
	for _, n := range defined {
		set[n] = true
	}
	var prefixes []string
	for _, s := range scripts {
		for _, n := range s.sets {
			set[n] = true
		}
		prefixes = append(prefixes, s.gsets...)
	}
	for _, s := range scripts {
	uses:
		for _, u := range s.uses {
			if set[u.name] {
				continue
			}
			for _, p := range prefixes {
				if strings.HasPrefix(u.name, p) {
					continue uses
				}
			}
			return parseError(s.Name, u.line, "undefined variable %q: no \\set or \\gset sets it", u.name)
		}
	}
	return nil
}
