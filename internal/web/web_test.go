package web

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/store"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// writeRuns writes n runs through the store's writer, each with one step of `ivs`
// intervals: engines alternate sqlite/postgres, hosts h1/h2, labels a/b, one day apart
// from t0, and run 3 failed. It goes to /dev/shm when there is one (fsync is free there:
// a benchmark measures the pages, not the writes).
func writeRuns(tb testing.TB, n, ivs int) string {
	tb.Helper()
	return writeRunsWith(tb, n, ivs, nil)
}

// writeRunsWith is writeRuns with edit applied to the i-th run's metadata (0-based) before
// it is stored.
func writeRunsWith(tb testing.TB, n, ivs int, edit func(i int, m *store.RunMeta)) string {
	tb.Helper()
	parent := ""
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		parent = "/dev/shm"
	}
	dir, err := os.MkdirTemp(parent, "dbperf-web-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "r.db")
	ctx := context.Background()
	st, err := store.Open(ctx, path)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	for i := range n {
		engine, host, label := "sqlite", "h1", "a"
		if i%2 == 1 {
			engine, host, label = "postgres", "h2", "b"
		}
		start := t0.Add(time.Duration(i) * 24 * time.Hour)
		meta := store.RunMeta{Workload: "insertbench", WorkloadVersion: 3, Engine: engine,
			EngineVersion: "1.0", EngineSettings: map[string]string{}, Label: label, Seed: 1,
			Params: map[string]any{"scale": "tiny"}, Env: map[string]string{"hostname": host}, StartedAt: start}
		if edit != nil {
			edit(i, &meta)
		}
		id, err := st.BeginRun(ctx, meta)
		if err != nil {
			tb.Fatal(err)
		}
		sid, err := st.BeginStep(ctx, id, 1, "l.i0", "", start)
		if err != nil {
			tb.Fatal(err)
		}
		lbl := func(n int64) metrics.LabelStats {
			return metrics.LabelStats{Label: "insert", Role: "insert", Unit: metrics.UnitRows, Statements: n, Events: n,
				Rows: n * 10, Service: metrics.Latency{P50: 100 + int64(i%7), P90: 200, P99: 300, P999: 400, P9999: 450, Max: 500}}
		}
		var intervals []metrics.Interval
		for s := range ivs {
			intervals = append(intervals, metrics.Interval{Seq: s, Start: time.Duration(s) * time.Second,
				End: time.Duration(s+1) * time.Second, Labels: []metrics.LabelStats{lbl(1000 + int64(i%5))}, ClientCPUSec: 0.1})
		}
		if err := st.AppendIntervals(ctx, sid, intervals); err != nil {
			tb.Fatal(err)
		}
		if err := st.FinishStep(ctx, sid, metrics.StepResult{Name: "l.i0", Status: metrics.StatusOK, StartedAt: start,
			Seconds: float64(ivs), Kind: "load", Primary: "insert", Labels: []metrics.LabelStats{lbl(int64(ivs) * 1000)},
			Audit: metrics.Audit{Status: "ok", Detail: "fine"}, ClientCPUSec: 0.1 * float64(ivs)}); err != nil {
			tb.Fatal(err)
		}
		status := store.RunOK
		if i == 2 {
			status = store.RunFailed
		}
		if err := st.FinishRun(ctx, id, status, start.Add(time.Minute)); err != nil {
			tb.Fatal(err)
		}
	}
	return path
}

func serveStore(tb testing.TB, path string) *httptest.Server {
	tb.Helper()
	st, err := store.OpenExisting(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	srv, err := New(st)
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	tb.Cleanup(ts.Close)
	return ts
}

func fetch(tb testing.TB, u string) (int, string) {
	tb.Helper()
	resp, err := http.Get(u)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func sum(tb testing.TB, path string) [32]byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestPages(t *testing.T) {
	path := writeRuns(t, 6, 3)
	before := sum(t, path)
	ts := serveStore(t, path)
	runLink := func(id int) string { return fmt.Sprintf(`<a href="/run/%d">%d</a>`, id, id) }
	for _, c := range []struct {
		query       string
		status      int
		want, unwan []string
	}{
		{"/", 200, []string{runLink(6), runLink(1), "runs 1–6 of 6", `class="failed"`, "h2"}, nil},
		{"/?engine=postgres", 200, []string{runLink(2), runLink(4), runLink(6), "of 3"}, []string{runLink(1), runLink(3)}},
		{"/?host=h1&label=a", 200, []string{runLink(1), runLink(3), runLink(5)}, []string{runLink(2)}},
		{"/?from=2026-03-05&to=2026-03-06", 200, []string{runLink(2), runLink(3), "of 2"}, []string{runLink(1), runLink(4)}},
		{"/?to=9999-12-31", 200, []string{runLink(6), runLink(1), "runs 1–6 of 6"}, nil}, // the last day there is: no bound
		{"/?from=9999-12-31", 200, []string{"no run matches"}, []string{runLink(1)}},
		{"/?workload=sysbench", 200, []string{"no run matches"}, []string{runLink(1)}},
		{"/?page=2", 200, []string{"no run matches"}, nil},
		{"/?from=yesterday", 400, []string{"give a date as YYYY-MM-DD"}, nil},
		{"/?page=0", 400, []string{"page number"}, nil},
		{"/run/1", 200, []string{"l.i0", "<svg", "← all runs"}, nil},
		{"/run/99", 404, []string{"99"}, nil},
		{"/run/x", 400, []string{"named by its number"}, nil},
		{"/compare?run=1&run=2", 200, []string{"Throughput relative to run 1", "<svg"}, nil},
		{"/compare?label=a&label=b&base=b", 200, []string{"Throughput relative to b"}, nil},
		{"/compare?run=1&run=2&base=7", 400, []string{"base 7 is not among"}, nil},
		{"/compare?run=1&run=1", 400, []string{"named twice"}, nil},
		{"/compare?label=nosuch", 404, []string{"nosuch"}, nil},
		{"/compare", 400, []string{"tick runs or labels"}, nil},
		{"/compare?run=-1", 400, []string{"named by its number"}, nil},
		{"/elsewhere", 404, []string{"no page /elsewhere"}, nil},
		{"/history?engine=sqlite&metrics=throughput,p99", 200, []string{"l.i0", "<svg", "← all runs"}, nil},
		{"/history?metrics=bogus", 400, []string{"metrics=bogus"}, nil},
		{"/history?order=random", 400, []string{"order=random"}, nil},
		{"/?engine=postgres&label=b", 200, []string{`href="/history?engine=postgres"`}, nil},
		// The history page's form offers what the store holds and shows what is chosen.
		{"/history", 200, []string{`<form class="history"`, `name="steps" value="l.i0">`,
			`name="metrics" value="throughput" checked>`, `name="metrics" value="p99">`,
			"<option>postgres</option>", "<option>insertbench</option>", `<input name="profile"`, "<option selected>time</option>"},
			[]string{`value="l.i0" checked`}},
		{"/history?engine=postgres&steps=l.i0&metrics=p99&metrics=cpupq&order=version", 200, []string{
			`name="steps" value="l.i0" checked>`, `name="metrics" value="p99" checked>`, `name="metrics" value="cpupq" checked>`,
			"<option selected>postgres</option>", "<option selected>version</option>"},
			[]string{`value="throughput" checked`}},
		{"/history?metrics=throughput&metrics=bogus", 400, []string{"metrics=bogus"}, nil},
		{"/history?engine=postgres", 200, []string{`<td><a href="/run/2">2</a></td>`, `<td><a href="/run/4">4</a></td>`}, nil},
	} {
		code, body := fetch(t, ts.URL+c.query)
		if code != c.status {
			t.Errorf("%s: status %d, want %d: %.300s", c.query, code, c.status, body)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %q in the page", c.query, w)
			}
		}
		for _, u := range c.unwan {
			if strings.Contains(body, u) {
				t.Errorf("%s: %q should not be on the page", c.query, u)
			}
		}
		if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Errorf("%s: the page refers to the network", c.query)
		}
	}
	if sum(t, path) != before {
		t.Error("serving changed the results store")
	}
}

// TestHistoryFormQuery: what the history form sends (repeated steps= and metrics=) shows
// the same page as the comma lists `dbperf history` takes, so a link of either kind works.
func TestHistoryFormQuery(t *testing.T) {
	ts := serveStore(t, writeRuns(t, 6, 3))
	_, repeated := fetch(t, ts.URL+"/history?engine=sqlite&steps=l.i0&metrics=throughput&metrics=p99&metrics=p99")
	code, commas := fetch(t, ts.URL+"/history?engine=sqlite&steps=l.i0&metrics=throughput,p99")
	if code != 200 {
		t.Fatalf("status %d: %.300s", code, commas)
	}
	if repeated != commas {
		t.Error("repeated steps=/metrics= and comma lists give different pages")
	}
	for _, w := range []string{`value="throughput" checked`, `value="p99" checked`, "p99"} {
		if !strings.Contains(commas, w) {
			t.Errorf("no %q in the page", w)
		}
	}
	if n := strings.Count(commas, "<svg"); n < 2 {
		t.Errorf("%d charts, want one per metric (2)", n)
	}
}

// TestNewerStore: a store migrated by a newer dbperf while it is served is said so on the
// next page, and the server keeps serving.
func TestNewerStore(t *testing.T) {
	path := writeRuns(t, 2, 1)
	ts := serveStore(t, path)
	if code, _ := fetch(t, ts.URL+"/run/1"); code != 200 {
		t.Fatalf("run page: %d", code)
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", store.SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, body := fetch(t, ts.URL+"/run/1")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "upgrade dbperf") {
		t.Errorf("after a newer dbperf migrated the store: status %d, %.300s", code, body)
	}
	if code, _ := fetch(t, ts.URL+"/"); code != 200 {
		t.Errorf("the runs page after: status %d (it reads only columns every version has)", code)
	}
}

// BenchmarkRunsPage10000 is issue 14's target for the runs page: over a store of 10,000
// runs it answers in under 200 ms (ns/op < 2e8), filtered or not.
func BenchmarkRunsPage10000(b *testing.B) {
	ts := serveStore(b, writeRuns(b, 10_000, 1))
	for _, c := range []struct{ name, q string }{{"all", "/"}, {"filtered", "/?host=h2&from=2026-06-01&page=3"}} {
		q := c.q
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if code, _ := fetch(b, ts.URL+q); code != 200 {
					b.Fatalf("status %d", code)
				}
			}
		})
	}
}

// BenchmarkCompare20 is issue 14's target for a comparison: 20 runs of 30 intervals each,
// two labels, answered in under 500 ms (ns/op < 5e8).
func BenchmarkCompare20(b *testing.B) {
	ts := serveStore(b, writeRuns(b, 20, 30))
	for b.Loop() {
		if code, _ := fetch(b, ts.URL+"/compare?label=a&label=b"); code != 200 {
			b.Fatalf("status %d", code)
		}
	}
}

// TestCompareMismatch: runs that differ in workload, scale or parameters are a 400 page
// naming each difference with a link to the same comparison with force=1; that page is
// the comparison under a visible warning. Runs that agree have no warning.
func TestCompareMismatch(t *testing.T) {
	path := writeRunsWith(t, 4, 2, func(i int, m *store.RunMeta) {
		switch i {
		case 1: // run 2
			m.Workload, m.WorkloadVersion, m.Params = "sysbench", 2, map[string]any{"scale": "small"}
		case 2: // run 3
			m.Params = map[string]any{"scale": "small", "rows": 1000000}
		}
	})
	ts := serveStore(t, path)
	for _, c := range []struct {
		query  string
		status int
		want   []string
		unwant []string
	}{
		{"/compare?run=1&run=2", 400, []string{"<li>workload: insertbench (run 1) vs sysbench (run 2)</li>",
			`<a href="/compare?run=1&amp;run=2&amp;force=1">compare them anyway</a>`}, []string{"<svg"}},
		{"/compare?run=3&run=1&base=1", 400, []string{"<li>scale: small (run 3) vs tiny (run 1)</li>",
			"<li>rows: 1000000 (run 3) vs unset (run 1)</li>", `href="/compare?run=3&amp;run=1&amp;base=1&amp;force=1"`}, nil},
		{"/compare?label=a", 400, []string{"scale differs within a: tiny (run 1) vs small (run 3)"}, nil},
		{"/compare?run=1&run=2&force=1", 200, []string{`class="mismatch"`, "Compared anyway",
			"<li>workload: insertbench (run 1) vs sysbench (run 2)</li>", "← all runs", "Throughput relative to run 1", "<svg"}, nil},
		{"/compare?run=1&run=2&force=0", 400, []string{"compare them anyway"}, nil},
		{"/compare?run=1&run=2&force=maybe", 400, []string{`force=&#34;maybe&#34;: give force=1`}, nil},
		{"/compare?run=1&run=4", 200, []string{"Throughput relative to run 1"}, []string{`class="mismatch"`, "Compared anyway"}},
		{"/run/2", 200, []string{"l.i0"}, []string{`class="mismatch"`}},
	} {
		code, body := fetch(t, ts.URL+c.query)
		if code != c.status {
			t.Errorf("%s: status %d, want %d: %.400s", c.query, code, c.status, body)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %q in the page: %.600s", c.query, w, body)
			}
		}
		for _, u := range c.unwant {
			if strings.Contains(body, u) {
				t.Errorf("%s: %q should not be on the page", c.query, u)
			}
		}
	}
}

// TestEdgeCases (issue 23): other methods than GET and HEAD are 405 with Allow; the same
// run twice is a 400; a page number whose offset would overflow is a 400, not page 1; a
// store that cannot be read is a 503 whose page names nothing of the store (its error,
// which may name its host, user and database, goes to the log).
func TestEdgeCases(t *testing.T) {
	path := writeRuns(t, 3, 1)
	st, err := store.OpenExisting(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(st)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	srv.Log = &log
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		for _, p := range []string{"/", "/run/1", "/compare?run=1&run=2", "/history", "/nosuch"} {
			req, err := http.NewRequest(method, ts.URL+p, strings.NewReader("x=1"))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: status %d, Allow %q; want 405, GET, HEAD", method, p, resp.StatusCode, resp.Header.Get("Allow"))
			}
		}
	}
	if resp, err := http.Head(ts.URL + "/"); err != nil || resp.StatusCode != 200 {
		t.Errorf("HEAD /: %v %v", resp, err)
	}
	for _, c := range []struct {
		query  string
		status int
		want   string
	}{
		{"/compare?run=1&run=1", 400, "named twice"},
		{"/?label=%00", 400, "label=: not text"},
		{"/compare?label=a%ffb", 400, "label=: not text"},
		{"/history?engine=x%00", 400, "engine=: not text"},
		{"/compare?label=a&label=a", 400, "named twice"},
		{"/?page=9223372036854775807", 400, "no such page"},
		{"/?page=92233720368547759", 200, "no run matches"},
		{"/?page=99999999999999999999", 400, "page number"},
	} {
		code, body := fetch(t, ts.URL+c.query)
		if code != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: status %d, want %d with %q: %.300s", c.query, code, c.status, c.want, body)
		}
		if strings.Contains(body, `href="/run/1"`) {
			t.Errorf("%s: lists run 1 (the first page)", c.query)
		}
	}

	// The store's error is logged, never shown.
	rec := httptest.NewRecorder()
	srv.storeFailed(rec, httptest.NewRequest(http.MethodGet, "/", nil),
		errors.New("failed to connect to `user=perfuser database=teamdb`: db.example.org:5432 (db.example.org): dial error"))
	for _, secret := range []string{"perfuser", "teamdb", "db.example.org"} {
		if strings.Contains(rec.Body.String(), secret) {
			t.Errorf("the error page shows %q: %s", secret, rec.Body.String())
		}
		if !strings.Contains(log.String(), secret) {
			t.Errorf("the log lacks the store's error: %q", log.String())
		}
	}
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("a store error: status %d, want 503", rec.Code)
	}

	// A store that is gone: every page is a 503 saying so.
	st.Close()
	for _, p := range []string{"/", "/run/1", "/compare?run=1&run=2", "/history"} {
		code, body := fetch(t, ts.URL+p)
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "could not be read") || strings.Contains(body, "closed") {
			t.Errorf("%s with the store down: status %d: %.400s", p, code, body)
		}
	}
}
