package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The spelling of figures in the texts the model writes (notes, legends, regressions) and
// that every renderer shares, so a figure reads the same in a note and in a table.

// FormatNum prints a figure with about three significant digits: 9.996 as 10.0, 1234.5
// as 1235, 0.0001234 as 0.000123.
func FormatNum(v float64) string {
	// Rounded to 3 significant digits first, so that 9.996 prints as 10.0, not 10.00.
	if r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64); err == nil {
		v = r
	}
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// FormatPct prints a share in percent: whole percents from 10 up, else one decimal.
func FormatPct(p float64) string {
	if math.Abs(p) >= 10 {
		return fmt.Sprintf("%.0f%%", p)
	}
	return fmt.Sprintf("%.1f%%", p)
}

// Plural is n and the noun, with an s unless n is 1: "1 run", "3 runs".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "s") { // "series", not "seriess" (issue 42)
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
