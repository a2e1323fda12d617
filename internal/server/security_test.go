package server

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Issue 12 item 9: a managed server trusts no local connection. Its unix socket is in a
// directory only the invoking user (and, when dbperf is root, the server's own user) can
// enter, and TCP on 127.0.0.1 needs the password generated for the instance.

// nobodyCred is the credential of the user nobody, with no supplementary groups; the test
// is skipped when it does not run as root (it cannot become another user then).
func nobodyCred(t *testing.T) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot run a process as another user")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
}

// nobodyCanEnter says whether a process running as nobody can cd into dir.
func nobodyCanEnter(t *testing.T, dir string) bool {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `cd "$1"`, "sh", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: nobodyCred(t)}
	return cmd.Run() == nil
}

// checkPrivateDir checks that dir is 0700 and, as root, that nobody cannot enter it while
// it can enter dir's parent (so the refusal is dir's own).
func checkPrivateDir(t *testing.T, dir string) {
	t.Helper()
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("%s has mode %v, want 0700", dir, st.Mode().Perm())
	}
	if os.Geteuid() != 0 {
		return
	}
	if !nobodyCanEnter(t, filepath.Dir(dir)) {
		t.Fatalf("nobody cannot enter %s: the test cannot tell whether %s is private", filepath.Dir(dir), dir)
	}
	if nobodyCanEnter(t, dir) {
		t.Errorf("a process running as nobody can enter the socket directory %s", dir)
	}
}

// checkNoPassword fails when a file under dir (the instance dir: config, log, data) holds
// the password in clear.
func checkNoPassword(t *testing.T, dir, password string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(password)) {
			t.Errorf("%s holds the password in clear", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// pgAuthFailed says whether err is PostgreSQL's "password authentication failed".
func pgAuthFailed(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "28P01"
}

func TestPostgresNeedsThePassword(t *testing.T) {
	needDebianPostgres(t)
	in := startPG(t, Options{WorkDir: workDir(t)})
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
		"tcp, no password":    strings.Replace(in.DSN, ":"+in.password+"@", "@", 1),
		"tcp, wrong password": strings.Replace(in.DSN, in.password, "wrong", 1),
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
	checkPrivateDir(t, in.Dir)
	if os.Geteuid() == 0 {
		var st syscall.Stat_t
		if err := syscall.Stat(in.Dir, &st); err != nil {
			t.Fatal(err)
		}
		if st.Uid == 0 {
			t.Errorf("instance dir %s belongs to root: the server's own user could not reach its socket", in.Dir)
		}
	}
	checkNoPassword(t, in.Dir, in.password)
}

// mysqlDenied says whether err is MariaDB's "Access denied".
func mysqlDenied(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1045
}

func TestMariaDBNeedsThePassword(t *testing.T) {
	needMariaDB(t)
	in := startMariaDB(t, Options{WorkDir: workDir(t)})
	db := mariadbDB(t, in)
	// No account that logs in without a password: root everywhere has the instance's,
	// anonymous accounts are gone (mariadb.sys is locked).
	rows, err := db.Query(`SELECT CONCAT(User, '@', Host) FROM mysql.global_priv
		WHERE IFNULL(JSON_VALUE(Priv, '$.authentication_string'), '') = ''
		AND IFNULL(JSON_VALUE(Priv, '$.account_locked'), 'false') NOT IN ('true', '1')
		AND IFNULL(JSON_VALUE(Priv, '$.is_role'), 'false') NOT IN ('true', '1')`)
	if err != nil {
		t.Fatal(err)
	}
	var open []string
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			t.Fatal(err)
		}
		open = append(open, a)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(open) > 0 {
		t.Errorf("accounts without a password: %v", open)
	}
	tcp := mysql.NewConfig()
	tcp.Net, tcp.Addr, tcp.DBName = "tcp", "127.0.0.1:"+strconv.Itoa(in.Port), "ib"
	sock := mysql.NewConfig()
	sock.Net, sock.Addr, sock.DBName = "unix", in.Socket, "ib"
	for _, tc := range []struct {
		name, user, pass string
		cfg              *mysql.Config
		ok               bool
	}{
		{"tcp root, the password", "root", in.password, tcp, true},
		{"tcp root, no password", "root", "", tcp, false},
		{"tcp root, wrong password", "root", "wrong", tcp, false},
		{"tcp anonymous", "", "", tcp, false},
		{"tcp any user", "nobody", "", tcp, false},
		{"socket root, no password", "root", "", sock, false},
	} {
		cfg := *tc.cfg
		cfg.User, cfg.Passwd = tc.user, tc.pass
		c, err := mysql.NewConnector(&cfg)
		if err != nil {
			t.Fatal(err)
		}
		db := sql.OpenDB(c)
		err = db.Ping()
		db.Close()
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !tc.ok && err == nil:
			t.Errorf("%s: connected", tc.name)
		case !tc.ok && !mysqlDenied(err):
			t.Errorf("%s: %v, want Access denied (1045)", tc.name, err)
		}
	}
	if in.TCPDSN() != "mysql://root:"+in.password+"@tcp(127.0.0.1:"+strconv.Itoa(in.Port)+")/ib" {
		t.Errorf("TCPDSN = %q", in.TCPDSN())
	}
	checkPrivateDir(t, in.Dir)
	if filepath.Dir(in.Socket) != in.Dir {
		t.Errorf("socket %s is not in the instance dir %s", in.Socket, in.Dir)
	}
	checkNoPassword(t, in.Dir, in.password)
}
