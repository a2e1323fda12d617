package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/store"
)

// connCPURuns are the shape: config b's query role did three times a's work, so
// more seconds (0.53 against 0.23) for fewer µs per query (117 against 159); each run
// also measured the client process, which has no operations of its own.
func connCPURuns() []store.Run {
	run := func(id int64, label string, queries int64, sec float64) store.Run {
		res := metrics.StepResult{Name: "qp100", Status: metrics.StatusOK, Seconds: 10, Kind: "read-write", Primary: "point-query",
			Labels: []metrics.LabelStats{
				{Label: "point-query", Role: "query", Unit: metrics.UnitOps, Statements: queries, Events: queries, Rows: queries},
				{Label: "insert", Role: "insert", Unit: metrics.UnitRows, Statements: 10, Events: 10, Rows: 1000},
			},
			ConnCPU: []metrics.ConnCPU{{Role: "query", Sessions: 1, CPUSec: sec}, {Role: "insert", Sessions: 1, CPUSec: 0.05},
				{Role: metrics.ConnCPUClientProcess, Sessions: 2, CPUSec: 0.3}},
			Metrics: map[string]float64{metrics.MetricServerCPUPerOp: 500},
		}
		return store.Run{ID: id, Status: store.RunOK, Steps: []store.Step{{ID: id, Seq: 1, Result: res}},
			RunMeta: store.RunMeta{Workload: "insertbench", WorkloadVersion: 3, Engine: "postgres", Label: label,
				Params: map[string]any{"clients": json.Number("1")}}}
	}
	return []store.Run{run(1, "a", 1447, 0.23), run(2, "b", 4530, 0.53)}
}

func TestConnCPURendered(t *testing.T) {
	rep := report.Build(connCPURuns())
	c := report.Compare(rep, []report.Group{{Name: "a", RunIDs: []int64{1}}, {Name: "b", RunIDs: []int64{2}}}, 0)
	rep.Comparison = &c

	var txt bytes.Buffer
	if err := CompareText(&txt, c, false); err != nil {
		t.Fatal(err)
	}
	table := txt.String()[strings.Index(txt.String(), "Server CPU per connection role (µs per operation of the role's own work)"):]
	lines := map[string]bool{}
	for _, l := range strings.Split(table, "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	for _, want := range []string{"query a 159 µs/query", "query b 117 µs/query", "insert a 50.0 µs/row", "client_process a 0.30 s"} {
		if !lines[want] {
			t.Errorf("comparison text lacks the row %q:\n%s", want, table)
		}
	}

	var run bytes.Buffer
	if err := Text(&run, report.Report{Runs: rep.Runs[:1]}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"query 159 µs/query", "insert 50.0 µs/row", "client process 0.30 s", "conn cpu: server CPU"} {
		if !strings.Contains(run.String(), want) {
			t.Errorf("run text lacks %q:\n%s", want, run.String())
		}
	}

	var csv bytes.Buffer
	if err := CSV(&csv, c, ','); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(csv.String(), "conn_cpu,query / b,qp100,false,116.99") || !strings.Contains(csv.String(), ",µs/query,") ||
		!strings.Contains(csv.String(), "conn_cpu,client_process / a,qp100,true,0.3,0.3,0.3,1,s,") {
		t.Errorf("CSV:\n%s", csv.String())
	}

	var js bytes.Buffer
	if err := JSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Steps []struct {
				ConnCPU        map[string]float64 `json:"conn_cpu"`
				ConnCPUUSPerOp map[string]float64 `json:"conn_cpu_us_per_op"`
			} `json:"steps"`
		} `json:"runs"`
		Comparison struct {
			Tables []struct {
				ID   string `json:"id"`
				Rows []struct {
					Head  []string `json:"head"`
					Cells []*struct {
						Value  float64  `json:"value"`
						Unit   string   `json:"unit"`
						CPUSec *float64 `json:"cpu_sec"`
						Ops    *float64 `json:"ops"`
					} `json:"cells"`
				} `json:"rows"`
			} `json:"tables"`
		} `json:"comparison"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	st := doc.Runs[1].Steps[0]
	if st.ConnCPU["query"] != 0.53 || int(st.ConnCPUUSPerOp["query"]+0.5) != 117 {
		t.Errorf("run b's step: conn_cpu %v, conn_cpu_us_per_op %v", st.ConnCPU, st.ConnCPUUSPerOp)
	}
	if _, ok := st.ConnCPUUSPerOp[metrics.ConnCPUClientProcess]; ok {
		t.Errorf("the client process has no operations of its own, yet a per-op figure: %v", st.ConnCPUUSPerOp)
	}
	found := 0
	for _, tb := range doc.Comparison.Tables {
		if tb.ID != "conn_cpu" {
			continue
		}
		for _, r := range tb.Rows {
			cell := r.Cells[0]
			switch strings.Join(r.Head, "/") {
			case "query/b":
				found++
				if cell.Unit != "µs/query" || int(cell.Value+0.5) != 117 || cell.CPUSec == nil || *cell.CPUSec != 0.53 || cell.Ops == nil || *cell.Ops != 4530 {
					t.Errorf("query/b: %+v", *cell)
				}
			case "client_process/a":
				found++
				if cell.Unit != "s" || cell.Value != 0.3 || cell.CPUSec == nil || *cell.CPUSec != 0.3 || cell.Ops != nil {
					t.Errorf("client_process/a: %+v", *cell)
				}
			}
		}
	}
	if found != 2 {
		t.Errorf("conn_cpu table: %d of the 2 rows checked found", found)
	}
}
