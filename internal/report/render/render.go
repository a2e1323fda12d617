// Package render formats what package report decides: the run report, the runs list, the
// comparison, the benchstat view and the history, as text, Markdown, CSV/TSV, JSON or
// HTML. Every number, verdict, cell class and note comes from the report model; a
// renderer only spells it out (one aligned-text table for every text output, table.go).
// The formats each command offers are the lists ReportFormats, HistoryFormats and
// BenchFormats return.
//
// The outputs: the run report and the runs list (text); the comparison (text with colour
// or markers, Markdown, CSV/TSV with formula cells quoted, the JSON contract, and a
// self-contained HTML page with SVG charts from report/chart); `dbperf compare`'s
// benchstat view; the history (text, Markdown, JSON, HTML); `dbperf explain` (text,
// JSON); and `dbperf queue`'s jobs and agents (Queue, text). flame.go draws differential flame graphs as inline SVG with our own code
// (FlameSVG), in the HTML comparison and so in `dbperf serve`.
//
// The format registry is ReportFormats, HistoryFormats, BenchFormats and ExplainFormats:
// explicit lists of Format{Name, Ext, Render}, which `report --format`, `history
// --format` and `compare` check, list in their help and dispatch on. A new format is an
// entry in one of them.
//
// CSV is long: one file, one line per table cell (table,row,column,…), then one per note
// (table notes), because the tables have different shapes; scripts pivot as they like.
// The columns verdict, mde_pct, paired and note were added after class, and p_value, no
// longer computed, stays as an empty column, so scripts that read columns by position
// keep working.
package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/dbperf/dbperf/internal/report"
)

// Options are what a renderer is told besides what it renders.
type Options struct {
	// Colour lets the text comparison colour its cells (ANSI escapes; markers otherwise).
	Colour bool
	// RunURL makes every run id of an HTML history a link to RunURL followed by the id
	// ("" = no links).
	RunURL string
}

// Format is one output format of a command: the value of its --format, the extension of
// a file in that format, and the renderer, which writes a V to w.
type Format[V any] struct {
	Name string
	Ext  string
	// Render writes v to w in this format.
	Render func(w io.Writer, v V, o Options) error
}

// ReportFormats are the formats of `dbperf report` (the first is the default): text (one
// run: its report; several: the comparison, coloured with Options.Colour), Markdown, CSV,
// TSV, JSON, an HTML page, a pull-request comment (github) and the Bencher Metric Format
// (bmf). The report's Comparison is the one rendered (every run its
// own config when nil: report.Report.Compared).
func ReportFormats() []Format[report.Report] {
	return []Format[report.Report]{
		{Name: "text", Ext: "txt", Render: func(w io.Writer, rep report.Report, o Options) error {
			if len(rep.Runs) == 1 {
				return Text(w, rep)
			}
			return CompareText(w, rep.Compared(), o.Colour)
		}},
		{Name: "md", Ext: "md", Render: func(w io.Writer, rep report.Report, _ Options) error {
			return Markdown(w, rep.Compared())
		}},
		{Name: "csv", Ext: "csv", Render: func(w io.Writer, rep report.Report, _ Options) error {
			return CSV(w, rep.Compared(), ',')
		}},
		{Name: "tsv", Ext: "tsv", Render: func(w io.Writer, rep report.Report, _ Options) error {
			return CSV(w, rep.Compared(), '\t')
		}},
		{Name: "json", Ext: "json", Render: func(w io.Writer, rep report.Report, _ Options) error {
			return JSON(w, rep)
		}},
		{Name: "html", Ext: "html", Render: func(w io.Writer, rep report.Report, _ Options) error {
			return HTML(w, rep)
		}},
		{Name: "github", Ext: "md", Render: func(w io.Writer, rep report.Report, _ Options) error {
			return GitHub(w, rep.Compared())
		}},
		{Name: "bmf", Ext: "json", Render: func(w io.Writer, rep report.Report, _ Options) error {
			return BMF(w, rep.Compared())
		}},
	}
}

// HistoryFormats are the formats of `dbperf history` (the first is the default): text,
// Markdown, JSON and an HTML page with charts (run ids linked with Options.RunURL).
func HistoryFormats() []Format[report.History] {
	return []Format[report.History]{
		{Name: "text", Ext: "txt", Render: func(w io.Writer, h report.History, _ Options) error {
			return HistoryText(w, h)
		}},
		{Name: "md", Ext: "md", Render: func(w io.Writer, h report.History, _ Options) error {
			return HistoryMarkdown(w, h)
		}},
		{Name: "json", Ext: "json", Render: func(w io.Writer, h report.History, _ Options) error {
			return HistoryJSON(w, h)
		}},
		{Name: "html", Ext: "html", Render: func(w io.Writer, h report.History, o Options) error {
			return HistoryHTML(w, h, o.RunURL)
		}},
	}
}

// BenchFormats are the formats of `dbperf compare`: its benchstat-style text.
func BenchFormats() []Format[[]report.BenchTable] {
	return []Format[[]report.BenchTable]{
		{Name: "text", Ext: "txt", Render: func(w io.Writer, tables []report.BenchTable, _ Options) error {
			return Bench(w, tables)
		}},
	}
}

// Names are the formats' names, in order.
func Names[V any](formats []Format[V]) []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.Name
	}
	return names
}

// Lookup finds the format called name; the error names the formats there are.
func Lookup[V any](formats []Format[V], name string) (Format[V], error) {
	for _, f := range formats {
		if f.Name == name {
			return f, nil
		}
	}
	return Format[V]{}, fmt.Errorf("format %q is not supported: use one of %s", name, strings.Join(Names(formats), ", "))
}
