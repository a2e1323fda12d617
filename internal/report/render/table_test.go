package render

import (
	"bytes"
	"strings"
	"testing"
	"text/tabwriter"
)

// TestTableAligns: left columns padded after, right columns before, two spaces apart,
// widths in runes, colours around the padded cell, cells Printable, no trailing spaces.
func TestTableAligns(t *testing.T) {
	var buf bytes.Buffer
	tb := newTable(&buf, 1)
	tb.row("config", "l.i0", "qp100")
	tb.colouredRow([]string{"a", "1.00", "1.20 ▲"}, []string{"", ansiGrey, ansiGreen})
	tb.row("b\nFAKE", "µs", "")
	if err := tb.flush(); err != nil {
		t.Fatal(err)
	}
	want := "config   l.i0   qp100\n" +
		"a        " + ansiGrey + "1.00" + ansiReset + "  " + ansiGreen + "1.20 ▲" + ansiReset + "\n" +
		`b\nFAKE    µs` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// TestTableAllLeftIsTabwriter: with every column left-aligned the table lays rows out as
// text/tabwriter did for the run report before (padding 2, trailing spaces trimmed),
// short rows and empty cells included.
func TestTableAllLeftIsTabwriter(t *testing.T) {
	rows := [][]string{
		{"step", "status", "secs", "throughput", "ops (per sec, p99)"},
		{"l.i0", "ok", "2.0", "50000 rows/s", "insert 50000/s p99 2.1ms"},
		{"", "", "", "", "delete 86.8/s p99 2.1ms"},
		{"qp100 µs", "failed"},
		{"", "", "", "", ""},
		{"x", "", "12345678901", "", "y"},
	}
	var got bytes.Buffer
	tb := newTable(&got, allLeft)
	for _, r := range rows {
		tb.row(r...)
	}
	if err := tb.flush(); err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	tw := tabwriter.NewWriter(&raw, 0, 8, 2, ' ', 0)
	for _, r := range rows {
		r = append(r, make([]string, len(rows[0])-len(r))...)
		if _, err := tw.Write([]byte(strings.Join(r, "\t") + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, l := range strings.SplitAfter(strings.TrimSuffix(raw.String(), "\n"), "\n") {
		want.WriteString(strings.TrimRight(l, " \n") + "\n")
	}
	if got.String() != want.String() {
		t.Errorf("got\n%s\nwant (tabwriter)\n%s", got.String(), want.String())
	}
}

func TestMarkdownTable(t *testing.T) {
	var buf bytes.Buffer
	writeMarkdownTable(&buf, []string{"config", "l.i0"}, func(i int) bool { return i > 0 }, [][]string{{"**a**", "1.00"}, {"b", "1.20 ▲"}})
	want := "| config | l.i0 |\n|---|---:|\n| **a** | 1.00 |\n| b | 1.20 ▲ |\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}
