// Package web is `dbperf serve`: a read-only web page over a results store to browse the
// runs, open one, tick runs or labels and compare them. The pages are rendered on the
// server with html/template; a run and a comparison are the HTML report itself
// (render.HTML, the page `dbperf report --format html` writes), so the page shows
// the same tables and charts with the same numbers. Nothing is fetched from the network
// and no script runs: every page's state is in its URL, so a link can be shared.
//
// The runs page is store.Browse, filtered and paged in SQL. Runs that differ
// (report.Mismatches) get a 400 page naming each difference, with a link adding force=1,
// which shows the comparison under a warning. The history is render.HistoryHTML's page
// under a form of the page's own (steps and metrics offered from the stored runs).
// report.ResolveGroups, BaseIndex and Load are shared with `dbperf report`. Only GET and
// HEAD are served (405 otherwise). /queue, when the store holds the fleet's queue
// (SetQueue, fleet.OpenReadOnly), shows the agents (host, class, state, job, last
// heartbeat) and the jobs (state, attempt, host, start, runs). A store read that fails
// is a 503 page naming nothing of the store, its error logged. Serve listens at an
// address and serves the pages until its context ends (ServeOptions; *ListenError).
package web

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dbperf/dbperf/internal/changepoint"
	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/render"
	"github.com/dbperf/dbperf/internal/store"
)

// PageSize is how many runs the runs page lists at once.
const PageSize = 100

//go:embed runs.html.tmpl
var runsTemplate string

//go:embed error.html.tmpl
var errorTemplate string

//go:embed history.html.tmpl
var historyFormTemplate string

//go:embed queue.html.tmpl
var queueTemplate string

// mismatchTemplate is the warning above a comparison shown with force=1 although its runs
// differ (report.Mismatches).
const mismatchTemplate = `<div class="mismatch" role="alert" style="font:14px sans-serif;margin:8px 0;padding:8px 12px;` +
	`border:2px solid #b35900;background:#fff4e5;color:#222"><strong>Compared anyway (force=1): these runs differ, ` +
	`so their figures may not be comparable:</strong><ul style="margin:4px 0 0">{{range .}}<li>{{.}}</li>{{end}}</ul></div>`

// Server serves one results store, read-only.
type Server struct {
	// Log, when set, gets a line per request the store failed, with the store's error:
	// the page itself says only that the store could not be read (its error may name
	// the store's host, user and database).
	Log io.Writer

	st      *store.Store
	runs    *template.Template
	error   *template.Template
	history *template.Template
	// mismatch is the warning above a forced comparison.
	mismatch *template.Template
	// queue is the store's job queue and agents (nil: none, a SQLite store), queuePage
	// its page.
	queue     *fleet.Fleet
	queuePage *template.Template
}

// SetQueue shows the store's queue and agents at /queue (f from fleet.OpenReadOnly).
func (s *Server) SetQueue(f *fleet.Fleet) { s.queue = f }

// New serves st; it never writes to it (open it with store.OpenExisting).
func New(st *store.Store) (*Server, error) {
	funcs := template.FuncMap{"time": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }}
	runs, err := template.New("runs").Funcs(funcs).Parse(runsTemplate)
	if err != nil {
		return nil, fmt.Errorf("web: runs page: %w", err)
	}
	errPage, err := template.New("error").Parse(errorTemplate)
	if err != nil {
		return nil, fmt.Errorf("web: error page: %w", err)
	}
	history, err := template.New("history").Parse(historyFormTemplate)
	if err != nil {
		return nil, fmt.Errorf("web: history form: %w", err)
	}
	mismatch, err := template.New("mismatch").Parse(mismatchTemplate)
	if err != nil {
		return nil, fmt.Errorf("web: mismatch warning: %w", err)
	}
	qfuncs := template.FuncMap{"time": funcs["time"],
		"ago":   func(d time.Duration) string { return d.Round(100*time.Millisecond).String() + " ago" },
		"deref": func(p *int64) int64 { return *p }}
	queue, err := template.New("queue").Funcs(qfuncs).Parse(queueTemplate)
	if err != nil {
		return nil, fmt.Errorf("web: queue page: %w", err)
	}
	return &Server{st: st, runs: runs, error: errPage, history: history, mismatch: mismatch, queuePage: queue}, nil
}

// Handler routes the pages: / (the runs), /run/ID (one run), /compare?run=ID&label=L&base=REF[&force=1],
// /history?workload=W&engine=E&profile=P&steps=S,…&metrics=M,…&order=time|version (steps
// and metrics may also repeat, as the history page's form sends them). Every page is
// read with GET or HEAD; any other method is answered 405.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.runsPage)
	mux.HandleFunc("GET /run/{id}", s.runPage)
	mux.HandleFunc("GET /compare", s.comparePage)
	mux.HandleFunc("GET /history", s.historyPage)
	mux.HandleFunc("GET /queue", s.queueView)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusNotFound, fmt.Sprintf("no page %s: the runs are at /", r.URL.Path))
	})
	return headers(readOnly(s, mux))
}

// readOnly answers 405 (Allow: GET, HEAD) to a request of any other method, on every path:
// nothing here changes anything.
func readOnly(s *Server, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			s.fail(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("%s: the pages are read-only, read them with GET", r.Method))
			return
		}
		if name, ok := notText(r.URL.Query()); ok {
			// Stored text never holds such a byte, and a PostgreSQL store refuses to
			// compare with it (it said the store was down): the same answer on every store.
			s.fail(w, r, http.StatusBadRequest, fmt.Sprintf("%s=: not text (a NUL byte or invalid UTF-8); give it as dbperf runs prints it", name))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// notText names the first query parameter whose name or a value holds a NUL byte or is
// not valid UTF-8.
func notText(q url.Values) (string, bool) {
	bad := func(v string) bool { return strings.ContainsRune(v, 0) || !utf8.ValidString(v) }
	for k, vs := range q {
		if bad(k) {
			return strconv.QuoteToASCII(k), true
		}
		for _, v := range vs {
			if bad(v) {
				return k, true
			}
		}
	}
	return "", false
}

// headers: nothing on a page may load from anywhere (inline styles and SVG only), and no
// page is framed or sniffed.
func headers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

// runsFilter is the runs page's state, from its query.
type runsFilter struct {
	Workload, Engine, Version, Label, Host, From, To string
	Page                                             int
}

func parseRunsFilter(q url.Values) (runsFilter, store.BrowseFilter, error) {
	f := runsFilter{Workload: q.Get("workload"), Engine: q.Get("engine"), Version: q.Get("version"),
		Label: q.Get("label"), Host: q.Get("host"), From: q.Get("from"), To: q.Get("to"), Page: 1}
	bf := store.BrowseFilter{Workload: f.Workload, Engine: f.Engine, EngineVersion: f.Version, Label: f.Label, Host: f.Host}
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return f, bf, fmt.Errorf("page=%q: give a page number from 1", p)
		}
		if n > maxPage {
			return f, bf, fmt.Errorf("page=%q: no such page (far beyond the last one): give a page number from 1", p)
		}
		f.Page = n
	}
	for _, d := range []struct {
		name, v string
		dst     *time.Time
		days    int
	}{{"from", f.From, &bf.Since, 0}, {"to", f.To, &bf.Until, 1}} {
		if d.v == "" {
			continue
		}
		t, err := time.Parse("2006-01-02", d.v)
		if err != nil {
			return f, bf, fmt.Errorf("%s=%q: give a date as YYYY-MM-DD", d.name, d.v)
		}
		*d.dst = t.AddDate(0, 0, d.days) // "to" includes its day
	}
	bf.Limit, bf.Offset = PageSize, (f.Page-1)*PageSize
	return f, bf, nil
}

// maxPage is the last page number whose offset ((page-1) × PageSize) an int64 holds: a
// larger one would wrap around to the first page.
const maxPage = math.MaxInt64/PageSize + 1

// query is the filter's query string with page set to page (0: none).
func (f runsFilter) query(page int) string {
	q := url.Values{}
	for k, v := range map[string]string{"workload": f.Workload, "engine": f.Engine, "version": f.Version,
		"label": f.Label, "host": f.Host, "from": f.From, "to": f.To} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

type runsView struct {
	Path      string
	History   string
	Filter    runsFilter
	Runs      []store.RunSummary
	Total     int
	First     int
	Last      int
	Prev      string
	Next      string
	Workloads []string
	Engines   []string
	Labels    []string
	// Queue: the store has a job queue (a link to /queue).
	Queue bool
}

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	f, bf, err := parseRunsFilter(r.URL.Query())
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	ctx := r.Context()
	runs, total, err := s.st.Browse(ctx, bf)
	if err != nil {
		s.storeFailed(w, r, err)
		return
	}
	v := runsView{Path: s.st.Path(), Filter: f, Runs: runs, Total: total, First: bf.Offset + 1, Last: bf.Offset + len(runs), Queue: s.queue != nil}
	hq := url.Values{}
	for k, val := range map[string]string{"workload": f.Workload, "engine": f.Engine} {
		if val != "" {
			hq.Set(k, val)
		}
	}
	v.History = "/history"
	if len(hq) > 0 {
		v.History += "?" + hq.Encode()
	}
	if f.Page > 1 {
		v.Prev = "/" + f.query(f.Page-1)
		if v.Prev == "/" {
			v.Prev = "/?"
		}
	}
	if v.Last < total {
		v.Next = "/" + f.query(f.Page+1)
	}
	for _, c := range []struct {
		col string
		dst *[]string
	}{{"workload", &v.Workloads}, {"engine", &v.Engines}} {
		if *c.dst, err = s.st.Distinct(ctx, c.col); err != nil {
			s.storeFailed(w, r, err)
			return
		}
	}
	// The labels of the runs listed, to tick a label (all its runs) instead of runs.
	for _, rs := range runs {
		if rs.Label != "" && !contains(v.Labels, rs.Label) {
			v.Labels = append(v.Labels, rs.Label)
		}
	}
	s.render(w, r, s.runs, v)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// runPage is one run: the report of `dbperf report ID --format html`.
func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if n, err := strconv.ParseInt(id, 10, 64); err != nil || n < 1 {
		s.fail(w, r, http.StatusBadRequest, fmt.Sprintf("run %q: a run is named by its number, e.g. /run/12", id))
		return
	}
	s.report(w, r, []string{id}, "", false)
}

// comparePage compares the ticked runs and labels (each label one config of all its
// runs): the report of `dbperf report --base BASE REF... --format html`. Runs that differ
// in workload, version, scale or parameters (report.Mismatches) are a 400 page naming
// the differences, with a link to the same comparison with force=1, which shows it under
// a warning (`dbperf report --force`).
func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	force := false
	if v := q.Get("force"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			s.fail(w, r, http.StatusBadRequest, fmt.Sprintf("force=%q: give force=1 to compare runs that differ", v))
			return
		}
		force = b
	}
	var refs []string
	for _, id := range q["run"] {
		if n, err := strconv.ParseInt(id, 10, 64); err != nil || n < 1 {
			s.fail(w, r, http.StatusBadRequest, fmt.Sprintf("run=%q: a run is named by its number", id))
			return
		}
		refs = append(refs, id)
	}
	for _, l := range q["label"] {
		if strings.TrimSpace(l) == "" {
			s.fail(w, r, http.StatusBadRequest, "label=: an empty label names no run")
			return
		}
		refs = append(refs, l)
	}
	if len(refs) == 0 {
		s.fail(w, r, http.StatusBadRequest, "nothing to compare: tick runs or labels on the runs page")
		return
	}
	s.report(w, r, refs, q.Get("base"), force)
}

// report renders the report of refs against base; runs that differ are refused unless
// force (then shown under a warning).
func (s *Server) report(w http.ResponseWriter, r *http.Request, refs []string, base string, force bool) {
	ctx := r.Context()
	if err := s.st.CheckSchema(ctx); err != nil {
		s.storeFailed(w, r, err)
		return
	}
	groups, err := report.ResolveGroups(ctx, s.st, refs)
	switch {
	case errors.Is(err, report.ErrNamedTwice):
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	case err != nil:
		if cerr := s.st.CheckSchema(ctx); cerr != nil {
			s.storeFailed(w, r, err)
			return
		}
		s.fail(w, r, http.StatusNotFound, err.Error())
		return
	}
	baseIdx, err := report.BaseIndex(groups, refs, base)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	rep, err := report.Load(ctx, s.st, groups)
	if err != nil {
		s.storeFailed(w, r, err)
		return
	}
	var warning []byte
	if ms := report.Mismatches(rep, groups); len(ms) > 0 {
		if !force {
			s.failWith(w, r, errorView{Status: http.StatusBadRequest,
				Message: "These runs differ, so their figures are not comparable: compare runs of one workload, scale and parameters.",
				Items:   ms, Link: r.URL.Path + "?" + r.URL.RawQuery + "&force=1", LinkText: "compare them anyway"})
			return
		}
		var wb bytes.Buffer
		if err := s.mismatch.Execute(&wb, ms); err != nil {
			s.fail(w, r, http.StatusInternalServerError, err.Error())
			return
		}
		warning = wb.Bytes()
	}
	cmp := report.Compare(rep, groups, baseIdx)
	rep.Comparison = &cmp
	var buf bytes.Buffer
	if err := render.HTML(&buf, rep); err != nil {
		s.fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	writeWithNav(w, buf.Bytes(), warning)
}

// historyPage is `dbperf history --format html` over the store's finished runs: each
// series' metrics over time (or version) with their change points marked. Above it, a form
// (GET, so the choice stays in the URL) picks the workload, engine, profile, order, and
// which steps and metrics to follow, from what the store holds.
func (s *Server) historyPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	o := report.HistoryOptions{Workload: q.Get("workload"), Engine: q.Get("engine"), Profile: q.Get("profile"),
		Steps: listParam(q, "steps"), Metrics: listParam(q, "metrics"), Order: q.Get("order"), Detect: changepoint.DefaultOptions()}
	if len(o.Metrics) == 0 {
		o.Metrics = []string{report.MetricThroughput}
	}
	for _, m := range o.Metrics {
		if !contains(report.HistoryMetrics(), m) {
			s.fail(w, r, http.StatusBadRequest, fmt.Sprintf("metrics=%s: use %s", m, strings.Join(report.HistoryMetrics(), ", ")))
			return
		}
	}
	if o.Order == "" {
		o.Order = report.OrderTime
	}
	if o.Order != report.OrderTime && o.Order != report.OrderVersion {
		s.fail(w, r, http.StatusBadRequest, fmt.Sprintf("order=%s: use %s or %s", o.Order, report.OrderTime, report.OrderVersion))
		return
	}
	ctx := r.Context()
	if err := s.st.CheckSchema(ctx); err != nil {
		s.storeFailed(w, r, err)
		return
	}
	sums, _, err := s.st.Browse(ctx, store.BrowseFilter{Workload: o.Workload, Engine: o.Engine})
	if err != nil {
		s.storeFailed(w, r, err)
		return
	}
	var ids []int64
	for i := len(sums) - 1; i >= 0; i-- { // oldest first
		if sums[i].Status == store.RunOK {
			ids = append(ids, sums[i].ID)
		}
	}
	runs, err := s.st.Results(ctx, ids)
	if err != nil {
		s.storeFailed(w, r, err)
		return
	}
	reps := report.Build(runs).Runs
	form, err := s.historyForm(ctx, o, reps)
	if err != nil {
		s.storeFailed(w, r, err)
		return
	}
	h, err := report.BuildHistory(reps, o)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	var buf bytes.Buffer
	if err := render.HistoryHTML(&buf, h, "/run/"); err != nil {
		s.fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	writeWithNav(w, buf.Bytes(), form)
}

// listParam is a list parameter given as repeated values (name=a&name=b, as a form's
// checkboxes send it), as a comma-separated list (name=a,b, as `dbperf history` takes it)
// or both; empty items are dropped.
func listParam(q url.Values, name string) []string {
	var out []string
	for _, v := range q[name] {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" && !contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// historyView is the history form's state: the choices the store offers, and which are
// taken.
type historyView struct {
	Workload, Engine, Profile, Order string
	Workloads, Engines, Profiles     []string
	Orders                           []string
	Steps, Metrics                   []choice
}

// choice is one checkbox.
type choice struct {
	Name string
	On   bool
}

// historyForm renders the history page's form for options o over reps, the finished runs
// of o's workload and engine (oldest first): their profiles and steps, in the order the
// runs have them, are what can be picked.
func (s *Server) historyForm(ctx context.Context, o report.HistoryOptions, reps []report.RunReport) ([]byte, error) {
	v := historyView{Workload: o.Workload, Engine: o.Engine, Profile: o.Profile, Order: o.Order,
		Orders: []string{report.OrderTime, report.OrderVersion}}
	var err error
	if v.Workloads, err = s.st.Distinct(ctx, "workload"); err != nil {
		return nil, err
	}
	if v.Engines, err = s.st.Distinct(ctx, "engine"); err != nil {
		return nil, err
	}
	var steps []string
	for _, rr := range reps {
		if p, ok := rr.Params["profile"]; ok && p != nil {
			if ps := fmt.Sprint(p); ps != "" && !contains(v.Profiles, ps) {
				v.Profiles = append(v.Profiles, ps)
			}
		}
		for _, st := range rr.Steps {
			if !contains(steps, st.Name) {
				steps = append(steps, st.Name)
			}
		}
	}
	if o.Profile != "" && !contains(v.Profiles, o.Profile) && len(v.Profiles) > 0 {
		v.Profiles = append(v.Profiles, o.Profile) // asked for: keep it shown as chosen
	}
	for _, st := range o.Steps {
		if !contains(steps, st) {
			steps = append(steps, st)
		}
	}
	for _, st := range steps {
		v.Steps = append(v.Steps, choice{Name: st, On: contains(o.Steps, st)})
	}
	for _, m := range report.HistoryMetrics() {
		v.Metrics = append(v.Metrics, choice{Name: m, On: contains(o.Metrics, m)})
	}
	var buf bytes.Buffer
	if err := s.history.Execute(&buf, v); err != nil {
		return nil, fmt.Errorf("web: history form: %w", err)
	}
	return buf.Bytes(), nil
}

// writeWithNav writes a report's own page with a way back to the runs, and then extra
// (a form of the page's own, or nothing) at the top of its body.
func writeWithNav(w http.ResponseWriter, page, extra []byte) {
	top := append([]byte(`<body><nav style="font:14px sans-serif;margin:8px 0"><a href="/">← all runs</a></nav>`), extra...)
	page = bytes.Replace(page, []byte("<body>"), top, 1)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(page)
}

// storeFailed answers a request the store could not: 503 (the server keeps serving, and
// the page may work again on a later load), saying so when a newer dbperf has migrated
// the store meanwhile. The page never shows the store's error, which may name its host,
// user and database: that goes to Log.
func (s *Server) storeFailed(w http.ResponseWriter, r *http.Request, err error) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, "dbperf serve: %s %s: reading the results store: %s\n", r.Method, r.URL.RequestURI(), report.Printable(err.Error()))
	}
	if cerr := s.st.CheckSchema(context.WithoutCancel(r.Context())); cerr != nil {
		var tooNew *store.SchemaTooNewError
		if errors.As(cerr, &tooNew) {
			s.fail(w, r, http.StatusServiceUnavailable, fmt.Sprintf("The results store has schema version %d but this dbperf knows up to %d: upgrade dbperf.",
				tooNew.FileVersion, tooNew.KnownVersion))
			return
		}
	}
	s.fail(w, r, http.StatusServiceUnavailable, "The results store could not be read just now (it may be down or busy): try again later. dbperf serve's output says why.")
}

type errorView struct {
	Status  int
	Title   string
	Message string
	// Items are listed under the message; Link (with LinkText) is a way on from the error.
	Items          []string
	Link, LinkText string
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.failWith(w, r, errorView{Status: status, Message: msg})
}

// failWith answers with the error page v (its Title is the status's text).
func (s *Server) failWith(w http.ResponseWriter, r *http.Request, v errorView) {
	v.Title = http.StatusText(v.Status)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(v.Status)
	_ = s.error.Execute(w, v)
}

// render executes t into a buffer first, so a failing template is a 500, not half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, t *template.Template, v any) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		s.fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// queueJob is a job's row on the queue page.
type queueJob struct {
	ID                               int64
	State, Class, Host, Sweep, Point string
	Command                          string
	Attempt                          int
	Started                          *time.Time
	Runs                             []store.JobRun
}

// queueView is the queue page: the agents (host, class, current job, last heartbeat) and
// the jobs (state, attempt, host, start, stored runs), read-only like every page.
func (s *Server) queueView(w http.ResponseWriter, r *http.Request) {
	if s.queue == nil {
		s.fail(w, r, http.StatusNotFound, "this store has no job queue: the queue lives in a PostgreSQL results store (dbperf run … --queue)")
		return
	}
	v, err := s.queue.Load(r.Context(), s.st, "")
	if err != nil {
		s.storeFailed(w, r, err)
		return
	}
	page := struct {
		Path   string
		Agents []fleet.AgentInfo
		Jobs   []queueJob
	}{Path: s.st.Path(), Agents: v.Agents}
	for i := len(v.Jobs) - 1; i >= 0; i-- { // newest first
		j := v.Jobs[i]
		page.Jobs = append(page.Jobs, queueJob{ID: j.ID, State: j.State, Class: j.Args.Class, Host: j.Host,
			Sweep: j.Args.Sweep, Point: j.Args.Point, Command: fleet.ShortArgv(j.Args.Argv, 160), Attempt: j.Attempt,
			Started: j.StartedAt, Runs: v.Runs[j.ID]})
	}
	s.render(w, r, s.queuePage, page)
}
