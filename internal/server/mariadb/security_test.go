package mariadb

import (
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/servertest"

	"github.com/go-sql-driver/mysql"
)

// Issue 12 item 9: a managed server trusts no local connection. Its unix socket is in a
// directory only the invoking user (and, when dbperf is root, the server's own user) can
// enter, and TCP on 127.0.0.1 needs the password generated for the instance.

// mysqlDenied says whether err is MariaDB's "Access denied".
func mysqlDenied(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1045
}

func TestMariaDBNeedsThePassword(t *testing.T) {
	needMariaDB(t)
	in := startMariaDB(t, server.Options{WorkDir: servertest.WorkDir(t)})
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
		{"tcp root, the password", "root", in.Password(), tcp, true},
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
	if in.TCPDSN != "mysql://root:"+in.Password()+"@tcp(127.0.0.1:"+strconv.Itoa(in.Port)+")/ib" {
		t.Errorf("TCPDSN = %q", in.TCPDSN)
	}
	servertest.CheckPrivateDir(t, in.Dir)
	if filepath.Dir(in.Socket) != in.Dir {
		t.Errorf("socket %s is not in the instance dir %s", in.Socket, in.Dir)
	}
	servertest.CheckNoPassword(t, in.Dir, in.Password())
}
