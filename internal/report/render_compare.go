package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Markers used where colour is not available (Markdown, text without colour).
const (
	markBetter  = "▲"
	markWorse   = "▼"
	markNoisy   = "!"
	markNotSig  = "~"
	markSLAMiss = "✗"
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
	case "rows/s", "q/s", "ops/s":
		return formatRate(v)
	case "µs":
		return formatUS(int64(v + 0.5))
	case "ratio":
		return fmt.Sprintf("%.2f", v)
	case "s":
		return fmt.Sprintf("%.2f", v)
	case "count": // files, entries, stalls: whole numbers unless a median fell between two
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
	}
	return formatMetric(v)
}

// cellText is a cell as plain text: the median (or ratio), [min–max] for repeated runs
// that differ,
// and the markers: ~ not significant, ! noisy; with marks also ▲/▼ for better/worse and ✗
// for an SLA miss (used where colour cannot show them).
func cellText(c Cell, base, marks bool) string {
	if !c.Present {
		return "-"
	}
	var b strings.Builder
	b.WriteString(formatValue(c.Median, c.Unit))
	if c.N > 1 && c.Min != c.Max && !(c.Rel != nil && base) {
		fmt.Fprintf(&b, " [%s–%s]", formatValue(c.Min, c.Unit), formatValue(c.Max, c.Unit))
	}
	if c.Rel != nil && !base && !c.Rel.Significant {
		b.WriteString(" " + markNotSig)
	}
	if c.Noisy && !(c.Rel != nil && base) {
		b.WriteString(" " + markNoisy)
	}
	if marks && !base {
		switch c.Class {
		case ClassBetter:
			b.WriteString(" " + markBetter)
		case ClassWorse:
			b.WriteString(" " + markWorse)
		case ClassSLAMiss:
			b.WriteString(" " + markSLAMiss)
		}
	}
	return b.String()
}

func colourOf(c Cell, base bool) string {
	if !c.Present || base {
		return ""
	}
	switch c.Class {
	case ClassBetter:
		return ansiGreen
	case ClassWorse, ClassSLAMiss:
		return ansiRed
	case ClassSame, ClassTarget:
		return ansiGrey
	}
	return ""
}

// RenderCompareText writes the comparison tables for a terminal. With colour, relative
// cells are green (better), red (worse) or grey (the same), SLA misses red; without it
// the markers ▲ ▼ ✗ say the same.
func RenderCompareText(w io.Writer, c Comparison, colour bool) error {
	var buf bytes.Buffer
	writeGroups(&buf, c, func(s string) string { return s })
	for _, t := range c.Tables {
		if len(t.Rows) == 0 {
			continue
		}
		fmt.Fprintf(&buf, "\n%s\n", t.Title)
		rows := [][]string{append(append([]string{}, t.HeadColumns...), t.Columns...)}
		colours := [][]string{nil}
		for _, r := range t.Rows {
			cells := append([]string{}, r.Head...)
			rowColours := make([]string, len(r.Head))
			for _, c := range r.Cells {
				cells = append(cells, cellText(c, r.Base, !colour))
				if colour {
					rowColours = append(rowColours, colourOf(c, r.Base))
				}
			}
			rows = append(rows, cells)
			colours = append(colours, rowColours)
		}
		writeAligned(&buf, rows, colours, len(t.HeadColumns))
		for _, l := range t.Legend {
			fmt.Fprintf(&buf, "  %s\n", l)
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("report: write text: %w", err)
	}
	return nil
}

// writeGroups lists the compared configurations, the base first marked.
func writeGroups(buf *bytes.Buffer, c Comparison, esc func(string) string) {
	for i, g := range c.Groups {
		mark := ""
		if i == c.Base {
			mark = " (base)"
		}
		fmt.Fprintf(buf, "%s%s: %s\n", esc(g.Name), mark, esc(g.Describe()))
	}
	if c.TooFew {
		fmt.Fprintf(buf, "significance needs at least %d runs per config: repeat runs with --repeat %d (or the same --label)\n",
			c.NeedN, c.NeedN)
	}
}

// RenderMarkdown writes the comparison as Markdown: a heading and a pipe table per table,
// markers instead of colours (▲ better, ▼ worse, ✗ SLA missed, ~ not significant, ! noisy).
func RenderMarkdown(w io.Writer, c Comparison) error {
	var buf bytes.Buffer
	buf.WriteString("# dbperf report\n\n")
	for i, g := range c.Groups {
		mark := ""
		if i == c.Base {
			mark = " (base)"
		}
		fmt.Fprintf(&buf, "- **%s**%s: %s\n", mdEscape(g.Name), mark, mdEscape(g.Describe()))
	}
	if c.TooFew {
		fmt.Fprintf(&buf, "\nSignificance needs at least %d runs per config (`--repeat %d`).\n", c.NeedN, c.NeedN)
	}
	for _, t := range c.Tables {
		if len(t.Rows) == 0 {
			continue
		}
		fmt.Fprintf(&buf, "\n## %s\n\n", mdEscape(t.Title))
		head := append(append([]string{}, t.HeadColumns...), t.Columns...)
		fmt.Fprintf(&buf, "| %s |\n", strings.Join(mapStrings(head, mdEscape), " | "))
		align := make([]string, len(head))
		for i := range align {
			align[i] = "---"
			if i >= len(t.HeadColumns) {
				align[i] = "---:"
			}
		}
		fmt.Fprintf(&buf, "|%s|\n", strings.Join(align, "|"))
		for _, r := range t.Rows {
			cells := mapStrings(r.Head, mdEscape)
			if r.Base && len(cells) > 0 {
				cells[len(cells)-1] = "**" + cells[len(cells)-1] + "**"
			}
			for _, c := range r.Cells {
				cells = append(cells, mdEscape(cellText(c, r.Base, true)))
			}
			fmt.Fprintf(&buf, "| %s |\n", strings.Join(cells, " | "))
		}
		buf.WriteString("\n")
		for _, l := range t.Legend {
			fmt.Fprintf(&buf, "_%s_  \n", mdEscape(l))
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("report: write Markdown: %w", err)
	}
	return nil
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;").Replace(s)
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
func CSVHeader() []string {
	return []string{"table", "row", "column", "base", "value", "min", "max", "n", "unit",
		"ratio", "p_value", "significant", "noisy", "class"}
}

// RenderCSV writes the comparison in long format (CSVHeader), comma-separated (sep ',')
// or tab-separated (sep '\t'). row is the row's head cells joined by " / "; value is the
// median (for relative tables the ratio of medians) in base units (µs, s, rows/s, GiB).
func RenderCSV(w io.Writer, c Comparison, sep rune) error {
	cw := csv.NewWriter(w)
	cw.Comma = sep
	if err := cw.Write(CSVHeader()); err != nil {
		return fmt.Errorf("report: write CSV: %w", err)
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
					strconv.FormatBool(cell.Noisy), string(cell.Class)}
				if cell.Rel != nil {
					rec[9], rec[10], rec[11] = num(cell.Rel.Ratio), num(cell.Rel.P), strconv.FormatBool(cell.Rel.Significant)
				}
				if err := cw.Write(rec); err != nil {
					return fmt.Errorf("report: write CSV: %w", err)
				}
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("report: write CSV: %w", err)
	}
	return nil
}

// writeAligned writes rows as columns two spaces apart: head columns left-aligned, value
// columns right-aligned, each cell wrapped in its colour (if any) after padding, so that
// escape sequences never upset the alignment.
func writeAligned(buf *bytes.Buffer, rows, colours [][]string, headCols int) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for ri, r := range rows {
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				line.WriteString("  ")
			}
			col := ""
			if ri < len(colours) && i < len(colours[ri]) {
				col = colours[ri][i]
			}
			text := c
			if col != "" {
				text = col + c + ansiReset
			}
			if i < headCols {
				line.WriteString(text + pad)
			} else {
				line.WriteString(pad + text)
			}
		}
		buf.WriteString(strings.TrimRight(line.String(), " "))
		buf.WriteString("\n")
	}
}
