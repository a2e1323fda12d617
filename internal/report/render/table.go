package render

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/dbperf/dbperf/internal/report"
)

// allLeft makes every column of a table left-aligned (newTable).
const allLeft = math.MaxInt

// table is the one aligned-text table of every text output (the run report, the runs
// list, the comparison, the benchstat view, the history): columns two spaces apart, the
// first left columns left-aligned and the others right-aligned, every cell Printable (a
// label's own escape sequence, tab or newline never reaches the terminal nor breaks the
// columns), a cell's colour put around it after padding so that escape sequences never
// upset the alignment, and no line ending in spaces. Widths count runes.
type table struct {
	out     io.Writer
	left    int
	rows    [][]string
	colours [][]string
}

// newTable is a table written to out by flush, its first left columns left-aligned
// (allLeft: all of them).
func newTable(out io.Writer, left int) *table {
	return &table{out: out, left: left}
}

// row adds a row of uncoloured cells.
func (t *table) row(cells ...string) { t.colouredRow(cells, nil) }

// colouredRow adds a row whose cells have colours (ANSI escapes, "" for none).
func (t *table) colouredRow(cells, colours []string) {
	printable := make([]string, len(cells))
	for i, c := range cells {
		printable[i] = report.Printable(c)
	}
	t.rows = append(t.rows, printable)
	t.colours = append(t.colours, colours)
}

// flush writes the rows.
func (t *table) flush() error {
	var width []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var buf bytes.Buffer
	for ri, r := range t.rows {
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				line.WriteString("  ")
			}
			text := c
			if i < len(t.colours[ri]) && t.colours[ri][i] != "" {
				text = t.colours[ri][i] + c + ansiReset
			}
			if i < t.left {
				line.WriteString(text + pad)
			} else {
				line.WriteString(pad + text)
			}
		}
		buf.WriteString(strings.TrimRight(line.String(), " "))
		buf.WriteString("\n")
	}
	if _, err := t.out.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("render: write table: %w", err)
	}
	return nil
}

// writeMarkdownTable writes a pipe table: the header, the alignment row (right-aligned
// where right says), then the rows. Cells must be escaped already.
func writeMarkdownTable(buf *bytes.Buffer, head []string, right func(col int) bool, rows [][]string) {
	fmt.Fprintf(buf, "| %s |\n", strings.Join(head, " | "))
	align := make([]string, len(head))
	for i := range align {
		align[i] = "---"
		if right(i) {
			align[i] = "---:"
		}
	}
	fmt.Fprintf(buf, "|%s|\n", strings.Join(align, "|"))
	for _, r := range rows {
		fmt.Fprintf(buf, "| %s |\n", strings.Join(r, " | "))
	}
}

// WriteTable writes head and rows as the one aligned-text table, every column
// left-aligned: the lists of commands outside reports (dbperf queue).
func WriteTable(out io.Writer, head []string, rows [][]string) error {
	t := newTable(out, allLeft)
	t.row(head...)
	for _, r := range rows {
		t.row(r...)
	}
	return t.flush()
}
