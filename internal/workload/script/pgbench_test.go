package script

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// debugText renders a value as pgbench's debug() prints it.
func debugText(v value) string {
	switch v.k {
	case kNull:
		return "null"
	case kBool:
		return "boolean " + strconv.FormatBool(v.i != 0)
	case kInt:
		return "int " + strconv.FormatInt(v.i, 10)
	case kDouble:
		return "double " + strconv.FormatFloat(v.d, 'g', 15, 64)
	}
	return v.typeName()
}

// sets runs script si's \set commands (its SQL is not sent) and returns what each set.
func sets(t *testing.T, c *client, si int) []string {
	t.Helper()
	var out []string
	for _, cmd := range c.prog.Scripts[si].cmds {
		if cmd.kind != cSet {
			continue
		}
		v, err := c.e.eval(cmd.expr)
		if err != nil {
			t.Fatalf("line %d: %v", cmd.line, err)
		}
		c.vars[cmd.slot] = v
		out = append(out, debugText(v))
	}
	return out
}

func compileTexts(t testing.TB, texts ...string) *Program {
	t.Helper()
	vars := newVarTable()
	var scripts []*Script
	for i, text := range texts {
		s, err := Parse("s"+strconv.Itoa(i)+".sql", text, vars)
		if err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, s)
	}
	p, err := compile(scripts, vars, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPgbenchFunctions evaluates testdata/functions.sql — every function and operator
// of the expression language — as pgbench 15 did with the same seed, scale and client:
// every value, random ones included, is the one pgbench printed
// (testdata/functions.pgbench-seed1234.txt), over two transactions.
func TestPgbenchFunctions(t *testing.T) {
	text, err := os.ReadFile("testdata/functions.sql")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/functions.pgbench-seed1234.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		_, v, _ := strings.Cut(line, "): ")
		want = append(want, v)
	}
	prog := compileTexts(t, string(text))
	sd := deriveSeeds(1234, 1)
	var retries atomic.Int64
	c := newClient(prog, 0, clientSeeds{fn: sd.clients[0], choose: sd.choose, defaultSeed: sd.defaultSeed, randomSeed: 1234, scale: 3}, &retries)
	got := append(sets(t, c, 0), sets(t, c, 0)...)
	if len(got) != len(want) {
		t.Fatalf("%d values, pgbench printed %d", len(got), len(want))
	}
	cmds := prog.Scripts[0].cmds
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("transaction %d, line %d: %s, pgbench: %s", i/len(cmds)+1, cmds[i%(len(cmds)-1)].line, got[i], want[i])
		}
	}
}

// TestPgbenchClients: each client's random stream and :default_seed are pgbench's
// (pgbench -c 2 --random-seed=99: the first random(1, 1000) of each client, and the
// default seed).
func TestPgbenchClients(t *testing.T) {
	prog := compileTexts(t, "\\set r random(1, 1000)\n\\set ds :default_seed\n")
	sd := deriveSeeds(99, 2)
	var retries atomic.Int64
	for id, want := range []string{"int 906", "int 473"} {
		c := newClient(prog, id, clientSeeds{fn: sd.clients[id], defaultSeed: sd.defaultSeed}, &retries)
		got := sets(t, c, 0)
		if got[0] != want || got[1] != "int 5796346726335417119" {
			t.Errorf("client %d: %v, pgbench: %s, int 5796346726335417119", id, got, want)
		}
	}
}

// TestPgbenchWeights: with -f a.sql@1 -f b.sql@3 and --random-seed=42, a client runs
// the scripts in pgbench's order, with pgbench's values.
func TestPgbenchWeights(t *testing.T) {
	prog := compileTexts(t, "\\set x 1\n", "\\set x 2\n\\set y random(1, 10)\n")
	prog.Scripts[1].Weight = 3
	prog.total = 4
	sd := deriveSeeds(42, 1)
	var retries atomic.Int64
	c := newClient(prog, 0, clientSeeds{fn: sd.clients[0], choose: sd.choose, defaultSeed: sd.defaultSeed}, &retries)
	var order, ys []string
	for range 12 {
		si := c.pick()
		order = append(order, strconv.Itoa(si))
		if v := sets(t, c, si); si == 1 {
			ys = append(ys, strings.TrimPrefix(v[1], "int "))
		}
	}
	if got, want := strings.Join(order, ","), "1,0,1,1,1,1,1,1,0,0,1,1"; got != want {
		t.Errorf("scripts %s, pgbench %s", got, want)
	}
	if got, want := strings.Join(ys, ","), "1,5,5,5,1,2,10,5,7"; got != want {
		t.Errorf("random(1, 10): %s, pgbench %s", got, want)
	}
}

// TestPgbenchBranches runs testdata/branches.sql — \gset with and without a prefix,
// \if/\elif/\else/\endif, CASE, \sleep — on SQLite for six transactions, client 0 of
// seed 77, and compares every debug() value with what pgbench 15 printed running it on
// PostgreSQL with --random-seed=77: the same branches taken with the same values.
func TestPgbenchBranches(t *testing.T) {
	text, err := os.ReadFile("testdata/branches.sql")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := os.ReadFile("testdata/branches.pgbench-seed77.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(string(ref)), "\n") {
		if !strings.HasPrefix(line, "#") {
			_, v, _ := strings.Cut(line, "): ")
			want = append(want, v)
		}
	}
	prog := compileTexts(t, string(text))
	sd := deriveSeeds(77, 1)
	var retries atomic.Int64
	c := newClient(prog, 0, clientSeeds{fn: sd.clients[0], choose: sd.choose, defaultSeed: sd.defaultSeed, randomSeed: 77, scale: 1}, &retries)
	h := openSQLite(t)
	c.d = h.Dialect()
	s, err := h.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := c.Init(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got []string
	c.e.debug = func(v value) { got = append(got, debugText(v)) }
	for range 6 {
		if _, err := c.Op(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("debug values:\n%s\npgbench:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPgbenchRate: the --rate schedule's gaps are pgbench's. pgbench 15 with -R 100 -c 1
// -j 1 --random-seed=5 -l logged transactions whose scheduled starts (end − latency) were
// 518, 10920, 186, 8818, 219, 5404, 670 µs apart (its first gap, from the thread's start,
// is not in the log; later ones carry the log's rounding).
func TestPgbenchRate(t *testing.T) {
	sd := deriveSeeds(5, 1)
	var retries atomic.Int64
	c := newClient(compileTexts(t, "SELECT 1;\n"), 0, clientSeeds{fn: sd.clients[0], throttle: sd.throttle}, &retries)
	var got []string
	for i := range 8 {
		if g := poisson(&c.throttle, 1e6/100); i > 0 {
			got = append(got, strconv.FormatInt(g, 10))
		}
	}
	if s := strings.Join(got, ","); s != "518,10920,186,8818,219,5404,670" {
		t.Errorf("gaps %s, pgbench 518,10920,186,8818,219,5404,670", s)
	}
}
