package report

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Printable is s as text output may show it: every rune that does not print (control
// characters such as ESC, a newline or a tab; Unicode format characters such as a
// right-to-left override) written as its Go escape (\x1b, \n, \t, \u202e), an invalid
// byte as \xff; everything else, other Unicode and a backslash included, as it is. A
// label or any other stored string goes through it before it reaches a terminal or a
// text report, so it cannot move the cursor, change colours or forge a line. Printable
// of its own output changes nothing.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case strconv.IsPrint(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r) // '\n', '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// Clip is s cut to at most n runes, its end replaced by "…" when it is longer: a column
// of a listing stays as wide as n whatever one value holds.
func Clip(s string, n int) string {
	if n < 1 || utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for k < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		k++
	}
	return s[:i] + "…"
}
