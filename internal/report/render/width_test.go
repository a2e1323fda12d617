package render

import (
	"bytes"
	"testing"
)

// A wrapped line continues at its indent's width in spaces plus the hang: a bullet's
// marker is not repeated on the lines after its first (they read "  -   …" before).
func TestWriteWrapped(t *testing.T) {
	for _, tc := range []struct {
		indent, hang, s string
		width           int
		want            string
	}{
		{"  - ", "", "one two three four", 12, "  - one two\n    three\n    four\n"},
		{"  ", "  ", "one two three four", 11, "  one two\n    three\n    four\n"},
		{"", "  ", "one two three", 0, "one two three\n"},
		{"  - ", "", "short", 80, "  - short\n"},
		{"  - ", "", "averyveryverylongword x", 10, "  - averyveryverylongword\n    x\n"},
	} {
		var b bytes.Buffer
		writeWrapped(&b, tc.width, tc.indent, tc.hang, tc.s)
		if b.String() != tc.want {
			t.Errorf("writeWrapped(%d, %q, %q, %q) = %q, want %q", tc.width, tc.indent, tc.hang, tc.s, b.String(), tc.want)
		}
	}
}
