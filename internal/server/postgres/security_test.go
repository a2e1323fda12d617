package postgres

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/servertest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Issue 12 item 9: a managed server trusts no local connection. Its unix socket is in a
// directory only the invoking user (and, when dbperf is root, the server's own user) can
// enter, and TCP on 127.0.0.1 needs the password generated for the instance.

// pgAuthFailed says whether err is PostgreSQL's "password authentication failed".
func pgAuthFailed(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "28P01"
}

func TestPostgresNeedsThePassword(t *testing.T) {
	needDebianPostgres(t)
	in := startPG(t, server.Options{WorkDir: servertest.WorkDir(t)})
	ctx := context.Background()
	if got := pgShow(t, in.DSN, "password_encryption", "unix_socket_directories"); !slices.Equal(got, []string{"scram-sha-256", in.Dir}) {
		t.Errorf("SHOW password_encryption, unix_socket_directories = %q", got)
	}
	c, err := pgx.Connect(ctx, in.DSN)
	if err != nil {
		t.Fatal(err)
	}
	var verifier string
	if err := c.QueryRow(ctx, "SELECT rolpassword FROM pg_authid WHERE rolname = 'postgres'").Scan(&verifier); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(verifier, "SCRAM-SHA-256$") {
		t.Errorf("the superuser's password is stored as %.14q…, want a SCRAM-SHA-256 verifier", verifier)
	}
	var methods []string
	if err := c.QueryRow(ctx, "SELECT array_agg(DISTINCT auth_method) FROM pg_hba_file_rules").Scan(&methods); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(methods, []string{"scram-sha-256"}) {
		t.Errorf("pg_hba.conf methods = %v, want scram-sha-256 only", methods)
	}
	c.Close(ctx)

	// Without the password, or with a wrong one: refused, over TCP and over the socket.
	for name, dsn := range map[string]string{
		"tcp, no password":    strings.Replace(in.DSN, ":"+in.Password()+"@", "@", 1),
		"tcp, wrong password": strings.Replace(in.DSN, in.Password(), "wrong", 1),
		"socket, no password": "host=" + in.Dir + " port=" + strconv.Itoa(in.Port) + " user=postgres dbname=ib",
	} {
		if dsn == in.DSN {
			t.Fatalf("%s: the DSN did not change", name)
		}
		c, err := pgx.Connect(ctx, dsn)
		if err == nil {
			c.Close(ctx)
			t.Errorf("%s: connected", name)
		} else if !pgAuthFailed(err) {
			t.Errorf("%s: %v, want password authentication failed (28P01)", name, err)
		}
	}
	servertest.CheckPrivateDir(t, in.Dir)
	if os.Geteuid() == 0 {
		var st syscall.Stat_t
		if err := syscall.Stat(in.Dir, &st); err != nil {
			t.Fatal(err)
		}
		if st.Uid == 0 {
			t.Errorf("instance dir %s belongs to root: the server's own user could not reach its socket", in.Dir)
		}
	}
	servertest.CheckNoPassword(t, in.Dir, in.Password())
}
