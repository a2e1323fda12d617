package render

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dbperf/dbperf/internal/report"
)

// Markers used where colour is not available (Markdown, text without colour). The
// unstable marker shows in every format: it has no colour.
const (
	markBetter   = "▲"
	markWorse    = "▼"
	markSame     = "="
	markUnstable = "?"
	markNoisy    = "!"
	markSLAMiss  = "✗"
)

// ANSI colours of the text renderer (only when colour is on).
const (
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiGrey  = "\x1b[90m"
	ansiReset = "\x1b[0m"
)

// formatValue prints one value in its unit.
func formatValue(v float64, unit string) string {
	switch unit {
	case "rows/s", "q/s", "ops/s", report.UnitPerMinute:
		return formatRate(v)
	case "µs":
		return formatUS(int64(v + 0.5))
	case "ratio":
		return fmt.Sprintf("%.2f", v)
	case "%":
		return report.FormatPct(v)
	case "s":
		return fmt.Sprintf("%.2f", v)
	case "count": // files, entries, stalls: whole numbers unless a median fell between two
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
	}
	return report.FormatNum(v)
}

// cellText is a cell as plain text. An absolute cell: the median, [min–max] for repeated
// runs that differ, its unit where the cell says to show it (report.Cell.ShowUnit), ! when
// noisy. A relative cell: the ratio, [lo–hi] its interval when it has one, ? when
// unstable. With marks also ▲/▼ better/worse, = the same and ✗ an SLA miss (used where
// colour cannot show them). A cell without a verdict has no mark at all. The marks follow
// shown, the cell's class as its row shows it (report.Row.Shown): none on the base's row.
func cellText(c report.Cell, shown report.Class, marks bool) string {
	if !c.Present {
		return "-"
	}
	var b strings.Builder
	b.WriteString(formatValue(c.Median, c.Unit))
	switch {
	case c.Rel != nil:
		if c.Rel.HasCI {
			fmt.Fprintf(&b, " [%s–%s]", formatValue(c.Rel.Lo, c.Unit), formatValue(c.Rel.Hi, c.Unit))
		}
	case c.N > 1 && c.Min != c.Max:
		fmt.Fprintf(&b, " [%s–%s]", formatValue(c.Min, c.Unit), formatValue(c.Max, c.Unit))
	}
	if c.ShowUnit && c.Unit != "" {
		b.WriteString(" " + c.Unit)
	}
	if c.Noisy && c.Rel == nil {
		b.WriteString(" " + markNoisy)
	}
	if shown == report.ClassUnstable {
		b.WriteString(" " + markUnstable)
	}
	if marks {
		switch shown {
		case report.ClassBetter:
			b.WriteString(" " + markBetter)
		case report.ClassWorse:
			b.WriteString(" " + markWorse)
		case report.ClassSame:
			if c.Rel != nil {
				b.WriteString(" " + markSame)
			}
		case report.ClassSLAMiss:
			b.WriteString(" " + markSLAMiss)
		}
	}
	return b.String()
}

// colourOf is the ANSI colour of a cell shown as class shown (report.Row.Shown).
func colourOf(shown report.Class) string {
	switch shown {
	case report.ClassBetter:
		return ansiGreen
	case report.ClassWorse, report.ClassSLAMiss:
		return ansiRed
	case report.ClassSame, report.ClassTarget:
		return ansiGrey
	}
	return "" // ClassUnstable, ClassNone: no colour
}

// CompareText writes the comparison tables for a terminal, then the notes. With
// colour, relative cells are green (better), red (worse) or grey (the same), SLA misses
// red; without it the markers ▲ ▼ = ✗ say the same. Unstable cells are marked ? either
// way; cells without a verdict have neither colour nor mark. On a writer with a width
// (Fit) the tables wrap into blocks of steps, the config and figure columns repeated,
// and the prose wraps at spaces; an explain pointer keeps its command on one line.
func CompareText(w io.Writer, c report.Comparison, colour bool) error {
	width := Columns(w)
	var buf bytes.Buffer
	for i, g := range c.Groups {
		mark := ""
		if i == c.Base {
			mark = " (base)"
		}
		writeWrapped(&buf, width, "", "  ", fmt.Sprintf("%s%s: %s", report.Printable(g.Name), mark, report.Printable(g.Describe())))
	}
	for _, t := range c.Tables {
		if len(t.Rows) == 0 {
			continue
		}
		buf.WriteString("\n")
		writeWrapped(&buf, width, "", "  ", report.Printable(t.Title))
		tb := newTable(&buf, len(t.HeadColumns)).fit(width)
		tb.row(append(append([]string{}, t.HeadColumns...), t.Columns...)...)
		for _, r := range t.Rows {
			cells := append([]string{}, r.Head...)
			rowColours := make([]string, len(r.Head))
			for _, c := range r.Cells {
				cells = append(cells, cellText(c, r.Shown(c), !colour))
				if colour {
					rowColours = append(rowColours, colourOf(r.Shown(c)))
				}
			}
			tb.colouredRow(cells, rowColours)
		}
		if err := tb.flush(); err != nil {
			return err
		}
		for _, l := range append(t.MDELines(), t.Legend...) {
			writeWrapped(&buf, width, "  ", "  ", report.Printable(l))
		}
	}
	if len(c.Notes) > 0 {
		buf.WriteString("\nNotes\n")
		for _, n := range c.Notes {
			writeWrapped(&buf, width, "  - ", "", report.Printable(n.Text))
		}
	}
	if ps := c.ExplainPointers(); len(ps) > 0 {
		buf.WriteString("\n")
		for _, p := range ps {
			writePointer(&buf, width, report.Printable(p))
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("render: write text: %w", err)
	}
	return nil
}

// writePointer writes an explain pointer ("qp100 is faster (+20.0%): why: dbperf explain
// a b --step qp100"): its words wrapped to width, but its command whole on its own line
// when the pointer does not fit, so that it can be copied.
func writePointer(buf *bytes.Buffer, width int, p string) {
	i := strings.Index(p, "dbperf explain ")
	if width <= 0 || utf8.RuneCountInString(p) <= width || i <= 0 {
		writeWrapped(buf, width, "", "  ", p)
		return
	}
	// The options a run needs stay together: a NUL joins their words while wrapping.
	const opts = "--cpu-profile DIR --explain"
	var head bytes.Buffer
	writeWrapped(&head, width, "", "  ", strings.ReplaceAll(strings.TrimRight(p[:i], " "), opts, strings.ReplaceAll(opts, " ", "\x00")))
	buf.WriteString(strings.ReplaceAll(head.String(), "\x00", " "))
	buf.WriteString("  " + p[i:] + "\n")
}

// Markdown writes the comparison as Markdown: a heading and a pipe table per table,
// markers instead of colours (▲ better, ▼ worse, = the same, ? unstable, ✗ SLA missed,
// ! noisy), then the notes.
func Markdown(w io.Writer, c report.Comparison) error {
	var buf bytes.Buffer
	buf.WriteString("# dbperf report\n\n")
	for i, g := range c.Groups {
		mark := ""
		if i == c.Base {
			mark = " (base)"
		}
		fmt.Fprintf(&buf, "- **%s**%s: %s\n", mdEscape(g.Name), mark, mdEscape(g.Describe()))
	}
	for _, t := range c.Tables {
		if len(t.Rows) == 0 {
			continue
		}
		fmt.Fprintf(&buf, "\n## %s\n\n", mdEscape(t.Title))
		head := append(append([]string{}, t.HeadColumns...), t.Columns...)
		var rows [][]string
		for _, r := range t.Rows {
			cells := mapStrings(r.Head, mdEscape)
			if r.Base && len(cells) > 0 {
				cells[len(cells)-1] = "**" + cells[len(cells)-1] + "**"
			}
			for _, c := range r.Cells {
				cells = append(cells, mdEscape(cellText(c, r.Shown(c), true)))
			}
			rows = append(rows, cells)
		}
		writeMarkdownTable(&buf, mapStrings(head, mdEscape), func(i int) bool { return i >= len(t.HeadColumns) }, rows)
		buf.WriteString("\n")
		for _, l := range t.MDELines() {
			fmt.Fprintf(&buf, "%s  \n", mdEscape(l))
		}
		for _, l := range t.Legend {
			fmt.Fprintf(&buf, "_%s_  \n", mdEscape(l))
		}
	}
	if len(c.Notes) > 0 {
		buf.WriteString("\n## Notes\n\n")
		for _, n := range c.Notes {
			fmt.Fprintf(&buf, "- %s\n", mdEscape(n.Text))
		}
	}
	if ps := c.ExplainPointers(); len(ps) > 0 {
		buf.WriteString("\n## Why\n\n")
		for _, p := range ps {
			fmt.Fprintf(&buf, "- `%s`\n", strings.ReplaceAll(report.Printable(p), "`", "'"))
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("render: write Markdown: %w", err)
	}
	return nil
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;").Replace(report.Printable(s))
}

func mapStrings(in []string, f func(string) string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}

// CSVHeader is the header of the CSV and TSV reports: one file, one line per table cell
// (long format), so every table fits one schema and scripts can pivot it as they like.
// Relative cells: value and ratio are the ratio's estimate, min and max its interval (when
// it has one), verdict stats.Verdict, significant whether it is higher or lower, mde_pct
// the smallest change the trials can detect (80% power), paired whether the trials were
// paired; p_value is empty (kept for old scripts). The comparison's notes follow as rows
// of table "notes": row the kind, column the steps, value the share (%), note the text.
func CSVHeader() []string {
	return []string{"table", "row", "column", "base", "value", "min", "max", "n", "unit",
		"ratio", "p_value", "significant", "noisy", "class", "verdict", "mde_pct", "paired", "note"}
}

// CSV writes the comparison in long format (CSVHeader), comma-separated (sep ',')
// or tab-separated (sep '\t'). row is the row's head cells joined by " / "; value is the
// median (for relative tables the ratio's estimate) in base units (µs, s, rows/s, GiB).
func CSV(w io.Writer, c report.Comparison, sep rune) error {
	cw := csv.NewWriter(w)
	cw.Comma = sep
	if err := cw.Write(CSVHeader()); err != nil {
		return fmt.Errorf("render: write CSV: %w", err)
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, t := range c.Tables {
		for _, r := range t.Rows {
			for i, cell := range r.Cells {
				if !cell.Present {
					continue
				}
				rec := []string{t.ID, strings.Join(r.Head, " / "), t.Columns[i], strconv.FormatBool(r.Base),
					num(cell.Median), num(cell.Min), num(cell.Max), strconv.Itoa(cell.N), cell.Unit, "", "", "",
					strconv.FormatBool(cell.Noisy), string(cell.Class), "", "", "", ""}
				if rel := cell.Rel; rel != nil {
					rec[9], rec[11] = num(rel.Estimate), strconv.FormatBool(rel.Significant())
					rec[14], rec[16] = string(rel.Verdict), strconv.FormatBool(rel.Paired)
					if rel.HasMDE {
						rec[15] = num(rel.MDEPct)
					}
				}
				if err := cw.Write(mapStrings(rec, csvCell)); err != nil {
					return fmt.Errorf("render: write CSV: %w", err)
				}
			}
		}
	}
	for _, n := range c.Notes {
		rec := []string{"notes", n.Kind, strings.Join(n.Steps, ","), "false", "", "", "", "", "", "", "", "", "", "", "", "", "", n.Text}
		if n.SharePct != 0 {
			rec[4], rec[8] = num(n.SharePct), "%"
		}
		if err := cw.Write(mapStrings(rec, csvCell)); err != nil {
			return fmt.Errorf("render: write CSV: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("render: write CSV: %w", err)
	}
	return nil
}

// csvCell neutralises a text cell a spreadsheet would run as a formula (OWASP's CSV
// injection advice): one that starts with =, +, -, @, a tab or a carriage return gets a
// leading single quote. A number (-3.5, +1e-9, -Inf) stays as it is.
func csvCell(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}
