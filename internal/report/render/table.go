package render

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
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
//
// A table wider than its width (fit) is written in blocks of columns, a blank line
// between blocks, each block under its own header (the first row) and repeating the
// label columns (the row heads: config, figure, step) on every row, so that every other
// column shows once and no line is wider than the width unless one column alone is.
// A table that fits is written exactly as without a width.
type table struct {
	out     io.Writer
	left    int
	rows    [][]string
	colours [][]string
	// width is the widest a line may be (0: any); labels the columns each block repeats.
	width, labels int
	// glued are the columns that stay in the block of the column before them (glue).
	glued map[int]bool
}

// newTable is a table written to out by flush, its first left columns left-aligned
// (allLeft: all of them).
func newTable(out io.Writer, left int) *table {
	return &table{out: out, left: left}
}

// fit makes the table at most width runes wide (0: any), its first left columns (the
// first column when all are left-aligned) repeated in each block.
func (t *table) fit(width int) *table {
	t.width, t.labels = width, t.left
	if t.left == allLeft {
		t.labels = 1
	}
	return t
}

// repeat makes a fitted table repeat its first n columns in each block (a latency
// table's step, label and kind of latency).
func (t *table) repeat(n int) *table {
	t.labels = n
	return t
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

// flush writes the rows, in blocks of columns when they are wider than the width.
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
	blocks := t.blocks(width)
	for bi, cols := range blocks {
		if bi > 0 {
			buf.WriteString("\n")
		}
		for ri, r := range t.rows {
			if len(blocks) > 1 && !anyCell(r, cols) && slices.ContainsFunc(r, func(c string) bool { return c != "" }) {
				continue // a continuation row with nothing in this block
			}
			var line strings.Builder
			for k, i := range cols {
				c := cell(r, i)
				pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
				if k > 0 {
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
	}
	if _, err := t.out.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("render: write table: %w", err)
	}
	return nil
}

// blocks are the columns each block of the table shows: one block of all of them when
// the table fits its width (or has none), else the label columns followed by as many
// of the others, in order, as fit the width (at least one).
func (t *table) blocks(width []int) [][]int {
	all := make([]int, len(width))
	total := -2
	for i, w := range width {
		all[i] = i
		total += w + 2
	}
	labels := min(t.labels, len(width))
	if t.width <= 0 || total <= t.width || labels >= len(width) {
		return [][]int{all}
	}
	labelWidth := -2
	for _, w := range width[:labels] {
		labelWidth += w + 2
	}
	var blocks [][]int
	var block []int
	used := labelWidth
	for i := labels; i < len(width); {
		// A column and those glued to it go in one block.
		unit, w := []int{i}, 2+width[i]
		for i++; i < len(width) && t.glued[i]; i++ {
			unit, w = append(unit, i), w+2+width[i]
		}
		if len(block) > 0 && used+w > t.width {
			blocks = append(blocks, append(append([]int{}, all[:labels]...), block...))
			block, used = nil, labelWidth
		}
		block = append(block, unit...)
		used += w
	}
	return append(blocks, append(append([]int{}, all[:labels]...), block...))
}

// glue keeps each of cols in the block of the column before it when the table is
// written in blocks (a change and its mde).
func (t *table) glue(cols ...int) *table {
	if t.glued == nil {
		t.glued = map[int]bool{}
	}
	for _, c := range cols {
		t.glued[c] = true
	}
	return t
}

// anyCell says whether row r has a non-empty cell among cols.
func anyCell(r []string, cols []int) bool {
	for _, i := range cols {
		if cell(r, i) != "" {
			return true
		}
	}
	return false
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
