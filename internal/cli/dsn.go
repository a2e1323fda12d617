package cli

import (
	"regexp"
)

// redactPatterns match the password in the DSN forms dbperf accepts: URLs
// (scheme://user:PASSWORD@host) and key=value strings (password=PASSWORD).
func redactPatterns() []*regexp.Regexp {
	return []*regexp.Regexp{
		// Greedy to the last '@': a password may contain '@' (over-redacting is safe).
		regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@]*:)(.*)(@[^@]*)$`),
		regexp.MustCompile(`(?i)((?:^|[\s?&;])(?:password|pass|pwd)=)('[^']*'|[^\s&;]*)`),
	}
}

// RedactDSN replaces any password in a DSN with "xxxxx", so a DSN can be printed and
// stored. A DSN without a password comes back unchanged.
func RedactDSN(dsn string) string {
	for _, re := range redactPatterns() {
		dsn = re.ReplaceAllString(dsn, "${1}xxxxx${3}")
	}
	return dsn
}
