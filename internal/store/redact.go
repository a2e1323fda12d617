package store

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// redactMask stands for a password wherever a DSN is printed, stored or served.
const redactMask = "xxxxx"

// urlScheme matches the scheme of a URL DSN (postgres://, mysql://, …).
var urlScheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*://`)

// strandedPassword matches what may be a password whose unencoded '/', '?' or '#' moved
// its '@' out of a URL's authority (postgres://u:pa/ss@host/db): greedy to each '@', so a
// ':' inside it cannot split the mask.
var strandedPassword = regexp.MustCompile(`:[^@]*@`)

// secretKey says whether a DSN parameter (a URL query key, a key=value keyword) holds a
// secret: password, sslpassword (the client key's passphrase) and the short forms some
// drivers take. Over-redacting is safe.
func secretKey(k string) bool {
	if d, err := url.QueryUnescape(k); err == nil {
		k = d // pass%77ord is password to the driver
	}
	k = strings.ToLower(strings.TrimSpace(k))
	return k == "pass" || k == "pwd" || strings.HasSuffix(k, "password")
}

// RedactDSN replaces every password in a DSN with "xxxxx", so that the DSN can be
// printed, stored and served: a URL's userinfo password (postgres://u:PASSWORD@host/db,
// mysql://root:PASSWORD@tcp(host:3306)/db, a password holding '@' or '/' included), a
// password in a URL's query (?password=…, &sslpassword=…, their key percent-encoded
// too), a key=value DSN's password (host=h password=PASSWORD, quoted or with spaces
// around '='), and a driver DSN's user:PASSWORD@… . Everything else is kept as given; a
// DSN without a password comes back unchanged.
func RedactDSN(dsn string) string { return redact(dsn, func(string) {}) }

// redact is RedactDSN, calling found with each password it masks.
func redact(dsn string, found func(string)) string {
	if m := urlScheme.FindString(dsn); m != "" {
		return m + redactURL(dsn[len(m):], found)
	}
	if at := strings.LastIndexByte(dsn, '@'); at > 0 && !strings.ContainsAny(dsn[:at], "= \t\n\r") {
		// A driver's own DSN (go-sql-driver/mysql: user:pass@tcp(host)/db?params).
		return redactURL(dsn, found)
	}
	return redactKeywordValue(dsn, found)
}

// redactURL redacts a URL after its scheme: the userinfo password, then the query's
// secret parameters.
func redactURL(p string, found func(string)) string {
	var b strings.Builder
	// The authority ends at the first '/', '?' or '#'; its userinfo at its last '@'
	// (a password may hold '@', and a MySQL address "unix(/path)" holds a '/').
	authEnd := strings.IndexAny(p, "/?#")
	if authEnd < 0 {
		authEnd = len(p)
	}
	if at := strings.LastIndexByte(p[:authEnd], '@'); at >= 0 {
		user, password, hasPassword := strings.Cut(p[:at], ":")
		b.WriteString(user)
		if hasPassword {
			found(password)
			b.WriteString(":" + redactMask)
		}
		b.WriteByte('@')
		p = p[at+1:]
	} else if strings.IndexByte(p, '@') >= 0 && stranded(p, authEnd) {
		p = strandedPassword.ReplaceAllStringFunc(p, func(m string) string {
			found(m[1 : len(m)-1])
			return ":" + redactMask + "@"
		})
	}
	q := strings.IndexByte(p, '?')
	if q < 0 {
		b.WriteString(p)
		return b.String()
	}
	b.WriteString(p[:q+1])
	for i, pair := range strings.Split(p[q+1:], "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		key, value, hasValue := strings.Cut(pair, "=")
		if hasValue && secretKey(key) {
			found(value)
			b.WriteString(key + "=" + redactMask)
			continue
		}
		b.WriteString(pair)
	}
	return b.String()
}

// stranded says whether a URL without userinfo in its authority (p[:authEnd]) may hold a
// password whose '@' lies further on: its authority has a ':' not followed by a port
// number (user:pa/ss@host), or an '@' comes before the query (a path has none).
func stranded(p string, authEnd int) bool {
	if _, port, ok := strings.Cut(p[:authEnd], ":"); ok && strings.Trim(port, "0123456789,") != "" {
		return true
	}
	q := strings.IndexByte(p, '?')
	if q < 0 {
		q = len(p)
	}
	return q > authEnd && strings.IndexByte(p[authEnd:q], '@') >= 0
}

// redactKeywordValue redacts a key=value DSN (libpq's form: values end at unescaped
// whitespace, or are single-quoted with backslash escapes; spaces may surround '=').
func redactKeywordValue(s string, found func(string)) string {
	var b strings.Builder
	for len(s) > 0 {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			b.WriteString(s)
			break
		}
		key := s[:eq]
		if f := strings.Fields(key); len(f) > 0 {
			key = f[len(f)-1]
		}
		v := eq + 1
		for v < len(s) && isSpace(s[v]) {
			v++
		}
		b.WriteString(s[:v])
		end := v
		if end < len(s) && s[end] == '\'' {
			for end++; end < len(s) && s[end] != '\''; end++ {
				if s[end] == '\\' {
					end++
				}
			}
			end++ // the closing quote
		} else {
			for ; end < len(s) && !isSpace(s[end]); end++ {
				if s[end] == '\\' {
					end++
				}
			}
		}
		end = min(end, len(s))
		if secretKey(key) {
			found(s[v:end])
			b.WriteString(redactMask)
		} else {
			b.WriteString(s[v:end])
		}
		s = s[end:]
	}
	return b.String()
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// dsnSecrets are the passwords a DSN holds, as written and as a driver decodes them
// (percent-decoded; unquoted and unescaped).
func dsnSecrets(dsn string) []string {
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	redact(dsn, func(s string) {
		add(s)
		if d, err := url.PathUnescape(s); err == nil {
			add(d)
		}
		if u, ok := strings.CutPrefix(s, "'"); ok {
			u = strings.TrimSuffix(u, "'")
			add(u)
			add(strings.NewReplacer(`\'`, `'`, `\\`, `\`).Replace(u))
		}
		add(strings.NewReplacer(`\ `, ` `, `\\`, `\`).Replace(s))
	})
	return out
}

// minSecretLen is the shortest password replaced inside a message: a shorter one would
// garble every word it occurs in, so a message holding one is withheld instead.
const minSecretLen = 4

// RedactText returns text with the DSN and every password it holds replaced, for messages
// (a driver's error) that may quote the DSN, whole or in parts. A message holding a
// password shorter than 4 characters is replaced by a note that it was withheld.
func RedactText(text, dsn string) string {
	if dsn == "" {
		return text
	}
	if red := RedactDSN(dsn); red != dsn {
		text = strings.ReplaceAll(text, dsn, red)
	}
	short := false
	for _, s := range dsnSecrets(dsn) {
		if len(s) >= minSecretLen {
			text = strings.ReplaceAll(text, s, redactMask)
		} else if strings.Contains(text, s) {
			short = true
		}
	}
	if short {
		return "(the message is withheld: it may hold the password, which is too short to mask in it)"
	}
	return text
}

// RedactError is err with RedactText applied to its message; errors.Is and errors.As
// still see the errors it wraps.
func RedactError(err error, dsn string) error {
	if err == nil {
		return nil
	}
	msg := RedactText(err.Error(), dsn)
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
