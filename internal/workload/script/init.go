package script

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

// pgbench's table sizes per unit of scale factor.
const (
	nBranches = 1
	nTellers  = 10
	nAccounts = 100_000
	// accountsBatch is the accounts one INSERT adds (pgbench sends them with COPY).
	accountsBatch = 10_000
)

// initStep is pgbench -i (its default steps dtgvp: drop the tables, create them,
// generate the rows, vacuum, primary keys), then the --setup script. Its throughput is
// rows inserted per second, vacuum and keys included.
type initStep struct {
	workload.StepBase
	p *plan
}

var _ workload.Step = (*initStep)(nil)

// Prepare does nothing: the load drops and creates the tables.
func (s *initStep) Prepare(context.Context, engine.Handle) error { return nil }

// Load is one worker doing the initialization, one INSERT per op.
func (s *initStep) Load(_ context.Context, hh engine.Handle) (workload.Load, error) {
	d, err := workload.SQLDialect(hh)
	if err != nil {
		return workload.Load{}, err
	}
	w := &initWorker{s: s, d: d}
	g := workload.Group{Label: labelInsert, Role: "load", Unit: workload.UnitRows, UntilDone: true,
		Workers: []workload.Worker{w}}
	return workload.Load{Kind: "load", Primary: labelInsert, Groups: []workload.Group{g}}, nil
}

// Verify checks the row counts of pgbench's tables when the step built them.
func (s *initStep) Verify(ctx context.Context, hh engine.Handle) (string, error) {
	if !s.p.init {
		return "", nil
	}
	if s.p.p.setup != nil {
		return "row counts not checked: the --setup script may change them", nil
	}
	h, err := engine.AsSQL(hh)
	if err != nil {
		return "", err
	}
	sess, err := h.NewSession(ctx)
	if err != nil {
		return "", fmt.Errorf("script %s: %w", s.Name(), err)
	}
	defer sess.Close()
	sf := s.p.p.ScaleFactor
	detail := ""
	for _, t := range []struct {
		table string
		want  int64
	}{{"pgbench_branches", nBranches * sf}, {"pgbench_tellers", nTellers * sf}, {"pgbench_accounts", nAccounts * sf}, {"pgbench_history", 0}} {
		n, err := queryInt(ctx, sess, "SELECT count(*) FROM "+t.table)
		if err != nil {
			return "", fmt.Errorf("script %s: count %s: %w", s.Name(), t.table, err)
		}
		if n != t.want {
			return "", fmt.Errorf("script %s: %s has %d rows, want %d (scale factor %d)", s.Name(), t.table, n, t.want, sf)
		}
		detail += fmt.Sprintf("%s %d rows; ", t.table, n)
	}
	return detail[:len(detail)-2], nil
}

// initWorker does the initialization in ops: the tables with branches and tellers,
// then the accounts a batch at a time, the vacuum, the keys, the setup script.
type initWorker struct {
	s     *initStep
	d     engine.Dialect
	sess  engine.Session
	phase int
	next  int64 // the next account to insert, 1-based
	buf   []byte
}

const (
	phaseTables = iota
	phaseAccounts
	phaseVacuum
	phaseKeys
	phaseSetup
	phaseDone
)

func (w *initWorker) Init(_ context.Context, s engine.Session) error {
	w.sess, w.next = s, 1
	w.phase = phaseTables
	if !w.s.p.init {
		w.phase = phaseSetup
	}
	return nil
}

func (w *initWorker) Ready(context.Context) error { return nil }

func (w *initWorker) Close() error { return nil }

func (w *initWorker) exec(ctx context.Context, qs ...string) error {
	for _, q := range qs {
		if _, err := w.sess.Exec(ctx, q); err != nil {
			return fmt.Errorf("script %s: %w", w.s.Name(), err)
		}
	}
	return nil
}

func (w *initWorker) Op(ctx context.Context) (int64, error) {
	sf := w.s.p.p.ScaleFactor
	switch w.phase {
	case phaseTables:
		w.phase = phaseAccounts
		if err := w.exec(ctx, pgbenchTables(w.d, sf)...); err != nil {
			return 0, err
		}
		var rows int64
		b := []byte("INSERT INTO pgbench_branches (bid, bbalance) VALUES ")
		for i := int64(1); i <= nBranches*sf; i++ {
			if i > 1 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, "(%d,0)", i)
			rows++
		}
		t := []byte("INSERT INTO pgbench_tellers (tid, bid, tbalance) VALUES ")
		for i := int64(0); i < nTellers*sf; i++ {
			if i > 0 {
				t = append(t, ',')
			}
			t = fmt.Appendf(t, "(%d,%d,0)", i+1, i/nTellers+1)
			rows++
		}
		return rows, w.exec(ctx, string(b), string(t))
	case phaseAccounts:
		last := min(w.next+accountsBatch-1, nAccounts*sf)
		b := append(w.buf[:0], "INSERT INTO pgbench_accounts (aid, bid, abalance, filler) VALUES "...)
		for i := w.next; i <= last; i++ {
			if i > w.next {
				b = append(b, ',')
			}
			b = append(b, '(')
			b = strconv.AppendInt(b, i, 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, (i-1)/nAccounts+1, 10)
			b = append(b, ",0,'')"...)
		}
		w.buf = b
		rows := last - w.next + 1
		w.next = last + 1
		if w.next > nAccounts*sf {
			w.phase = phaseVacuum
		}
		return rows, w.exec(ctx, string(b))
	case phaseVacuum:
		w.phase = phaseKeys
		return 0, w.exec(ctx, vacuumStmts(w.d)...)
	case phaseKeys:
		w.phase = phaseSetup
		return 0, w.exec(ctx, keyStmts(w.d)...)
	case phaseSetup:
		w.phase = phaseDone
		if w.s.p.p.setup == nil {
			return 0, workload.ErrDone
		}
		return w.setup(ctx)
	}
	return 0, workload.ErrDone
}

// setup runs the --setup script once, as client 0.
func (w *initWorker) setup(ctx context.Context) (int64, error) {
	pl := w.s.p
	var retries atomic.Int64
	c := newClient(pl.p.setup, 0, pl.clientSeeds(0, pl.p.ScaleFactor), &retries)
	c.d, c.lazy = w.d, true
	if err := c.Init(ctx, w.sess); err != nil {
		return 0, fmt.Errorf("script %s: --setup: %w", w.s.Name(), err)
	}
	rows, err := c.Op(ctx)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return rows, fmt.Errorf("script %s: --setup: %w", w.s.Name(), err)
	}
	return rows, nil
}

// pgbenchTables drops and creates pgbench's four tables as pgbench -i does (PostgreSQL
// 15, its default "dtgvp": no keys until after the data, fillfactor 100). aid is bigint
// from scale factor 20,000 on, as in pgbench. SQLite gets its keys here (it cannot add a
// primary key to a table), as INTEGER PRIMARY KEY, the rowid.
func pgbenchTables(d engine.Dialect, sf int64) []string {
	aid := "int"
	if sf >= 20000 {
		aid = "bigint"
	}
	ts := "timestamp"
	if d.Name() == "mysql" {
		ts = d.DateTimeType()
	}
	tables := []struct{ name, cols, sqliteCols string }{
		{"pgbench_history", "tid int,bid int,aid " + aid + ",delta int,mtime " + ts + ",filler char(22)", ""},
		{"pgbench_tellers", "tid int not null,bid int,tbalance int,filler char(84)", "tid INTEGER NOT NULL PRIMARY KEY,bid int,tbalance int,filler char(84)"},
		{"pgbench_accounts", "aid " + aid + " not null,bid int,abalance int,filler char(84)", "aid INTEGER NOT NULL PRIMARY KEY,bid int,abalance int,filler char(84)"},
		{"pgbench_branches", "bid int not null,bbalance int,filler char(88)", "bid INTEGER NOT NULL PRIMARY KEY,bbalance int,filler char(88)"},
	}
	var out []string
	for _, t := range tables {
		out = append(out, d.DropTable(t.name))
	}
	for _, t := range tables {
		switch d.Name() {
		case "postgres":
			q := "create table " + t.name + "(" + t.cols + ")"
			if t.name != "pgbench_history" {
				q += " with (fillfactor=100)"
			}
			out = append(out, q)
		case "sqlite":
			cols := t.cols
			if t.sqliteCols != "" {
				cols = t.sqliteCols
			}
			out = append(out, d.CreateTable(t.name, []string{cols})...)
		default:
			out = append(out, d.CreateTable(t.name, []string{t.cols})...)
		}
	}
	return out
}

// vacuumStmts are pgbench -i's vacuum (v): VACUUM ANALYZE on PostgreSQL, the engine's
// ANALYZE elsewhere.
func vacuumStmts(d engine.Dialect) []string {
	switch d.Name() {
	case "postgres":
		return []string{"vacuum analyze pgbench_branches", "vacuum analyze pgbench_tellers",
			"vacuum analyze pgbench_accounts", "vacuum analyze pgbench_history"}
	case "sqlite":
		return []string{"ANALYZE"}
	}
	return []string{"ANALYZE TABLE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history"}
}

// keyStmts are pgbench -i's primary keys (p); SQLite has them from the start.
func keyStmts(d engine.Dialect) []string {
	if d.Name() == "sqlite" {
		return nil
	}
	return []string{"alter table pgbench_branches add primary key (bid)",
		"alter table pgbench_tellers add primary key (tid)",
		"alter table pgbench_accounts add primary key (aid)"}
}
