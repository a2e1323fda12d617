package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/server"
)

// testDSN reaches the managed server TestMain starts ("" when none could be: no binaries).
var testDSN string

// TestMain starts one throwaway PostgreSQL server (internal/server) for the package.
func TestMain(m *testing.M) {
	os.Exit(runWithServer(m))
}

func runWithServer(m *testing.M) int {
	if bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres"); len(bins) == 0 {
		return m.Run() // every server test skips
	}
	work, err := os.MkdirTemp("", "dbperf-pg-engine-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(work)
	_ = os.Chmod(work, 0o755) // reachable by the server's user when the tests run as root
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	in, err := server.StartPostgres(ctx, server.Options{WorkDir: work, ProfilesDir: "../../../profiles"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start postgres:", err)
		return 1
	}
	defer in.Stop(context.Background())
	testDSN = in.DSN
	return m.Run()
}

func open(t *testing.T) engine.Handle {
	t.Helper()
	if testDSN == "" {
		t.Skip("no PostgreSQL binaries installed (/usr/lib/postgresql/*/bin/postgres): apt-get install postgresql")
	}
	h, err := New().Open(context.Background(), engine.Target{DSN: testDSN})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	return h
}

func newSession(t *testing.T, h engine.Handle) engine.Session {
	t.Helper()
	s, err := h.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func mustExec(t *testing.T, s engine.Session, q string, args ...any) int64 {
	t.Helper()
	n, err := s.Exec(context.Background(), q, args...)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func prepare(t *testing.T, s engine.Session, q string) engine.Stmt {
	t.Helper()
	st, err := s.Prepare(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func queryInt(t *testing.T, s engine.Session, q string, args ...any) (int64, bool) {
	t.Helper()
	st := prepare(t, s, q)
	defer st.Close()
	v, ok, err := st.QueryInt(context.Background(), engine.NewArgs(args...))
	if err != nil {
		t.Fatal(err)
	}
	return v, ok
}

func queryString(t *testing.T, s engine.Session, q string) string {
	t.Helper()
	var v string
	if err := s.(*session).conn.QueryRow(context.Background(), q).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPostgresMeta(t *testing.T) {
	if m := New().Meta(); m != (engine.Meta{Name: "postgres", Kind: engine.KindSQL}) {
		t.Fatalf("Meta() = %+v", m)
	}
}

func TestPostgresOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := New().Open(ctx, engine.Target{}); err == nil {
		t.Error("Open without a DSN succeeded")
	}
	_, err := New().Open(ctx, engine.Target{DSN: "postgres://bob:hunter2@127.0.0.1:1/ib?sslmode=disable&connect_timeout=2"})
	if err == nil || !strings.Contains(err.Error(), "cannot connect to bob@127.0.0.1:1/ib") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("unreachable server: %v", err)
	}
	if _, err := New().Open(ctx, engine.Target{DSN: "postgres://bob:hunter2@127.0.0.1:notaport/ib"}); err == nil ||
		strings.Contains(err.Error(), "hunter2") {
		t.Errorf("invalid DSN: %v", err)
	}
}

func TestPostgresDialectSQL(t *testing.T) {
	d := Dialect{}
	idx := []engine.Index{
		{Name: "pi1_marketsegment", Columns: []string{"productid", "customerid", "price"}},
		{Name: "pi1_pdc", Columns: []string{"price", "dateandtime", "customerid"}},
	}
	from, ok := d.FromIndex("pi1", "pi1_pdc")
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"Name", []string{d.Name()}, []string{"postgres"}},
		{"Placeholder", []string{d.Placeholder(1), d.Placeholder(12)}, []string{"$1", "$12"}},
		{"AutoIncrementPK", []string{d.AutoIncrementPK()}, []string{"bigserial PRIMARY KEY"}},
		{"DateTimeType", []string{d.DateTimeType()}, []string{"timestamp without time zone"}},
		{
			"CreateTable",
			d.CreateTable("pi1", []string{"transactionid bigserial PRIMARY KEY", "price int NOT NULL"}),
			[]string{
				"CREATE TABLE pi1 (transactionid bigserial PRIMARY KEY, price int NOT NULL)",
				"ALTER SEQUENCE pi1_transactionid_seq CACHE 1000",
			},
		},
		{
			"CreateTable without serial key",
			d.CreateTable("t", []string{"id int PRIMARY KEY"}),
			[]string{"CREATE TABLE t (id int PRIMARY KEY)"},
		},
		{"DropTable", []string{d.DropTable("pi1")}, []string{"DROP TABLE IF EXISTS pi1"}},
		{
			"CreateIndexes", d.CreateIndexes("pi1", idx),
			[]string{
				"CREATE INDEX pi1_marketsegment ON pi1 (productid, customerid, price)",
				"CREATE INDEX pi1_pdc ON pi1 (price, dateandtime, customerid)",
			},
		},
		{"CreateIndexes none", d.CreateIndexes("pi1", nil), []string{}},
		{"FromIndex", []string{from}, []string{""}},
	}
	for _, tc := range tests {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, tc.got, tc.want)
		}
	}
	if ok {
		t.Error("FromIndex ok = true: Postgres has no index hints")
	}
	if !d.AutoIncrementGaps() {
		t.Error("AutoIncrementGaps = false")
	}
	for _, s := range Settings() {
		if s.Why == "" {
			t.Errorf("setting %s has no explanation", s.Name)
		}
	}
}

// Every session is its own connection (backend) with the settings in effect.
func TestPostgresSettingsOnEverySession(t *testing.T) {
	h := open(t)
	ctx := context.Background()
	pids := map[int]bool{}
	for i := range 2 {
		s := newSession(t, h)
		for _, st := range Settings() {
			if got := queryString(t, s, "SHOW "+st.Name); got != st.Value {
				t.Errorf("session %d: %s = %q, want %q", i, st.Name, got, st.Value)
			}
		}
		pid, err := h.(*handle).SessionPID(s)
		if err != nil {
			t.Fatal(err)
		}
		if want, err := s.(*session).backendPID(ctx); err != nil || pid != want || pid <= 0 {
			t.Errorf("SessionPID = %d, pg_backend_pid() = %d, %v", pid, want, err)
		}
		pids[pid] = true
	}
	if len(pids) != 2 {
		t.Errorf("two sessions share a backend: %v", pids)
	}
}

func TestPostgresStmtExecQueryAndQueryInt(t *testing.T) {
	h := open(t)
	s := newSession(t, h)
	ctx := context.Background()
	mustExec(t, s, "DROP TABLE IF EXISTS tq")
	mustExec(t, s, "CREATE TABLE tq (id bigserial PRIMARY KEY, a int, b text)")
	ins := prepare(t, s, "INSERT INTO tq (a, b) VALUES ($1, $2), ($3, $4), ($5, $6)")
	if n, err := ins.Exec(ctx, engine.NewArgs(1, "x", 2, nil, 3, "zzz")); err != nil || n != 3 {
		t.Fatalf("insert: %d, %v", n, err)
	}
	if n := mustExec(t, s, "UPDATE tq SET b = $1 WHERE a >= $2", "y", 2); n != 2 {
		t.Errorf("session Exec with arguments: %d rows", n)
	}
	q := prepare(t, s, "SELECT id, a, b FROM tq WHERE a >= $1 ORDER BY a")
	for _, tc := range []struct{ from, want int64 }{{1, 3}, {2, 2}, {4, 0}, {1, 3}} {
		n, err := q.Query(ctx, engine.NewArgs(tc.from))
		if err != nil {
			t.Fatal(err)
		}
		if n != tc.want {
			t.Errorf("Query(%d) = %d rows, want %d", tc.from, n, tc.want)
		}
	}
	if v, ok := queryInt(t, s, "SELECT max(a) FROM tq"); !ok || v != 3 {
		t.Errorf("max(int) = %d, %v", v, ok)
	}
	if v, ok := queryInt(t, s, "SELECT count(*) FROM tq WHERE a > $1", 1); !ok || v != 2 {
		t.Errorf("count = %d, %v", v, ok)
	}
	if _, ok := queryInt(t, s, "SELECT min(a) FROM tq WHERE a > 100"); ok {
		t.Error("min over no rows is valid")
	}
	if _, ok := queryInt(t, s, "SELECT a FROM tq WHERE a > 100"); ok {
		t.Error("no row is valid")
	}
	if _, err := q.Query(ctx, engine.NewArgs("x")); err == nil {
		t.Error("Query with a wrong argument succeeded")
	}
	// The session survives a failed statement.
	if n, err := q.Query(ctx, engine.NewArgs(2)); err != nil || n != 2 {
		t.Errorf("Query after an error: %d, %v", n, err)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// The workload binds dateandtime as a string ('2026-01-01 00:00:00'): pgx sends strings in
// text format and the server parses them as the prepared statement's timestamp parameter.
func TestPostgresTimestampBinding(t *testing.T) {
	h := open(t)
	s := newSession(t, h)
	ctx := context.Background()
	d := h.Dialect()
	mustExec(t, s, "DROP TABLE IF EXISTS tts")
	mustExec(t, s, "CREATE TABLE tts (k int, at "+d.DateTimeType()+")")
	ins := prepare(t, s, "INSERT INTO tts (k, at) VALUES ($1, $2), ($3, $4)")
	if _, err := ins.Exec(ctx, engine.NewArgs(1, "2026-01-01 00:00:00", 2, "2026-01-02 03:04:05")); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, s, "SELECT string_agg(at::text, ',' ORDER BY k) FROM tts"); got != "2026-01-01 00:00:00,2026-01-02 03:04:05" {
		t.Errorf("stored %q", got)
	}
	q := prepare(t, s, "SELECT k FROM tts WHERE at >= $1")
	if n, err := q.Query(ctx, engine.NewArgs("2026-01-02 00:00:00")); err != nil || n != 1 {
		t.Errorf("timestamp comparison: %d, %v", n, err)
	}
}

// The dialect's statements run on the server: the reference's table with its sequence
// cache, and the three indexes.
func TestPostgresDialectExecuted(t *testing.T) {
	h := open(t)
	s := newSession(t, h)
	ctx := context.Background()
	d := h.Dialect()
	cols := []string{
		"transactionid " + d.AutoIncrementPK(), "dateandtime " + d.DateTimeType(),
		"cashregisterid int NOT NULL", "customerid int NOT NULL", "productid int NOT NULL",
		"price int NOT NULL", "data varchar(4000)",
	}
	mustExec(t, s, d.DropTable("pi9"))
	for _, q := range d.CreateTable("pi9", cols) {
		mustExec(t, s, q)
	}
	if v, _ := queryInt(t, s, "SELECT cache_size FROM pg_sequences WHERE sequencename = 'pi9_transactionid_seq'"); v != 1000 {
		t.Errorf("sequence cache = %d, want 1000", v)
	}
	idx := []engine.Index{
		{Name: "pi9_marketsegment", Columns: []string{"productid", "customerid", "price"}},
		{Name: "pi9_registersegment", Columns: []string{"cashregisterid", "customerid", "price"}},
		{Name: "pi9_pdc", Columns: []string{"price", "dateandtime", "customerid"}},
	}
	for _, q := range d.CreateIndexes("pi9", idx) {
		mustExec(t, s, q)
	}
	if v, _ := queryInt(t, s, "SELECT count(*) FROM pg_indexes WHERE tablename = 'pi9'"); v != 4 {
		t.Errorf("%d indexes on pi9, want 4 (pkey + 3)", v)
	}

	var b strings.Builder
	b.WriteString("INSERT INTO pi9 (dateandtime,cashregisterid,customerid,productid,price,data) VALUES ")
	const rows = 20
	args := make([]any, 0, rows*6)
	for r := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for c := range 6 {
			if c > 0 {
				b.WriteByte(',')
			}
			b.WriteString(d.Placeholder(r*6 + c + 1))
		}
		b.WriteByte(')')
		args = append(args, "2026-01-01 00:00:00", r%1000, r, r%10000, r%500, "aaaa"+strconv.Itoa(r))
	}
	ins := prepare(t, s, b.String())
	if n, err := ins.Exec(ctx, engine.NewArgs(args...)); err != nil || n != rows {
		t.Fatalf("insert: %d, %v", n, err)
	}

	if v, _ := queryInt(t, s, "SELECT count(*) FROM pi9"); v != rows {
		t.Errorf("count = %d, want %d", v, rows)
	}
	// A new session takes a new block of the sequence cache: the gap AutoIncrementGaps allows.
	s2 := newSession(t, h)
	mustExec(t, s2, "INSERT INTO pi9 (dateandtime,cashregisterid,customerid,productid,price,data) VALUES ($1, 1, 1, 1, 1, 'x')", "2026-01-01 00:00:01")
	if v, _ := queryInt(t, s, "SELECT max(transactionid) FROM pi9"); v != 1001 {
		t.Errorf("a second session's first id = %d, want 1001 (next cache block)", v)
	}
}

func TestPostgresInfoAndSize(t *testing.T) {
	h := open(t)
	ctx := context.Background()
	info, err := h.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Version == "" || info.Version[0] < '1' || info.Version[0] > '9' {
		t.Errorf("Version = %q", info.Version)
	}
	want := map[string]string{"shared_buffers": "16384", "listen_addresses": "127.0.0.1", "driver": "jackc/pgx/v5"}
	for k, v := range want {
		if info.Settings[k] != v {
			t.Errorf("Settings[%s] = %q, want %q", k, info.Settings[k], v)
		}
	}
	num, err := strconv.Atoi(info.Settings["server_version_num"])
	if err != nil || num < 100000 || !strings.HasPrefix(info.Version, strconv.Itoa(num/10000)+".") {
		t.Errorf("server_version_num = %q for version %q", info.Settings["server_version_num"], info.Version)
	}
	if len(info.Settings) < 200 {
		t.Errorf("only %d settings: want all of pg_settings", len(info.Settings))
	}
	if info.DataDir == "" || !strings.HasSuffix(info.DataDir, "/data") {
		t.Errorf("DataDir = %q", info.DataDir)
	}
	size, err := h.Size(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if size < 1<<20 {
		t.Errorf("Size = %d", size)
	}
}

func TestPostgresReduceDebt(t *testing.T) {
	h := open(t)
	s := newSession(t, h)
	for _, tb := range []string{"tv1", "tv2"} {
		mustExec(t, s, "DROP TABLE IF EXISTS "+tb)
		mustExec(t, s, "CREATE TABLE "+tb+" (id int PRIMARY KEY, v text)")
		mustExec(t, s, "INSERT INTO "+tb+" SELECT g, 'x' FROM generate_series(1, 1000) g")
		mustExec(t, s, "DELETE FROM "+tb+" WHERE id <= 500")
	}
	detail, err := h.(engine.Maintainer).ReduceDebt(context.Background(), []string{"tv1", "tv2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"VACUUM (ANALYZE, INDEX_CLEANUP ON) tv1 in ", "; VACUUM (ANALYZE, INDEX_CLEANUP ON) tv2 in ",
		"; all VACUUMs in ", "; CHECKPOINT in ",
	} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail %q lacks %q", detail, want)
		}
	}
	if v, _ := queryInt(t, s, "SELECT count(*) FROM pg_stat_user_tables WHERE relname IN ('tv1', 'tv2') "+
		"AND last_vacuum IS NOT NULL AND last_analyze IS NOT NULL"); v != 2 {
		t.Errorf("%d tables vacuumed and analyzed, want 2", v)
	}
	if _, err := h.(engine.Maintainer).ReduceDebt(context.Background(), []string{"nosuch"}); err == nil ||
		!strings.Contains(err.Error(), "VACUUM (ANALYZE, INDEX_CLEANUP ON) nosuch") {
		t.Errorf("vacuum of a missing table: %v", err)
	}
}

// A prepared statement interrupted by its context (a step ending on Ctrl-C) returns at
// once: the session's watcher shuts the socket down and sends a cancel request. The
// context is watched once per session, not per call: statements that ran under it before
// finish normally. Closing the statement and the session afterwards is not an error, and
// the server is not left running the statement.
func TestPostgresCancelledStatement(t *testing.T) {
	h := open(t)
	s, err := h.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st := prepare(t, s, "SELECT pg_sleep($1)")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if n, err := st.Query(ctx, engine.NewArgs(0)); err != nil || n != 1 {
		t.Fatalf("a statement under the live context: %d rows, %v", n, err)
	}
	start := time.Now()
	if _, err := st.Query(ctx, engine.NewArgs(30)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("30 s sleep past its context's deadline: %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %s", d)
	}
	if err := st.Close(); err != nil {
		t.Errorf("stmt Close after cancel: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("session Close after cancel: %v", err)
	}
	other := newSession(t, h)
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, _ := queryInt(t, other, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%' AND state = 'active'")
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server still runs the cancelled statement (%d sessions)", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPostgresLocal: only unix sockets and loopback addresses are this machine's server.
func TestPostgresLocal(t *testing.T) {
	for dsn, want := range map[string]bool{
		"postgres://u@127.0.0.1:5432/ib":            true,
		"postgres://u@localhost/ib":                 true,
		"postgres://u@[::1]:5432/ib":                true,
		"host=/var/run/postgresql dbname=ib user=u": true,
		"postgres://u@10.0.0.7:5432/ib":             false,
		"postgres://u@db1.example.com/ib":           false,
	} {
		cfg, err := connConfig(dsn)
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		if got := (&handle{cfg: cfg}).Local(); got != want {
			t.Errorf("Local(%s) = %v, want %v", dsn, got, want)
		}
	}
}
