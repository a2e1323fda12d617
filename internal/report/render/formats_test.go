package render

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
)

// TestFormatLists: the formats' names and order are what --format has always offered
// (the first the default), each with a distinct name and an extension.
func TestFormatLists(t *testing.T) {
	for _, tc := range []struct {
		what      string
		names     []string
		exts      []string
		wantNames []string
	}{
		{"report", Names(ReportFormats()), exts(ReportFormats()), []string{"text", "md", "csv", "tsv", "json", "html", "github", "bmf"}},
		{"history", Names(HistoryFormats()), exts(HistoryFormats()), []string{"text", "md", "json", "html"}},
		{"compare", Names(BenchFormats()), exts(BenchFormats()), []string{"text"}},
	} {
		if !slices.Equal(tc.names, tc.wantNames) {
			t.Errorf("%s formats %q, want %q", tc.what, tc.names, tc.wantNames)
		}
		for i, e := range tc.exts {
			if e == "" || strings.HasPrefix(e, ".") {
				t.Errorf("%s format %s: extension %q", tc.what, tc.names[i], e)
			}
		}
	}
	if _, err := Lookup(ReportFormats(), "pdf"); err == nil || !strings.Contains(err.Error(), "text, md, csv, tsv, json, html, github, bmf") {
		t.Errorf("Lookup pdf: %v", err)
	}
	if f, err := Lookup(HistoryFormats(), "html"); err != nil || f.Name != "html" {
		t.Errorf("Lookup html: %+v %v", f, err)
	}
}

func exts[V any](formats []Format[V]) []string {
	var out []string
	for _, f := range formats {
		out = append(out, f.Ext)
	}
	return out
}

// TestReportFormatsRender: each format writes what its renderer does: text is one run's
// report or the comparison (coloured as told), the others render the report's comparison.
func TestReportFormatsRender(t *testing.T) {
	rep, c := reporttest.Compared()
	one := report.Build(reporttest.Runs())
	one.Runs = one.Runs[:1]
	for _, tc := range []struct {
		format string
		rep    report.Report
		o      Options
		direct func(io.Writer) error
	}{
		{"text", one, Options{}, func(w io.Writer) error { return Text(w, one) }},
		{"text", rep, Options{}, func(w io.Writer) error { return CompareText(w, c, false) }},
		{"text", rep, Options{Colour: true}, func(w io.Writer) error { return CompareText(w, c, true) }},
		{"md", rep, Options{}, func(w io.Writer) error { return Markdown(w, c) }},
		{"csv", rep, Options{}, func(w io.Writer) error { return CSV(w, c, ',') }},
		{"tsv", rep, Options{}, func(w io.Writer) error { return CSV(w, c, '\t') }},
		{"json", rep, Options{}, func(w io.Writer) error { return JSON(w, rep) }},
		{"html", rep, Options{}, func(w io.Writer) error { return HTML(w, rep) }},
		{"md", one, Options{}, func(w io.Writer) error { return Markdown(w, one.Compared()) }},
	} {
		f, err := Lookup(ReportFormats(), tc.format)
		if err != nil {
			t.Fatal(err)
		}
		var got, want bytes.Buffer
		if err := f.Render(&got, tc.rep, tc.o); err != nil {
			t.Fatalf("%s: %v", tc.format, err)
		}
		if err := tc.direct(&want); err != nil {
			t.Fatal(err)
		}
		if got.Len() == 0 || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s (%d runs, %+v): the format's output differs from its renderer's", tc.format, len(tc.rep.Runs), tc.o)
		}
	}
}

// TestHistoryFormatsRender: the HTML history links run ids only when told to.
func TestHistoryFormatsRender(t *testing.T) {
	h, err := report.BuildHistory(reporttest.ChangeSeries(), report.HistoryOptions{Detect: reporttest.Detect()})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Lookup(HistoryFormats(), "html")
	if err != nil {
		t.Fatal(err)
	}
	var plain, linked bytes.Buffer
	if err := f.Render(&plain, h, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Render(&linked, h, Options{RunURL: "/run/"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), `<a href=`) || !strings.Contains(linked.String(), `<a href="/run/9">9</a>`) {
		t.Errorf("run links: plain has one %v, linked has run 9's %v", strings.Contains(plain.String(), `<a href=`),
			strings.Contains(linked.String(), `<a href="/run/9">9</a>`))
	}
}
