package insertbench

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
)

// TestOnEveryEngine runs, on every engine (one managed server each), the deleter's
// statement and the audit (auditScenario; SQLite's runs in TestAuditContentOnSQLite).
func TestOnEveryEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts managed servers")
	}
	for _, e := range benchEngines() {
		t.Run(e.name, func(t *testing.T) {
			h := e.open(t).h
			t.Run("delete-sql", func(t *testing.T) { deleteSQLOn(t, h) })
			if e.name != "sqlite" {
				t.Run("audit", func(t *testing.T) { auditScenario(t, h) })
			}
		})
	}
}

// deleteSQLOn runs the deleter's statement (reference §1.5, in the engine's shape): it
// deletes exactly the n lowest keys ≥ its argument, skipping holes, and nothing past the
// highest key.
func deleteSQLOn(t *testing.T, h engine.SQL) {
	ctx := context.Background()
	s, err := h.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := h.Dialect()
	exec := func(q string) {
		t.Helper()
		if _, err := s.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	count := func(q string) int64 {
		t.Helper()
		v, _, err := queryInt(ctx, s, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return v
	}
	exec(d.DropTable("del_q"))
	for _, q := range d.CreateTable("del_q", []string{keyColumn + " " + d.AutoIncrementPK(), "v int NOT NULL"}) {
		exec(q)
	}
	defer exec(d.DropTable("del_q"))
	var b strings.Builder
	b.WriteString("INSERT INTO del_q (v) VALUES ")
	for i := range 20 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(" + strconv.Itoa(i) + ")")
	}
	exec(b.String())
	lo := count("SELECT min(" + keyColumn + ") FROM del_q")
	exec("DELETE FROM del_q WHERE " + keyColumn + " IN (" + strconv.FormatInt(lo+8, 10) + "," + strconv.FormatInt(lo+9, 10) + ")") // a hole

	del, err := s.Prepare(ctx, deleteSQL(d, "del_q", 5))
	if err != nil {
		t.Fatal(err)
	}
	defer del.Close()
	// Keys are lo..lo+19 without lo+8 and lo+9.
	for _, st := range []struct{ from, deleted, min int64 }{
		{0, 5, 5},   // lo..lo+4
		{7, 5, 5},   // lo+7, lo+10..lo+13 (skips the hole); lo+5 and lo+6 stay
		{5, 5, 17},  // lo+5, lo+6, lo+14..lo+16
		{18, 2, 17}, // lo+18, lo+19
		{100, 0, 17},
	} {
		from := st.from
		if from != 0 {
			from += lo
		}
		n, err := del.Exec(ctx, engine.NewArgs(from))
		if err != nil {
			t.Fatal(err)
		}
		if n != st.deleted {
			t.Errorf("delete from lo+%d deleted %d, want %d", st.from, n, st.deleted)
		}
		if v := count("SELECT min(" + keyColumn + ") FROM del_q"); v != lo+st.min {
			t.Errorf("after delete from lo+%d: min = lo+%d, want lo+%d", st.from, v-lo, st.min)
		}
	}
	if v := count("SELECT count(*) FROM del_q"); v != 1 {
		t.Errorf("count = %d, want 1 (lo+17)", v)
	}
}
