package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRedactDSN: every form of a DSN's password is masked, and nothing else changes.
func TestRedactDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://bench:s3cret@127.0.0.1:5432/ib?sslmode=disable":         "postgres://bench:xxxxx@127.0.0.1:5432/ib?sslmode=disable",
		"postgres://postgres@127.0.0.1:5432/ib":                             "postgres://postgres@127.0.0.1:5432/ib",
		"postgres://127.0.0.1:5432/ib":                                      "postgres://127.0.0.1:5432/ib",
		"mysql://root:p@ss:w0rd@tcp(127.0.0.1:3306)/ib":                     "mysql://root:xxxxx@tcp(127.0.0.1:3306)/ib",
		"mysql://root:pw@unix(/tmp/m.sock)/ib":                              "mysql://root:xxxxx@unix(/tmp/m.sock)/ib",
		"mysql://root@unix(/tmp/m.sock)/ib":                                 "mysql://root@unix(/tmp/m.sock)/ib",
		"root:hunter2@tcp(127.0.0.1:3306)/ib?parseTime=true":                "root:xxxxx@tcp(127.0.0.1:3306)/ib?parseTime=true",
		"host=127.0.0.1 user=x password=hunter2 dbname=ib":                  "host=127.0.0.1 user=x password=xxxxx dbname=ib",
		"host=h password='a b c' dbname=ib":                                 "host=h password=xxxxx dbname=ib",
		`host=h password='it\'s b' dbname=ib`:                               "host=h password=xxxxx dbname=ib",
		"host=h password = SECRET dbname=ib":                                "host=h password = xxxxx dbname=ib",
		"host=h sslpassword=SECRET application_name='a b'password=SECRET2":  "host=h sslpassword=xxxxx application_name='a b'password=xxxxx",
		`host=h password=a\ b dbname=ib`:                                    "host=h password=xxxxx dbname=ib",
		"postgres://u@h/ib?password=abc&sslmode=disable":                    "postgres://u@h/ib?password=xxxxx&sslmode=disable",
		"postgres://host/db?user=u&password=SECRET":                         "postgres://host/db?user=u&password=xxxxx",
		"postgres://host/db?user=u&sslpassword=SECRET&sslmode=require":      "postgres://host/db?user=u&sslpassword=xxxxx&sslmode=require",
		"postgresql://host/db?PASSWORD=SECRET":                              "postgresql://host/db?PASSWORD=xxxxx",
		"postgres://host/db?pass%77ord=SECRET":                              "postgres://host/db?pass%77ord=xxxxx",
		"postgres://u:pw@host:5432/db?application_name=a@b&password=SECRET": "postgres://u:xxxxx@host:5432/db?application_name=a@b&password=xxxxx",
		"postgres://host:5432/db?application_name=a@b":                      "postgres://host:5432/db?application_name=a@b",
		"postgres://u:pa/ss@host/db":                                        "postgres://u:xxxxx@host/db",
		"postgres://u:pa?ss@host/db":                                        "postgres://u:xxxxx@host/db",
		"./dbperf-results.db":                                               "./dbperf-results.db",
		"/data/team@work/results.db":                                        "/data/team@work/results.db",
	} {
		if got := RedactDSN(in); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRedactText: a message quoting a DSN, whole or its password alone (percent-decoded
// or unquoted as a driver would), shows none of it; a password too short to mask
// withholds the message.
func TestRedactText(t *testing.T) {
	for _, c := range []struct{ dsn, text, secret string }{
		{"postgres://h/db?password=S%40CRET&sslmode=bogus", `cannot parse "postgres://h/db?password=S%40CRET&sslmode=bogus": bad`, "S%40CRET"},
		{"postgres://h/db?password=S%40CRET", "authentication with S@CRET failed", "S@CRET"},
		{"host=h password='two words'", "password two words rejected", "two words"},
		{"postgres://u:hunter2@h/db", `parse "postgres://u:hunter2@h/db": invalid port`, "hunter2"},
	} {
		got := RedactText(c.text, c.dsn)
		if strings.Contains(got, c.secret) || !strings.Contains(got, "xxxxx") {
			t.Errorf("RedactText(%q, %q) = %q", c.text, c.dsn, got)
		}
	}
	if got := RedactText("user a failed", "postgres://u:a@h/db"); strings.Contains(got, " a ") || !strings.Contains(got, "withheld") {
		t.Errorf("a one-letter password: %q", got)
	}
	if got := RedactText("no password here", "postgres://u@h/db"); got != "no password here" {
		t.Errorf("a DSN without a password changed the message: %q", got)
	}
	if got := dsnSecrets("postgres://u:p1pass@h/db?sslpassword=k3y%21"); !slices.Equal(got, []string{"p1pass", "k3y%21", "k3y!"}) {
		t.Errorf("dsnSecrets = %q", got)
	}
	inner := errors.New("x")
	if err := RedactError(errorsJoin(inner, "postgres://u:hunter2@h/db"), "postgres://u:hunter2@h/db"); !errors.Is(err, inner) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("RedactError: %v (wraps the original: %v)", err, errors.Is(err, inner))
	}
}

func errorsJoin(err error, msg string) error { return errors.Join(errors.New(msg), err) }

// TestPostgresStoreErrorsHideThePassword: a PostgreSQL store that cannot be reached is
// named without its password in every form (issue 23: a password in the query string
// was printed by `runs`, `report` and `serve`).
func TestPostgresStoreErrorsHideThePassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, dsn := range []string{
		"postgres://127.0.0.1:1/db?user=u&password=SECRETPW&connect_timeout=5",
		"postgres://u:SECRETPW@127.0.0.1:1/db?connect_timeout=5",
		"postgres://127.0.0.1:1/db?user=u&sslpassword=SECRETPW&sslmode=disable&connect_timeout=5",
		"postgres://127.0.0.1:1/db?user=u&password=SECRETPW&sslmode=bogus",
	} {
		for name, open := range map[string]func(context.Context, string) (*Store, error){"Open": Open, "OpenExisting": OpenExisting} {
			s, err := open(ctx, dsn)
			if err == nil {
				s.Close()
				t.Fatalf("%s(%s): no error", name, dsn)
			}
			if strings.Contains(err.Error(), "SECRETPW") || !strings.Contains(err.Error(), "127.0.0.1:1/db") {
				t.Errorf("%s(%s): %v", name, dsn, err)
			}
		}
	}
}
