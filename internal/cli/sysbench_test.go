package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/workload/sysbench"
	"github.com/dbperf/dbperf/internal/workload/workloadtest"
)

// sysbenchSteps is the sysbench suite's sequence at --scale tiny (reference §3.4): the
// steps its plan has, which the suite's own tests (TestPlanNamesAndOrder) pin to §3.4's.
func sysbenchSteps(t *testing.T) []string {
	t.Helper()
	return workloadtest.Names(workloadtest.Plan(t, sysbench.New(), "--scale", "tiny"))
}

// sbOp and sbStep are the parts of the JSON contract the sysbench tests read.
type sbOp struct {
	Unit         string  `json:"unit"`
	Count        int64   `json:"count"`
	PerSec       float64 `json:"per_sec"`
	Statements   int64   `json:"statements"`
	Events       int64   `json:"events"`
	EventsPerSec float64 `json:"events_per_sec"`
	Rows         int64   `json:"rows"`
	P99          int64   `json:"p99_us"`
}

type sbStep struct {
	Name    string          `json:"name"`
	Group   string          `json:"group"`
	Kind    string          `json:"kind"`
	Status  string          `json:"status"`
	Error   string          `json:"error"`
	Primary string          `json:"primary"`
	Note    string          `json:"note"`
	Ops     map[string]sbOp `json:"ops"`
	Audit   struct {
		Status string `json:"status"`
		Detail string `json:"detail"`
	} `json:"audit"`
	HW      map[string]any     `json:"hw"`
	ConnCPU map[string]float64 `json:"conn_cpu"`
}

type sbRun struct {
	Status string         `json:"status"`
	Engine string         `json:"engine"`
	Params map[string]any `json:"params"`
	Steps  []sbStep       `json:"steps"`
}

func sysbenchReport(t *testing.T, results string, runs ...string) []sbRun {
	t.Helper()
	args := append([]string{"report", "--results", results, "--format", "json"}, runs...)
	code, out, stderr := runCLI(t, nil, args...)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	var rep struct {
		Runs []sbRun `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, out)
	}
	return rep.Runs
}

// statementsPerEvent is what sysbench counts as queries per event (§3.6): BEGIN and
// COMMIT included.
func statementsPerEvent(test string) int64 {
	switch {
	case strings.HasPrefix(test, "read-only-count"):
		return 1
	case strings.HasPrefix(test, "read-only-"):
		return 13
	case strings.HasPrefix(test, "read-only"):
		return 16
	case strings.HasPrefix(test, "read-write"):
		return 20
	case strings.HasPrefix(test, "write-only"):
		return 6
	}
	return 1
}

// checkSysbenchRun checks a whole tiny run: every step of the sequence ok, in order, in
// its group; the tests' QPS and events, sysbench's statements per event, scan's rows;
// the data check after the load and every write test; HW efficiency per query.
func checkSysbenchRun(t *testing.T, run sbRun, server bool) {
	t.Helper()
	if run.Status != "ok" {
		t.Errorf("run status %s", run.Status)
	}
	var got []string
	for _, st := range run.Steps {
		got = append(got, st.Name)
	}
	if want := sysbenchSteps(t); !slices.Equal(got, want) {
		t.Fatalf("steps:\n got %q\nwant %q", got, want)
	}
	writes := []string{"load", "update-", "write-only", "read-write", "delete", "insert"}
	for _, st := range run.Steps {
		if st.Status != "ok" || st.Audit.Status != "ok" {
			t.Errorf("%s: %s, audit %s: %s %s", st.Name, st.Status, st.Audit.Status, st.Audit.Detail, st.Error)
			continue
		}
		if strings.HasPrefix(st.Name, "cleanup.") {
			if st.Kind != "cleanup" || st.Group != "" {
				t.Errorf("%s: kind %s group %q", st.Name, st.Kind, st.Group)
			}
			continue
		}
		wantGroup := map[bool]string{true: "warm-up"}[strings.Contains(st.Name, ".warm") || strings.Contains(st.Name, ".pre")]
		if wantGroup != "" && st.Group != wantGroup || st.Group == "" {
			t.Errorf("%s: group %q", st.Name, st.Group)
		}
		p := st.Ops[st.Primary]
		if p.Count <= 0 || p.PerSec <= 0 || p.Events <= 0 || p.EventsPerSec <= 0 {
			t.Errorf("%s: primary %s without throughput: %+v", st.Name, st.Primary, p)
		}
		test := strings.Split(st.Name, ".")[0]
		switch {
		case st.Name == "load":
			if p.Unit != "rows" || p.Rows != 10000 || st.Ops["index"].Rows != 10000 {
				t.Errorf("load: %+v, index %+v", p, st.Ops["index"])
			}
		case test == "scan":
			// Rows scanned per second: each scan reads the whole table.
			if p.Unit != "rows" || p.Rows < p.Events*1000 {
				t.Errorf("%s: %d rows for %d scans", st.Name, p.Rows, p.Events)
			}
		default:
			if p.Unit != "ops" || p.Statements != p.Events*statementsPerEvent(test) || p.Count != p.Statements {
				t.Errorf("%s: %d statements for %d events, want %d each", st.Name, p.Statements, p.Events, statementsPerEvent(test))
			}
		}
		wrote := false
		for _, w := range writes {
			wrote = wrote || strings.HasPrefix(st.Name, w)
		}
		if wrote != strings.Contains(st.Audit.Detail, "sbtest1: ") {
			t.Errorf("%s: data check %q", st.Name, st.Audit.Detail)
		}
		if v, _ := st.HW["cpupq"].(float64); v <= 0 {
			t.Errorf("%s: cpupq %v (absent: %v)", st.Name, st.HW["cpupq"], st.HW["absent"])
		}
		if server && st.Name != "load" {
			if v, _ := st.HW["server_cpupq"].(float64); v <= 0 {
				t.Errorf("%s: server_cpupq %v (absent: %v)", st.Name, st.HW["server_cpupq"], st.HW["absent"])
			}
			if st.ConnCPU["query"] <= 0 {
				t.Errorf("%s: the query sessions' CPU %v", st.Name, st.ConnCPU)
			}
		}
		if strings.HasPrefix(st.Name, "update-") || st.Name == "delete" || st.Name == "insert" {
			if _, ok := st.HW["wkbpi"]; !ok && st.HW["io_devices"] != nil {
				t.Errorf("%s: no wkbpi (absent: %v)", st.Name, st.HW["absent"])
			}
		}
	}
}

// TestSysbenchTinyEndToEnd is issue 10's acceptance on SQLite: `dbperf run sysbench
// --scale tiny` runs every test ok, then two configs compare by step group (each test
// 0.2 s, as on the managed servers: the same steps and checks in a fifth of the time).
func TestSysbenchTinyEndToEnd(t *testing.T) {
	t.Parallel() // asserts the suite's steps, audits and statement counts, not rates
	if testing.Short() {
		t.Skip("runs the whole sysbench suite at tiny scale")
	}
	results := filepath.Join(t.TempDir(), "r.db")
	start := time.Now()
	code, stdout, stderr := runCLI(t, nil, "run", "sysbench", "--scale", "tiny", "--time", "0.2", "--results", results, "--quiet", "--label", "ps")
	if code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("tiny suite on SQLite took %v", time.Since(start))
	runs := sysbenchReport(t, results)
	if run := runs[0]; run.Engine != "sqlite" || run.Params["scale"] != "tiny" || run.Params["prepared"] != true {
		t.Errorf("run: %s %v", run.Engine, run.Params)
	}
	checkSysbenchRun(t, runs[0], false)

	// A second config: text statements and two threads on a few tests of each group.
	code, _, stderr = runCLI(t, nil, "run", "sysbench", "--scale", "tiny", "--results", results, "--quiet", "--label", "noprep",
		"--prepared=false", "--clients", "2", "--time", "0.2", "--tests", "point-query,range-covered-pk,read-only,write-only,update-index")
	if code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	// The two configs differ in clients and time, not only in the statements: report
	// refuses them (exit 2, naming each difference) unless --force.
	if code, _, stderr := runCLI(t, nil, "report", "--results", results, "ps", "noprep"); code != ExitBadInput || !strings.Contains(stderr, "clients: 1 (ps) vs 2 (noprep)") {
		t.Errorf("report of differing configs: exit %d, %s", code, stderr)
	}
	code, text, stderr := runCLI(t, nil, "report", "--results", results, "--force", "ps", "noprep")
	if code != 0 {
		t.Fatalf("report: %s", stderr)
	}
	for _, want := range []string{"point queries", "range queries without aggregation", "range queries with aggregation", "writes", "geomean"} {
		if !strings.Contains(text, want) {
			t.Errorf("the comparison shows no %q:\n%s", want, text)
		}
	}
}

// TestSysbenchManagedServers is the acceptance on managed PostgreSQL, MariaDB InnoDB and
// MyRocks: the whole tiny suite ok with CPU per query (each test 0.5 s instead of tiny's
// 1 s: the same steps and checks in half the CI time); then text statements
// (--prepared=false) and two threads on the write tests, where threads conflict.
func TestSysbenchManagedServers(t *testing.T) {
	for _, tc := range []struct {
		name, engine string
		args         []string
	}{
		{"postgres", "postgres", []string{"--engine", "postgres"}},
		{"mariadb innodb", "mariadb", []string{"--engine", "mariadb"}},
		{"mariadb myrocks", "mariadb", []string{"--engine", "mariadb", "--mysql-storage-engine", "rocksdb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needServer(t, tc.engine)
			// The three servers' suites run side by side (each its own server, work dir
			// and store): they assert completeness and audits, not rates.
			t.Parallel()
			tmp := serverWorkdir(t)
			results := filepath.Join(tmp, "r.db")
			common := append([]string{"run", "sysbench", "--managed", "--scale", "tiny", "--quiet", "--results", results,
				"--workdir", tmp, "--profiles-dir", "../../profiles"}, tc.args...)
			start := time.Now()
			code, _, stderr := runCLI(t, nil, append(slices.Clone(common), "--time", "0.2")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			t.Logf("tiny suite took %v", time.Since(start))
			waitNoServers(t, tmp)
			checkSysbenchRun(t, sysbenchReport(t, results)[0], true)

			args := append(slices.Clone(common), "--prepared=false", "--threads", "2", "--time", "0.3",
				"--tests", "update-inlist,update-one,write-only,read-write,delete,insert,point-query,scan,read-only-count")
			if code, _, stderr := runCLI(t, nil, args...); code != 0 {
				t.Fatalf("--prepared=false --threads 2: exit %d: %s", code, stderr)
			}
			waitNoServers(t, tmp)
			run := sysbenchReport(t, results, "2")[0]
			if run.Status != "ok" || run.Params["prepared"] != false {
				t.Errorf("--prepared=false run: %s %v", run.Status, run.Params["prepared"])
			}
			for _, st := range run.Steps {
				if st.Status != "ok" || st.Audit.Status != "ok" {
					t.Errorf("%s: %s, audit %s: %s %s", st.Name, st.Status, st.Audit.Status, st.Audit.Detail, st.Error)
				}
				if st.Note != "" && !strings.HasPrefix(st.Name, "cleanup") {
					t.Logf("%s: %s", st.Name, st.Note)
				}
			}
		})
	}
}

// Bad sysbench input is one line and exit status 2, before anything runs.
func TestSysbenchBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tests", "point-query,point-querys"}, `--tests: unknown test "point-querys": sysbench has point-query.warm,`},
		{[]string{"--threads", "2", "--clients", "2"}, "--threads and --clients both given: --clients 2 is --threads 2; give one"},
		{[]string{"--threads", "1,4", "--steps", "load,point-query"}, `--steps: unknown step "point-query": with these --threads and --range-size, sysbench has load,point-query.warm.t1,`},
		{[]string{"--tests", "scan", "--steps", "load"}, "--tests and --steps both given"},
		{[]string{"--steps", "point-query"}, "--steps point-query needs the tables the load step creates"},
		{[]string{"--table-size", "0"}, "--table-size must be within 1..1073741823"},
	} {
		code, stdout, stderr := runCLI(t, nil, append([]string{"run", "sysbench", "--scale", "tiny"}, tc.args...)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != ExitBadInput || stdout != "" || len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}
