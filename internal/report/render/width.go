package render

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/dbperf/dbperf/internal/report"
)

// sized is a writer with the width its text lines may take (Fit).
type sized struct {
	io.Writer
	columns int
}

// Columns is the width w's text lines may take.
func (s sized) Columns() int { return s.columns }

// Fit is w with a width: the text reports written to it (Text, CompareText, Bench,
// HistoryText) fit their lines to columns runes: a wider table in blocks of columns
// (table.go), prose wrapped at spaces. A writer without a width takes lines of any
// length. columns ≤ 0 is no width.
func Fit(w io.Writer, columns int) io.Writer {
	if columns <= 0 {
		return w
	}
	if s, ok := w.(sized); ok {
		w = s.Writer
	}
	return sized{Writer: w, columns: columns}
}

// Columns is the width of w's lines set with Fit, 0 for any.
func Columns(w io.Writer) int {
	if s, ok := w.(interface{ Columns() int }); ok {
		return s.Columns()
	}
	return 0
}

// writeWrapped writes s at indent as lines of at most width runes, broken at spaces,
// the lines after the first at indent's width in spaces plus hang (a bullet's "  - "
// with hang "" aligns them with its text; a word longer than the line stays whole).
// width ≤ 0 writes s on one line.
func writeWrapped(w *bytes.Buffer, width int, indent, hang, s string) {
	if width <= 0 || utf8.RuneCountInString(indent+s) <= width {
		w.WriteString(indent + s + "\n")
		return
	}
	words := strings.Split(s, " ")
	line, lead := indent, indent
	empty := true
	for _, word := range words {
		if !empty && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
			w.WriteString(strings.TrimRight(line, " ") + "\n")
			lead = strings.Repeat(" ", utf8.RuneCountInString(indent)) + hang
			line, empty = lead, true
		}
		if !empty {
			line += " "
		}
		line += word
		empty = false
	}
	w.WriteString(strings.TrimRight(line, " ") + "\n")
}

// writeItems writes items joined by ", " on lines of at most width runes, broken only
// between items, the lines after the first indented by two spaces (width ≤ 0: one line).
func writeItems(w *bytes.Buffer, width int, items []string) {
	line := ""
	for i, it := range items {
		it = report.Printable(it)
		switch {
		case i == 0:
			line = it
		case width > 0 && utf8.RuneCountInString(line)+2+utf8.RuneCountInString(it)+1 > width:
			w.WriteString(line + ",\n")
			line = "  " + it
		default:
			line += ", " + it
		}
	}
	w.WriteString(line + "\n")
}
