package mariadb

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Setting is one driver setting dbperf applies to every MariaDB connection. The list
// returned by Settings is the single source for the driver configuration and for the
// documentation of why each value was chosen.
type Setting struct {
	// Param is the go-sql-driver/mysql DSN parameter ("interpolateParams").
	Param string
	// Value is the value given to it ("false").
	Value string
	// Why explains the choice.
	Why string
}

// Settings returns dbperf's driver settings. They override whatever the target DSN says.
// Per-session server settings: none. The reference's writers run with unique_checks=1 and
// without bulk load, which are the server's defaults, so nothing is set per connection.
func Settings() []Setting {
	return []Setting{
		{
			Param: "interpolateParams", Value: "false",
			Why: "statements with arguments are server-side prepared statements (binary protocol), " +
				"prepared once per session and executed many times. The reference (MySQLdb) sends " +
				"text SQL with the values in it; prepared statements save the server's parsing, " +
				"which is a small, known difference from the reference's numbers",
		},
		{
			Param: "parseTime", Value: "false",
			Why: "datetime columns are fetched as bytes and not parsed into time.Time, so fetching " +
				"rows costs the client what it costs a text-protocol client",
		},
		{
			Param: "timeout", Value: "10s",
			Why: "dial timeout: a server that does not answer within 10 s is down, not slow",
		},
	}
}

// config turns a target DSN into the driver's configuration with Settings applied.
//
// Accepted forms (the "mysql://" prefix is required; mariadb:// is accepted as a synonym):
//
//	mysql://user[:pass]@tcp(host:port)/db[?driver-params]   the driver's own DSN after the prefix
//	mysql://user[:pass]@unix(/path/to/mysqld.sock)/db[?…]    same, over a unix socket
//	mysql://user[:pass]@host[:port]/db[?driver-params]       a URL; TCP, port 3306 by default
//
// In the URL form user and password are percent-decoded. driver-params are
// go-sql-driver/mysql parameters; the ones in Settings always take dbperf's value.
// A database name is required: the benchmark's tables live in it.
func config(target string) (*mysql.Config, error) {
	var rest string
	switch {
	case strings.HasPrefix(target, "mysql://"):
		rest = strings.TrimPrefix(target, "mysql://")
	case strings.HasPrefix(target, "mariadb://"):
		rest = strings.TrimPrefix(target, "mariadb://")
	default:
		return nil, errors.New("DSN must start with mysql:// (e.g. mysql://root@tcp(127.0.0.1:3306)/ib)")
	}
	var cfg *mysql.Config
	at := strings.LastIndex(rest, "@")
	if host := rest[at+1:]; strings.HasPrefix(host, "tcp(") || strings.HasPrefix(host, "unix(") || strings.HasPrefix(host, "tcp6(") {
		c, err := mysql.ParseDSN(rest)
		if err != nil {
			return nil, fmt.Errorf("parse DSN: %w", err)
		}
		cfg = c
	} else {
		u, err := url.Parse(target)
		if err != nil {
			return nil, fmt.Errorf("parse DSN: %v", redactErr(err))
		}
		c := mysql.NewConfig()
		c.Net = "tcp"
		c.Addr = u.Host
		if u.Port() == "" {
			c.Addr = u.Host + ":3306"
		}
		if u.User != nil {
			c.User = u.User.Username()
			c.Passwd, _ = u.User.Password()
		}
		c.DBName = strings.TrimPrefix(u.Path, "/")
		if u.RawQuery != "" {
			// Let the driver parse its own parameters.
			p, err := mysql.ParseDSN("/?" + u.RawQuery)
			if err != nil {
				return nil, fmt.Errorf("parse DSN parameters: %w", err)
			}
			c.Params = p.Params
		}
		cfg = c
	}
	if cfg.DBName == "" {
		return nil, errors.New("DSN names no database (…/ib)")
	}
	for _, s := range Settings() {
		switch s.Param {
		case "interpolateParams":
			cfg.InterpolateParams = s.Value == "true"
		case "parseTime":
			cfg.ParseTime = s.Value == "true"
		case "timeout":
			d, err := time.ParseDuration(s.Value)
			if err != nil {
				return nil, fmt.Errorf("setting timeout: %w", err)
			}
			cfg.Timeout = d
		default:
			return nil, fmt.Errorf("setting %s is not applied", s.Param)
		}
	}
	// Failed dials are returned as errors; the driver's own logging would only repeat them.
	cfg.Logger = &mysql.NopLogger{}
	return cfg, nil
}

// redactErr drops the URL from url.Parse errors, which would print the password.
func redactErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
