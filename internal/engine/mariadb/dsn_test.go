package mariadb

import "testing"

func TestMariaDBConfig(t *testing.T) {
	for _, tc := range []struct {
		dsn                           string
		net, addr, user, pass, dbName string
	}{
		{"mysql://root@tcp(127.0.0.1:3307)/ib", "tcp", "127.0.0.1:3307", "root", "", "ib"},
		{"mysql://u:p@ss@tcp(127.0.0.1:3307)/ib?interpolateParams=true", "tcp", "127.0.0.1:3307", "u", "p@ss", "ib"},
		{"mariadb://root@unix(/tmp/x/mysqld.sock)/ib", "unix", "/tmp/x/mysqld.sock", "root", "", "ib"},
		{"mysql://bob:s%40cret@db.example:3310/ib", "tcp", "db.example:3310", "bob", "s@cret", "ib"},
		{"mysql://bob@127.0.0.1/ib?parseTime=true", "tcp", "127.0.0.1:3306", "bob", "", "ib"},
	} {
		cfg, err := config(tc.dsn)
		if err != nil {
			t.Errorf("%s: %v", tc.dsn, err)
			continue
		}
		if cfg.Net != tc.net || cfg.Addr != tc.addr || cfg.User != tc.user || cfg.Passwd != tc.pass || cfg.DBName != tc.dbName {
			t.Errorf("%s: got %s %s %s %q %s", tc.dsn, cfg.Net, cfg.Addr, cfg.User, cfg.Passwd, cfg.DBName)
		}
		// dbperf's settings win over the DSN's.
		if cfg.InterpolateParams || cfg.ParseTime || cfg.Timeout.Seconds() != 10 {
			t.Errorf("%s: settings not applied: interpolate=%v parseTime=%v timeout=%s", tc.dsn, cfg.InterpolateParams, cfg.ParseTime, cfg.Timeout)
		}
	}
	for _, bad := range []string{
		"root@tcp(127.0.0.1:3306)/ib",                         // no scheme
		"postgres://root@127.0.0.1/ib",                        // wrong scheme
		"mysql://root@tcp(127.0.0.1:3306)/",                   // no database
		"mysql://root@127.0.0.1:3306",                         // no database
		"mysql://root@tcp(127.0.0.1:3306)/ib?readTimeout=abc", // bad parameter
	} {
		if _, err := config(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	for _, s := range Settings() {
		if s.Why == "" {
			t.Errorf("setting %s has no explanation", s.Param)
		}
	}
}
