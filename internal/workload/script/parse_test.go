package script

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/engine/mariadb"
	"github.com/dbperf/dbperf/internal/engine/postgres"
)

func TestParseSQL(t *testing.T) {
	for _, tc := range []struct {
		script string
		// want is each SQL command as PostgreSQL gets it, with its variables and kind.
		want []string
	}{
		{"SELECT 1;", []string{"query: SELECT 1"}},
		{"select :x::int, '::y', ':z', $$ :w $$, \"a:b\" -- :c\nfrom t where a = :x;\n\\set x 1\n",
			[]string{"query: select $1::int, '::y', ':z', $$ :w $$, \"a:b\" \nfrom t where a = $2 [x x]"}},
		{"UPDATE t\n  SET a = :a\n  WHERE b = :b;", []string{"exec: UPDATE t\n  SET a = $1\n  WHERE b = $2 [a b]"}},
		{"insert into t values (:a) returning id;", []string{"query: insert into t values ($1) returning id [a]"}},
		{"BEGIN; END;", []string{"begin: BEGIN", "end: COMMIT"}},
		{"begin transaction;\ncommit;\nrollback;", []string{"begin: begin transaction", "end: commit", "end: rollback"}},
		{"select abalance from a where aid = :aid \\gset p_\n", []string{"gset: select abalance from a where aid = $1 [aid]"}},
		{"select 1 as one \\gset", []string{"gset: select 1 as one"}},
		{"select E'it\\'s :x'; select 'it''s';", []string{"query: select E'it\\'s :x'", "query: select 'it''s'"}},
		{"create function f() returns int as $f$ begin; return 1; end; $f$ language plpgsql;",
			[]string{"exec: create function f() returns int as $f$ begin; return 1; end; $f$ language plpgsql"}},
		{"select (1;2);", []string{"query: select (1;2)"}}, // ';' inside parentheses does not end it
		{"/* hint */ select 1;", []string{"query: /* hint */ select 1"}},
		{"select a[1:2] from t;", []string{"query: select a[1:2] from t"}},
		{"-- only a comment\n\n  select 1;  \n", []string{"query: select 1"}},
	} {
		vars := newVarTable()
		for _, n := range []string{"x", "a", "b", "aid"} {
			vars.slot(n)
		}
		s, err := Parse("t.sql", tc.script, vars)
		if err != nil {
			t.Errorf("%q: %v", tc.script, err)
			continue
		}
		var got []string
		for _, c := range s.cmds {
			if c.kind != cSQL {
				continue
			}
			k := map[sqlKind]string{sqlExec: "exec", sqlQuery: "query", sqlGset: "gset", sqlBegin: "begin", sqlEnd: "end"}[c.sql]
			g := k + ": " + c.text(postgres.Dialect{})
			if len(c.params) > 0 {
				var names []string
				for _, p := range c.params {
					names = append(names, vars.names[p])
				}
				g += " [" + strings.Join(names, " ") + "]"
			}
			got = append(got, g)
		}
		if strings.Join(got, "\n---\n") != strings.Join(tc.want, "\n---\n") {
			t.Errorf("%q:\n got %q\nwant %q", tc.script, got, tc.want)
		}
	}
}

func TestParsePlaceholders(t *testing.T) {
	vars := newVarTable()
	s, err := Parse("t.sql", "\\set a 1\nselect :a + :a;", vars)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.cmds[1].text(mariadb.Dialect{}); got != "select ? + ?" {
		t.Errorf("mariadb: %q", got)
	}
	if got := s.cmds[1].text(postgres.Dialect{}); got != "select $1 + $2" {
		t.Errorf("postgres: %q", got)
	}
}

func TestParseMeta(t *testing.T) {
	vars := newVarTable()
	s, err := Parse("m.sql", `\set a random(1, 10)
\SET b :a * \
  2
\sleep 10 ms
\sleep :a us
\sleep 1
\if :a > 5
  select 1;
\elif :a > 2
  \if :b = 4
    select 2;
  \endif
\else
  select 3;
\endif
`, vars)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.cmds {
		got = append(got, strings.TrimSpace(strings.Join([]string{
			map[cmdKind]string{cSQL: "sql", cSet: "set", cSleep: "sleep", cIf: "if", cElif: "elif", cElse: "else", cEndif: "endif"}[c.kind],
			itoa(c.line), func() string {
				switch c.kind {
				case cIf, cElif:
					return "next=" + itoa(c.next) + " end=" + itoa(c.end)
				case cElse:
					return "end=" + itoa(c.end)
				case cSleep:
					return c.unit.String() + " " + itoa(int(c.sleepN)) + " slot=" + itoa(c.sleepSlot)
				}
				return ""
			}()}, " ")))
	}
	// kind, line, and the indexes of the commands a branch jumps to.
	want := []string{"set 1", "set 2", "sleep 4 1ms 10 slot=-1", "sleep 5 1µs 0 slot=0", "sleep 6 1s 1 slot=-1",
		"if 7 next=7 end=13", "sql 8", "elif 9 next=11 end=13", "if 10 next=10 end=10", "sql 11", "endif 12",
		"else 13 end=13", "sql 14", "endif 15"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestParseErrors: a bad script is refused with its file and line and what is wrong.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"\\set a 1\n\\foo 1\n", `bad.sql:2: unknown meta-command \foo`},
		{"\\if 1\nselect 1;\n", `bad.sql:1: \if without a matching \endif`},
		{"\\if 1\n\\if 2\n\\endif\n", `bad.sql:1: \if without a matching \endif`},
		{"select 1;\n\\endif\n", `bad.sql:2: \endif without a matching \if`},
		{"\\else\n", `bad.sql:1: \else without a matching \if`},
		{"\\if 1\n\\else\n\\elif 2\n\\endif\n", `bad.sql:3: \elif after \else (line 2)`},
		{"\\if 1\n\\else\n\\else\n\\endif\n", `bad.sql:3: \else after \else`},
		{"\n\nselect :nosuch;\n", `bad.sql:3: undefined variable "nosuch"`},
		{"\\set a :b + 1\n", `bad.sql:1: undefined variable "b"`},
		{"\\setshell x echo 1\n", `bad.sql:1: \setshell is not supported`},
		{"\\shell ls\n", `bad.sql:1: \shell is not supported`},
		{"\\set a\n", `bad.sql:1: \set needs a variable name and an expression`},
		{"\\set 1a 2\n", `bad.sql:1: \set: invalid variable name "1a"`},
		{"\\set a 1 +\n", `bad.sql:1: \set: expression ends too early`},
		{"\\sleep\n", `bad.sql:1: \sleep needs a duration`},
		{"\\sleep 1 min\n", `bad.sql:1: \sleep: unknown unit "min"`},
		{"\\sleep x\n", `bad.sql:1: \sleep: "x" is not a whole number`},
		{"\\if\n\\endif\n", `bad.sql:1: \if needs a condition`},
		{"\\endif 1\n", `bad.sql:1: \endif takes no argument`},
		{"select 1\n", `bad.sql:1: SQL command not terminated by ';'`},
		{"select 'x;\n", `bad.sql:1: unterminated quoted string`},
		{"select 1 \\; select 2;\n", `bad.sql:1: \; (several statements in one command) is not supported`},
		{"select 1 \\aset\n", `bad.sql:1: \aset is not supported`},
		{"\\gset\n", `bad.sql:1: \gset must end a SQL command`},
		{"\\startpipeline\n", `bad.sql:1: \startpipeline without a matching \endpipeline`},
		{"\\startpipeline\nselect 1;\n\\startpipeline\n", `bad.sql:3: \startpipeline inside a pipeline (\startpipeline at line 1)`},
		{"select 1;\n\\endpipeline\n", `bad.sql:2: \endpipeline without a \startpipeline`},
		{"\\syncpipeline\n", `bad.sql:1: \syncpipeline without a \startpipeline`},
		{"\\startpipeline\nselect 1 as one \\gset\n\\endpipeline\n", `bad.sql:2: \gset inside a pipeline (\startpipeline at line 1)`},
		{"\\startpipeline\n\\sleep 1\n\\endpipeline\n", `bad.sql:2: \sleep inside a pipeline`},
		{"\\if 1\n\\startpipeline\n\\endpipeline\n\\endif\n", `bad.sql:2: \startpipeline inside \if`},
		{"\\startpipeline 2\n", `bad.sql:1: \startpipeline takes no argument`},
		{";\n", `bad.sql:1: empty SQL command`},
		{"", `bad.sql:1: the script has no commands`},
		{"-- nothing\n", `bad.sql:1: the script has no commands`},
	} {
		vars := newVarTable()
		s, err := Parse("bad.sql", tc.script, vars)
		if err == nil {
			_, err = compile([]*Script{s}, vars, nil)
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.script, err, tc.want)
		}
	}
}

// TestGsetDefines: a variable a \gset may set (by its prefix) is not refused before the
// run, since the query's columns are known only then.
func TestGsetDefines(t *testing.T) {
	vars := newVarTable()
	s, err := Parse("g.sql", "select 1 as one \\gset p_\nselect :p_one;\n", vars)
	if err == nil {
		_, err = compile([]*Script{s}, vars, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestSplitWeight(t *testing.T) {
	for in, want := range map[string]string{"a.sql": "a.sql 1", "a.sql@3": "a.sql 3", "x@y.sql@0": "x@y.sql 0"} {
		n, w, err := splitWeight(in)
		if err != nil || n+" "+itoa(w) != want {
			t.Errorf("%q: %s %d %v", in, n, w, err)
		}
	}
	for _, in := range []string{"a.sql@", "a.sql@x", "a.sql@-1", "a.sql@1.5"} {
		if _, _, err := splitWeight(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	for in, want := range map[string]string{"tpcb-like": "tpcb-like", "select": "select-only", "si": "simple-update"} {
		if full, _, ok := builtin(in); !ok || full != want {
			t.Errorf("builtin %q: %q %v", in, full, ok)
		}
	}
	if _, _, ok := builtin("s"); ok {
		t.Error("builtin s: ambiguous, accepted")
	}
}
