package cli

import "testing"

func TestRedactDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://bench:s3cret@127.0.0.1:5432/ib?sslmode=disable": "postgres://bench:xxxxx@127.0.0.1:5432/ib?sslmode=disable",
		"postgres://postgres@127.0.0.1:5432/ib":                     "postgres://postgres@127.0.0.1:5432/ib",
		"mysql://root:p@ss:w0rd@tcp(127.0.0.1:3306)/ib":             "mysql://root:xxxxx@tcp(127.0.0.1:3306)/ib",
		"mysql://root@unix(/tmp/m.sock)/ib":                         "mysql://root@unix(/tmp/m.sock)/ib",
		"host=127.0.0.1 user=x password=hunter2 dbname=ib":          "host=127.0.0.1 user=x password=xxxxx dbname=ib",
		"host=h password='a b c' dbname=ib":                         "host=h password=xxxxx dbname=ib",
		"postgres://u@h/ib?password=abc&sslmode=disable":            "postgres://u@h/ib?password=xxxxx&sslmode=disable",
		"postgres://host/db?user=u&password=SECRET":                 "postgres://host/db?user=u&password=xxxxx",
		"postgres://host/db?user=u&sslpassword=SECRET":              "postgres://host/db?user=u&sslpassword=xxxxx",
		"host=h user=u sslpassword=SECRET password = SECRET2":       "host=h user=u sslpassword=xxxxx password = xxxxx",
	} {
		if got := RedactDSN(in); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}
