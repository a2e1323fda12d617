package mariadb

import (
	"slices"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
)

func TestMariaDBDialectSQL(t *testing.T) {
	idx := []engine.Index{
		{Name: "pi1_marketsegment", Columns: []string{"productid", "customerid", "price"}},
		{Name: "pi1_registersegment", Columns: []string{"cashregisterid", "customerid", "price"}},
		{Name: "pi1_pdc", Columns: []string{"price", "dateandtime", "customerid"}},
	}
	cols := []string{"transactionid bigint NOT NULL AUTO_INCREMENT PRIMARY KEY", "price int NOT NULL"}
	for _, tc := range []struct {
		storage, engineClause string
		indexes               []string
	}{
		{InnoDB, "InnoDB", []string{
			"ALTER TABLE pi1 ADD INDEX pi1_marketsegment (productid, customerid, price), " +
				"ADD INDEX pi1_registersegment (cashregisterid, customerid, price), " +
				"ADD INDEX pi1_pdc (price, dateandtime, customerid)",
		}},
		{"", "InnoDB", []string{
			"ALTER TABLE pi1 ADD INDEX pi1_marketsegment (productid, customerid, price), " +
				"ADD INDEX pi1_registersegment (cashregisterid, customerid, price), " +
				"ADD INDEX pi1_pdc (price, dateandtime, customerid)",
		}},
		{RocksDB, "ROCKSDB", []string{
			"ALTER TABLE pi1 ADD INDEX pi1_marketsegment (productid, customerid, price)",
			"ALTER TABLE pi1 ADD INDEX pi1_registersegment (cashregisterid, customerid, price)",
			"ALTER TABLE pi1 ADD INDEX pi1_pdc (price, dateandtime, customerid)",
		}},
	} {
		d := Dialect{StorageEngine: tc.storage}
		from, ok := d.FromIndex("pi1", "pi1_pdc")
		tests := []struct {
			name string
			got  []string
			want []string
		}{
			{"Name", []string{d.Name()}, []string{"mysql"}},
			{"Placeholder", []string{d.Placeholder(1), d.Placeholder(7)}, []string{"?", "?"}},
			{"AutoIncrementPK", []string{d.AutoIncrementPK()}, []string{"bigint NOT NULL AUTO_INCREMENT PRIMARY KEY"}},
			{"DateTimeType", []string{d.DateTimeType()}, []string{"datetime"}},
			{
				"CreateTable", d.CreateTable("pi1", cols),
				[]string{"CREATE TABLE pi1 (transactionid bigint NOT NULL AUTO_INCREMENT PRIMARY KEY, price int NOT NULL) ENGINE=" + tc.engineClause},
			},
			{"DropTable", []string{d.DropTable("pi1")}, []string{"DROP TABLE IF EXISTS pi1"}},
			{"CreateIndexes", d.CreateIndexes("pi1", idx), tc.indexes},
			{"CreateIndexes none", d.CreateIndexes("pi1", nil), []string{}},
			{"FromIndex", []string{from}, []string{"pi1 FORCE INDEX (pi1_pdc)"}},
		}
		for _, tt := range tests {
			if !slices.Equal(tt.got, tt.want) {
				t.Errorf("%q %s:\n got %q\nwant %q", tc.storage, tt.name, tt.got, tt.want)
			}
		}
		if !ok {
			t.Errorf("%q: FromIndex ok = false", tc.storage)
		}
		if !d.AutoIncrementGaps() {
			t.Errorf("%q: AutoIncrementGaps = false", tc.storage)
		}
	}
}

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
