package script

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

// Program is the scripts of a run, parsed once, with the variables they share.
type Program struct {
	Scripts []*Script
	vars    *varTable
	total   int // the sum of the weights
	// defines are the -D NAME=VALUE variables, set in every client before the
	// predefined ones, which they override.
	defines map[string]value
}

// compile checks the scripts' variables and weights and returns them as a Program;
// defines are -D's variables.
func compile(scripts []*Script, vars *varTable, defines map[string]value) (*Program, error) {
	defined := predefined()
	for n := range defines {
		defined = append(defined, n)
	}
	if err := checkVariables(scripts, defined); err != nil {
		return nil, err
	}
	p := &Program{Scripts: scripts, vars: vars, defines: defines}
	for _, s := range scripts {
		p.total += s.Weight
	}
	if p.total == 0 {
		return nil, fmt.Errorf("every script has weight 0: give one a weight ≥ 1")
	}
	return p, nil
}

// ReadOnly says whether every SQL command of every script only reads (SELECT, SHOW,
// VALUES, TABLE, EXPLAIN), so that a standby may serve it.
func (p *Program) ReadOnly() bool {
	for _, s := range p.Scripts {
		for _, c := range s.cmds {
			if c.kind == cSQL && !c.readOnly() {
				return false
			}
		}
	}
	return true
}

func (c *command) readOnly() bool {
	if c.sql != sqlQuery {
		return false
	}
	f := strings.Fields(strings.ToUpper(stripComments(c.parts[0])))
	if len(f) == 0 {
		return false
	}
	switch f[0] {
	case "SELECT", "SHOW", "VALUES", "TABLE", "EXPLAIN":
		return !strings.Contains(strings.ToUpper(strings.Join(c.parts, " ")), "RETURNING")
	}
	return false
}

// display is the command as a report shows it: a meta-command's line, a SQL command with
// its :variables, on one line, at most 60 characters.
func (c *command) display(vars *varTable) string {
	t := c.src
	if c.kind == cSQL {
		var b strings.Builder
		for i, p := range c.parts {
			if i > 0 {
				b.WriteString(":" + vars.names[c.params[i-1]])
			}
			b.WriteString(p)
		}
		t = b.String()
	}
	t = strings.Join(strings.Fields(t), " ")
	if len(t) > 60 {
		t = t[:57] + "..."
	}
	return t
}

// text is the command's SQL with the dialect's placeholders.
func (c *command) text(d engine.Dialect) string {
	if len(c.parts) == 1 {
		return c.parts[0]
	}
	var b strings.Builder
	for i, p := range c.parts {
		if i > 0 {
			b.WriteString(d.Placeholder(i))
		}
		b.WriteString(p)
	}
	return b.String()
}

// maxAttempts bounds how often one transaction is run again after conflicts.
const maxAttempts = 100

// client is one pgbench client: its session, its statements prepared once, its
// variables and random streams. It is not safe for concurrent use.
type client struct {
	prog    *Program
	id      int // pgbench's :client_id, 0-based
	d       engine.Dialect
	retries *atomic.Int64

	stmts [][]engine.Stmt // [script][command], nil for meta-commands
	// gset caches, per [script][command], the slots of the columns of the last row a
	// \gset read (-1: a variable no script reads), and their names.
	gsetNames [][][]string
	gsetSlots [][][]int

	vars   []value
	e      env
	rng    prng // the script functions' stream (pgbench's cs_func_rs)
	choose prng // the script choice's
	// throttle draws the gaps of the --rate schedule (pgbench's ts_throttle_rs).
	throttle prng
	args     engine.Args
	row      engine.Row
	wait     workload.Waiter // \sleep and the backoff before a retry
	inTx     bool
	rb       engine.Stmt
	sess     engine.Session
	// perCmd, with --report-per-command, counts each command's runs and time, per
	// [script][command] (pgbench -r); nil: commands are not timed.
	perCmd [][]cmdStat
	// lazy: statements are prepared when they first run, not in Init (a setup script
	// creating the tables it then fills).
	lazy bool
	// pipe is the session's pipeline mode (nil: the engine has none); piped are the
	// commands queued in the open pipeline since its start or last sync.
	pipe  engine.Pipeliner
	piped []int
}

// clientSeeds are what a client starts from.
type clientSeeds struct {
	fn, choose, throttle uint64
	defaultSeed          int64
	randomSeed           int64
	scale                int64
}

func newClient(prog *Program, id int, sd clientSeeds, retries *atomic.Int64) *client {
	c := &client{prog: prog, id: id, retries: retries,
		rng: newPRNG(sd.fn), choose: newPRNG(sd.choose), throttle: newPRNG(sd.throttle),
		vars: make([]value, len(prog.vars.names))}
	c.e = env{vars: c.vars, names: prog.vars.names, rng: &c.rng}
	set := func(name string, v int64) {
		if _, given := prog.defines[name]; given {
			return // -D wins, as in pgbench
		}
		if s, ok := prog.vars.slots[name]; ok {
			c.vars[s] = intVal(v)
		}
	}
	for name, v := range prog.defines {
		if s, ok := prog.vars.slots[name]; ok {
			c.vars[s] = v
		}
	}
	set("scale", sd.scale)
	set("client_id", int64(id))
	set("default_seed", sd.defaultSeed)
	set("random_seed", sd.randomSeed)
	return c
}

// setScale sets :scale (once the run step knows it).
func (c *client) setScale(scale int64) {
	if _, given := c.prog.defines["scale"]; given {
		return
	}
	if s, ok := c.prog.vars.slots["scale"]; ok {
		c.vars[s] = intVal(scale)
	}
}

// Init prepares every SQL command of every script on s (one that cannot be prepared yet
// is prepared when it first runs): server-side, but transaction control (BEGIN, COMMIT,
// …) as text, as sysbench sends it. BEGIN takes the engine's
// write lock where a transaction must (SQLite: BEGIN IMMEDIATE), so that concurrent
// writers queue instead of failing.
func (c *client) Init(ctx context.Context, s engine.Session) error {
	if s == nil {
		return errors.New("script: no SQL session")
	}
	return c.prepare(ctx, s)
}

func (c *client) prepare(ctx context.Context, s engine.Session) error {
	c.sess = s
	c.pipe, _ = s.(engine.Pipeliner)
	for _, sc := range c.prog.Scripts {
		if sc.pipeline > 0 && c.pipe == nil {
			return fmt.Errorf("%s:%d: \\startpipeline: the %s engine has no pipeline mode; run the statements without a pipeline", sc.Name, sc.pipeline, c.d.Name())
		}
	}
	c.stmts = make([][]engine.Stmt, len(c.prog.Scripts))
	c.gsetNames = make([][][]string, len(c.prog.Scripts))
	c.gsetSlots = make([][][]int, len(c.prog.Scripts))
	c.inTx = false
	for si, sc := range c.prog.Scripts {
		c.stmts[si] = make([]engine.Stmt, len(sc.cmds))
		c.gsetNames[si] = make([][]string, len(sc.cmds))
		c.gsetSlots[si] = make([][]int, len(sc.cmds))
		if c.lazy {
			continue
		}
		for ci := range sc.cmds {
			if sc.cmds[ci].kind == cSQL {
				// A statement on a table an earlier command creates cannot be prepared
				// yet: it is prepared when it first runs, as pgbench -M prepared does.
				c.stmts[si][ci], _ = c.prepareCmd(ctx, &sc.cmds[ci])
			}
		}
	}
	var err error
	if c.rb, err = s.PrepareClient(ctx, "ROLLBACK"); err != nil {
		return fmt.Errorf("script: prepare ROLLBACK: %w", err)
	}
	return nil
}

// prepareCmd prepares one SQL command on the client's session.
func (c *client) prepareCmd(ctx context.Context, cmd *command) (engine.Stmt, error) {
	q := cmd.text(c.d)
	var st engine.Stmt
	var err error
	switch cmd.sql {
	case sqlBegin, sqlEnd:
		if cmd.sql == sqlBegin && isPlainBegin(q) {
			q = c.d.BeginWrite()
		}
		st, err = c.sess.PrepareClient(ctx, q)
	default:
		st, err = c.sess.Prepare(ctx, q)
	}
	if err != nil {
		return nil, err
	}
	if _, ok := st.(engine.RowQuerier); cmd.sql == sqlGset && !ok {
		_ = st.Close()
		return nil, errors.New("\\gset: the engine cannot return a row's values")
	}
	return st, nil
}

// cmdStat is one command's runs and their time (--report-per-command).
type cmdStat struct {
	n, ns int64
}

// timeCommands makes the client time each command it runs.
func (c *client) timeCommands() {
	if c.perCmd != nil {
		return
	}
	c.perCmd = make([][]cmdStat, len(c.prog.Scripts))
	for i, s := range c.prog.Scripts {
		c.perCmd[i] = make([]cmdStat, len(s.cmds))
	}
}

// isPlainBegin: BEGIN [TRANSACTION|WORK], which the engine's BeginWrite may replace.
func isPlainBegin(q string) bool {
	f := strings.Fields(strings.ToUpper(strings.TrimSuffix(strings.TrimSpace(q), ";")))
	return len(f) == 1 && f[0] == "BEGIN" || len(f) == 2 && f[0] == "BEGIN" && (f[1] == "TRANSACTION" || f[1] == "WORK")
}

// Ready never waits.
func (c *client) Ready(context.Context) error { return nil }

// pick chooses a script by weight, as pgbench's chooseScript.
func (c *client) pick() int {
	if len(c.prog.Scripts) == 1 {
		return 0
	}
	w := randInt(&c.choose, 0, int64(c.prog.total-1))
	i := 0
	for {
		w -= int64(c.prog.Scripts[i].Weight)
		i++
		if w < 0 {
			return i - 1
		}
	}
}

// Op runs one transaction: one execution of a script chosen by weight. A transaction
// aborted by a conflict with another client's (deadlock, serialization failure, busy
// database) is rolled back and run again with the same random values, as pgbench's
// --max-tries does; any other error fails it, naming the script's file and line.
func (c *client) Op(ctx context.Context) (int64, error) {
	si := c.pick()
	saved := c.rng
	for attempt := 1; ; attempt++ {
		rows, err := c.run(ctx, si)
		if err == nil {
			return rows, nil
		}
		if c.inTx {
			c.inTx = false
			if _, rerr := c.rb.Exec(ctx, nil); rerr != nil && ctx.Err() == nil {
				return 0, fmt.Errorf("%w; then ROLLBACK: %w", err, rerr)
			}
		}
		if !errors.Is(err, engine.ErrConflict) || attempt >= maxAttempts || ctx.Err() != nil {
			return 0, err
		}
		c.retries.Add(1)
		c.rng = saved
		if err := c.wait.Backoff(ctx, attempt); err != nil {
			return 0, err
		}
	}
}

// run executes script si once.
func (c *client) run(ctx context.Context, si int) (int64, error) {
	sc := c.prog.Scripts[si]
	cmds := sc.cmds
	var rows int64
	fail := func(cmd *command, err error) (int64, error) {
		return rows, fmt.Errorf("%s:%d: %w", sc.Name, cmd.line, err)
	}
	c.piped = c.piped[:0]
	inPipe := false
	defer func() {
		if inPipe { // an error left the pipeline before its end: nothing of it is sent
			c.pipe.Reset()
		}
	}()
	for pc := 0; pc < len(cmds); {
		cmd := &cmds[pc]
		var t0 time.Time
		at := pc
		if c.perCmd != nil {
			t0 = time.Now()
		}
		switch cmd.kind {
		case cSQL:
			if inPipe {
				if err := c.queue(ctx, si, pc, cmd); err != nil {
					return fail(cmd, err)
				}
				pc++
				break
			}
			n, err := c.exec(ctx, si, pc, cmd)
			if err != nil {
				return fail(cmd, err)
			}
			rows += n
			pc++
		case cSet:
			v, err := c.e.eval(cmd.expr)
			if err != nil {
				return fail(cmd, fmt.Errorf("\\set %s: %w", c.e.names[cmd.slot], err))
			}
			c.vars[cmd.slot] = v
			pc++
		case cSleep:
			n := cmd.sleepN
			if cmd.sleepSlot >= 0 {
				v, err := c.e.eval(&node{op: opVar, slot: cmd.sleepSlot})
				if err == nil {
					n, err = v.toInt()
				}
				if err != nil {
					return fail(cmd, fmt.Errorf("\\sleep: %w", err))
				}
			}
			if err := c.wait.Sleep(ctx, time.Duration(n)*cmd.unit); err != nil {
				return fail(cmd, err)
			}
			pc++
		case cIf:
			v, err := c.e.eval(cmd.expr)
			if err != nil {
				return fail(cmd, fmt.Errorf("\\if: %w", err))
			}
			if v.truth() {
				pc++
			} else if pc, err = c.branch(cmds, cmd.next); err != nil {
				return fail(&cmds[pc], err)
			}
		case cElif, cElse:
			// Reached at the end of the branch taken.
			pc = cmd.end + 1
		case cEndif:
			pc++
		case cPipeStart:
			inPipe = true
			pc++
		case cPipeSync, cPipeEnd:
			n, failed, err := c.syncPipeline(ctx, si)
			rows += n
			if err != nil {
				inPipe = false // the batch was sent: nothing is left to drop
				if failed >= 0 {
					return fail(&cmds[failed], err)
				}
				return fail(cmd, err)
			}
			inPipe = cmd.kind == cPipeSync
			pc++
		}
		if c.perCmd != nil {
			st := &c.perCmd[si][at]
			st.n++
			st.ns += int64(time.Since(t0))
		}
	}
	if c.inTx {
		return rows, fmt.Errorf("%s: the script ended inside a transaction (BEGIN without COMMIT or END)", sc.Name)
	}
	return rows, nil
}

// queue adds SQL command ci of script si to the open pipeline, bound to its variables.
func (c *client) queue(ctx context.Context, si, ci int, cmd *command) error {
	if err := c.bind(cmd); err != nil {
		return err
	}
	st, err := c.stmt(ctx, si, ci, cmd)
	if err != nil {
		return err
	}
	if err := c.pipe.Queue(st, &c.args); err != nil {
		return err
	}
	c.piped = append(c.piped, ci)
	return nil
}

// syncPipeline sends the commands queued since the pipeline's start or last sync and
// reads their results: their rows, and on an error the index of the command that failed
// (-1: none known). The transaction state follows the BEGINs and ENDs that ran; after a
// failure inside a transaction block the block is aborted but open (Op rolls it back).
func (c *client) syncPipeline(ctx context.Context, si int) (rows int64, failed int, err error) {
	cmds := c.prog.Scripts[si].cmds
	n, bad, err := c.pipe.Sync(ctx)
	ran := len(c.piped)
	if err != nil {
		ran = max(bad, 0)
	}
	for k, ci := range c.piped[:ran] {
		rows += n[k]
		switch cmds[ci].sql {
		case sqlBegin:
			c.inTx = true
		case sqlEnd:
			c.inTx = false
		}
	}
	if err != nil && bad >= 0 && bad < len(c.piped) && cmds[c.piped[bad]].sql == sqlBegin {
		c.inTx = false // the BEGIN itself failed: no block is open
	}
	failed = -1
	if err != nil && bad >= 0 && bad < len(c.piped) {
		failed = c.piped[bad]
	}
	c.piped = c.piped[:0]
	return rows, failed, err
}

// branch finds the branch to run after a false condition, from branch command j (the
// next \elif, \else or \endif): the first \elif whose condition holds, else the \else.
func (c *client) branch(cmds []command, j int) (int, error) {
	for {
		switch cmds[j].kind {
		case cElif:
			v, err := c.e.eval(cmds[j].expr)
			if err != nil {
				return j, fmt.Errorf("\\elif: %w", err)
			}
			if v.truth() {
				return j + 1, nil
			}
			j = cmds[j].next
		default: // \else, \endif
			return j + 1, nil
		}
	}
}

// bind fills the arguments of a SQL command from its variables: integers as integers,
// doubles as pgbench prints them, booleans as true/false, NULL, text as text.
func (c *client) bind(cmd *command) error {
	c.args.Reset()
	for _, slot := range cmd.params {
		v := c.vars[slot]
		switch v.k {
		case kInt:
			c.args.Int(v.i)
		case kNull:
			c.args.Null()
		case kText:
			c.args.Text(v.s)
		case kNone:
			return fmt.Errorf("undefined variable %q", c.e.names[slot])
		default:
			c.args.Text(v.String())
		}
	}
	return nil
}

// stmt is the statement of SQL command ci of script si, prepared on first use when Init
// could not.
func (c *client) stmt(ctx context.Context, si, ci int, cmd *command) (engine.Stmt, error) {
	st := c.stmts[si][ci]
	if st == nil {
		var err error
		if st, err = c.prepareCmd(ctx, cmd); err != nil {
			return nil, err
		}
		c.stmts[si][ci] = st
	}
	return st, nil
}

func (c *client) exec(ctx context.Context, si, ci int, cmd *command) (int64, error) {
	if err := c.bind(cmd); err != nil {
		return 0, err
	}
	st, err := c.stmt(ctx, si, ci, cmd)
	if err != nil {
		return 0, err
	}
	switch cmd.sql {
	case sqlQuery:
		return st.Query(ctx, &c.args)
	case sqlGset:
		n, err := st.(engine.RowQuerier).QueryRow(ctx, &c.args, &c.row)
		if err != nil {
			return n, err
		}
		if n != 1 {
			return n, fmt.Errorf("\\gset: expected one row, got %d", n)
		}
		c.gset(si, ci, cmd.prefix)
		return n, nil
	case sqlBegin:
		n, err := st.Exec(ctx, &c.args)
		if err == nil {
			c.inTx = true
		}
		return n, err
	case sqlEnd:
		n, err := st.Exec(ctx, &c.args)
		if err == nil {
			c.inTx = false
		}
		return n, err
	}
	return st.Exec(ctx, &c.args)
}

// gset stores the row's columns in the variables prefix+name. Integers are kept as
// integers without allocating; other text as text, typed when an expression reads it.
func (c *client) gset(si, ci int, prefix string) {
	names := c.gsetNames[si][ci]
	same := len(names) == len(c.row.Names)
	for i := 0; same && i < len(names); i++ {
		same = names[i] == c.row.Names[i]
	}
	if !same {
		names = append([]string(nil), c.row.Names...)
		slots := make([]int, len(names))
		for i, n := range names {
			slots[i] = -1
			if s, ok := c.prog.vars.slots[prefix+n]; ok {
				slots[i] = s
			}
		}
		c.gsetNames[si][ci], c.gsetSlots[si][ci] = names, slots
	}
	for i, s := range c.gsetSlots[si][ci] {
		if s < 0 {
			continue
		}
		switch b := c.row.Values[i]; {
		case c.row.Null[i]:
			c.vars[s] = value{k: kNull}
		default:
			c.vars[s] = textValue(b)
		}
	}
}

// textValue is the value of a text (a \gset column, a -D value): an integer when it is
// one, else text, typed when an expression reads it. An integer allocates nothing.
func textValue(b []byte) value {
	if v, ok := parseInt(b); ok {
		return intVal(v)
	}
	return value{k: kText, s: string(b)}
}

// parseInt parses a canonical decimal integer (no sign but '-', no leading zeros)
// without allocating.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	neg := b[0] == '-'
	d := b
	if neg {
		d = b[1:]
	}
	if len(d) == 0 || len(d) > 19 || len(d) > 1 && d[0] == '0' {
		return 0, false
	}
	var u uint64
	for _, ch := range d {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		u = u*10 + uint64(ch-'0')
		if u > 1<<63 {
			return 0, false
		}
	}
	if neg {
		return int64(-u), true // -(1<<63) wraps to MinInt64
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// Close closes the statements.
func (c *client) Close() error {
	var all []engine.Stmt
	for _, ss := range c.stmts {
		for _, st := range ss {
			if st != nil {
				all = append(all, st)
			}
		}
	}
	if c.rb != nil {
		all = append(all, c.rb)
	}
	c.stmts, c.rb = nil, nil
	c.wait.Stop()
	return workload.CloseStmts(all...)
}
