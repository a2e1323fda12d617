package report

import "testing"

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"pg16-cached":             "pg16-cached",
		"größe ★ 日本":              "größe ★ 日本",
		`C:\path`:                 `C:\path`,
		"a\nFAKE 99 ok":           `a\nFAKE 99 ok`,
		"\x1b[31mred\x1b[0m":      `\x1b[31mred\x1b[0m`,
		"tab\there\r":             `tab\there\r`,
		"rtl\u202eevil":           `rtl\u202eevil`,
		"bad\xffbyte":             `bad\xffbyte`,
		"del\x7f nbsp\u00a0":      `del\x7f nbsp\u00a0`,
		"\x00":                    `\x00`,
		"fine \uFFFD replacement": "fine \uFFFD replacement",
	} {
		got := Printable(in)
		if got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
		if again := Printable(got); again != got {
			t.Errorf("Printable(Printable(%q)) = %q: not idempotent", in, again)
		}
	}
	if got := Clip("abcdef", 4); got != "abc…" {
		t.Errorf("Clip = %q", got)
	}
	if got := Clip("日本語です", 5); got != "日本語です" {
		t.Errorf("Clip of a short string = %q", got)
	}
}
