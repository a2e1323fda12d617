package postgres

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/servertest"

	"github.com/jackc/pgx/v5"
)

// pgLayout is table t's physical layout on the server at dsn: each row's ctid and id, in
// ctid order, and the table's relfilenode.
func pgLayout(t *testing.T, dsn string) (rows string, filenode int64) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if err := c.QueryRow(ctx, "SELECT string_agg(ctid::text || '=' || id, ',' ORDER BY ctid), pg_relation_filenode('t')::int8 FROM t").Scan(&rows, &filenode); err != nil {
		t.Fatal(err)
	}
	return rows, filenode
}

// A copy (Options.CopyOf) starts with the source's pages as they are (the same rows at the
// same ctids, dead tuples' holes included, and the same relation file), its own profile,
// port and socket, and the source's password; the source runs on, unchanged.
func TestPostgresCopyOf(t *testing.T) {
	needDebianPostgres(t)
	ctx := context.Background()
	src := startPG(t, server.Options{WorkDir: servertest.WorkDir(t)})
	c, err := pgx.Connect(ctx, src.DSN)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE t (id int PRIMARY KEY, pad text)",
		"INSERT INTO t SELECT g, repeat('x', 100 + g % 50) FROM generate_series(1, 20000) g",
		"DELETE FROM t WHERE id % 7 = 0",
		"INSERT INTO t SELECT g, 'y' FROM generate_series(20001, 21000) g",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	c.Close(ctx)
	wantRows, wantNode := pgLayout(t, src.DSN)

	cp := startPG(t, server.Options{WorkDir: servertest.WorkDir(t), Profile: "cached", CopyOf: src})
	gotRows, gotNode := pgLayout(t, cp.DSN)
	if gotRows != wantRows || gotNode != wantNode {
		t.Errorf("copy's layout differs: relfilenode %d vs %d, rows equal: %v", gotNode, wantNode, gotRows == wantRows)
	}
	if cp.Port == src.Port || cp.Dir == src.Dir || cp.Password() != src.Password() || cp.Profile != "cached" {
		t.Errorf("copy: port %d (source %d), dir %s (source %s), profile %s, same password %v", cp.Port, src.Port, cp.Dir, src.Dir, cp.Profile, cp.Password() == src.Password())
	}
	got := pgShow(t, cp.DSN, "port", "shared_buffers", "unix_socket_directories")
	if want := []string{strconv.Itoa(cp.Port), "4GB", cp.Dir}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("copy's SHOW = %q, want %q", got, want)
	}
	if got := pgShow(t, src.DSN, "shared_buffers"); got[0] != "128MB" {
		t.Errorf("source's shared_buffers = %s after the copy", got[0])
	}
	if !strings.HasPrefix(cp.Version, pgDefaultMajor+".") {
		t.Errorf("copy's version %q", cp.Version)
	}
}

// A stopped source, shut down cleanly, is copied by its files: two copies of it have the
// same layout as the source had, whatever ran on the first copy before the second was
// made; a source whose postmaster.pid is left (not shut down cleanly) is refused.
func TestPostgresCopyOfStopped(t *testing.T) {
	needDebianPostgres(t)
	ctx := context.Background()
	src := startPG(t, server.Options{WorkDir: servertest.WorkDir(t)})
	c, err := pgx.Connect(ctx, src.DSN)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE t (id int PRIMARY KEY, pad text)",
		"INSERT INTO t SELECT g, repeat('x', 100) FROM generate_series(1, 5000) g",
		"DELETE FROM t WHERE id % 5 = 0",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	c.Close(ctx)
	wantRows, wantNode := pgLayout(t, src.DSN)
	if err := src.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	first := startPG(t, server.Options{WorkDir: servertest.WorkDir(t), CopyOf: src})
	// The first copy changes its pages (a vacuum); the second is still the source's.
	if c, err := pgx.Connect(ctx, first.DSN); err != nil {
		t.Fatal(err)
	} else {
		if _, err := c.Exec(ctx, "VACUUM FULL t"); err != nil {
			t.Fatal(err)
		}
		c.Close(ctx)
	}
	second := startPG(t, server.Options{WorkDir: servertest.WorkDir(t), CopyOf: src})
	if rows, node := pgLayout(t, second.DSN); rows != wantRows || node != wantNode || second.Password() != src.Password() {
		t.Errorf("second copy: relfilenode %d vs %d, rows equal %v, same password %v", node, wantNode, rows == wantRows, second.Password() == src.Password())
	}
	if rows, _ := pgLayout(t, first.DSN); rows == wantRows {
		t.Errorf("the first copy's VACUUM FULL left its layout as it was")
	}
	if err := os.WriteFile(filepath.Join(src.DataDir, "postmaster.pid"), []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Start(ctx, server.Options{WorkDir: servertest.WorkDir(t), CopyOf: src})
	if err == nil || !strings.Contains(err.Error(), "did not shut down cleanly") {
		t.Errorf("copy of a server with postmaster.pid left: %v", err)
	}
}
