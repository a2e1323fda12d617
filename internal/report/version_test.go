package report

import "testing"

func TestCompareVersion(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"9.6", "10.1", -1},
		{"10.11.2-MariaDB", "11.4.5-MariaDB", -1},
		{"15.4", "15.4", 0},
		{"15.10", "15.9", 1},
		{"16beta1", "16", 1},
		{"", "1", -1},
	} {
		if got := compareVersion(tc.a, tc.b); got != tc.want {
			t.Errorf("compareVersion(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
