package cli

import "github.com/dbperf/dbperf/internal/store"

// RedactDSN replaces any password in a DSN with "xxxxx", so a DSN can be printed and
// stored: URL userinfo, password= and sslpassword= in a URL's query, and key=value
// DSNs (store.RedactDSN, which names the results store in messages the same way). A DSN
// without a password comes back unchanged.
func RedactDSN(dsn string) string { return store.RedactDSN(dsn) }
