package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
	"github.com/dbperf/dbperf/internal/store"
)

// TestPerMinuteRendered (issue 41): a TPROC-C comparison prints NOPM and TPM per config,
// NOPM 60× the run step's new orders per second — blocks of 301–306/s: median 18210,
// range 18060–18360 — and TPM 60× the committed types' (692–702/s), in text, JSON and
// HTML, with the ratio to the base.
func TestPerMinuteRendered(t *testing.T) {
	t.Parallel()
	var runs []store.Run
	groups := []report.Group{{Name: "13"}, {Name: "15"}}
	for b := 1; b <= 6; b++ {
		no := int64(300 + b)
		runs = append(runs, reporttest.TPCCRun(int64(2*b-1), "13", b, no), reporttest.TPCCRun(int64(2*b), "15", b, no*11/10))
		groups[0].RunIDs, groups[1].RunIDs = append(groups[0].RunIDs, int64(2*b-1)), append(groups[1].RunIDs, int64(2*b))
	}
	rep := report.Build(runs)
	c := report.Compare(rep, groups, 0)
	rep.Comparison = &c

	var buf bytes.Buffer
	if err := CompareText(&buf, c, false); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{
		"Per minute, as the workload's reference counts\nconfig             run NOPM    run NOPM vs base              run TPM     run TPM vs base\n",
		"\n13      18210 [18060–18360]                1.00  41820 [41520–42120]                1.00\n",
		"\n15      20010 [19860–20160]  1.10 [1.10–1.10] ▲  45960 [45660–46260]  1.10 [1.10–1.10] ▲\n",
		"NOPM: committed new orders per minute (HammerDB's): the step's rate of new-order × 60",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the text has no %q:\n%s", want, text)
		}
	}

	buf.Reset()
	if err := JSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Comparison struct {
			Tables []struct {
				ID      string   `json:"id"`
				Columns []string `json:"columns"`
				Rows    []struct {
					Head  []string `json:"head"`
					Cells []*struct {
						Value, Min, Max float64
						Unit            string
					} `json:"cells"`
				} `json:"rows"`
			} `json:"tables"`
		} `json:"comparison"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tb := range doc.Comparison.Tables {
		if tb.ID != "per_minute" || len(tb.Rows) != 2 || len(tb.Columns) == 0 || tb.Columns[0] != "run NOPM" {
			continue
		}
		cell := tb.Rows[0].Cells[0]
		found = cell != nil && cell.Value == 18210 && cell.Min == 18060 && cell.Max == 18360 && cell.Unit == report.UnitPerMinute
		if !found {
			t.Errorf("JSON's NOPM of 13: %+v", cell)
		}
	}
	if !found {
		t.Errorf("the JSON has no per_minute table with run NOPM:\n%s", buf.String())
	}

	buf.Reset()
	if err := HTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="per_minute"`, "run NOPM", "18210 [18060–18360]"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the HTML page has no %q", want)
		}
	}
}
