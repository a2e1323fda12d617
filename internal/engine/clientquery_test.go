package engine

import (
	"strings"
	"testing"
)

// Client-side statements render their arguments as literals in place of the placeholders,
// quoted for the engine, skipping placeholder characters inside quotes.
func TestClientQueryRender(t *testing.T) {
	args := NewArgs(int64(-42), "it's a \\ test", nil, 7)
	for _, tc := range []struct {
		query     string
		dollar    bool
		backslash bool
		args      *Args
		want      string
	}{
		{"SELECT c FROM t WHERE id=? AND c=? AND k IS ? OR k=?", false, false, args,
			`SELECT c FROM t WHERE id=-42 AND c='it''s a \ test' AND k IS NULL OR k=7`},
		{"SELECT c FROM t WHERE id=? AND c=? AND k IS ? OR k=?", false, true, args,
			`SELECT c FROM t WHERE id=-42 AND c='it''s a \\ test' AND k IS NULL OR k=7`},
		{"SELECT '?', \"a?\", `b?` FROM t WHERE k IN ($4,$1) AND c=$2 AND x IS $3", true, false, args,
			"SELECT '?', \"a?\", `b?` FROM t WHERE k IN (7,-42) AND c='it''s a \\ test' AND x IS NULL"},
		{"SELECT 1 WHERE 'a?' = ?", false, false, NewArgs(1), "SELECT 1 WHERE 'a?' = 1"},
		{"BEGIN", false, false, nil, "BEGIN"},
		{"SELECT $1, $1", true, false, NewArgs(3), "SELECT 3, 3"},
	} {
		q, err := ParseClientQuery(tc.query, tc.dollar)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		got, err := q.Render(nil, tc.args, tc.backslash)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", tc.query, got, err, tc.want)
		}
	}
	q, _ := ParseClientQuery("SELECT ?, ?", false)
	if _, err := q.Render(nil, NewArgs(1), false); err == nil || !strings.Contains(err.Error(), "1 arguments for 2 parameters") {
		t.Errorf("too few arguments: %v", err)
	}
	if _, err := ParseClientQuery("SELECT 'open", false); err == nil {
		t.Error("an unterminated literal was accepted")
	}
	buf := make([]byte, 0, 256)
	a := NewArgs(1, strings.Repeat("5", 119))
	q, _ = ParseClientQuery("UPDATE t SET c=? WHERE id=?", false)
	if n := testing.AllocsPerRun(100, func() { buf, _ = q.Render(buf[:0], a, true) }); n != 0 {
		t.Errorf("Render allocates %v times", n)
	}
}
