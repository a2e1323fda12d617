// Package browsertest opens a local HTML file in headless Chromium (Debian's
// chromium package) through chromedp, and reports what a person would see:
// errors in the console, requests that an offline page should not make, the
// title, how many SVG elements were rendered, and a full-page screenshot.
//
// It is for the tests of other packages (e.g. the HTML report). Such a test
// skips when Chromium() returns "", so that the suite runs where Chromium is
// not installed; `make test` (scripts/deps.sh test) installs it.
package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	stdlog "log"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// EnvChromium names the environment variable that overrides the Chromium
// binary (default /usr/bin/chromium).
const EnvChromium = "DBPERF_CHROMIUM"

// DefaultChromium is where Debian's chromium package puts its launcher.
const DefaultChromium = "/usr/bin/chromium"

// Result of loading a page.
type Result struct {
	// ConsoleErrors holds, one line each, in the order they happened: the
	// console.error and console.assert (failed) calls, the uncaught
	// exceptions and unhandled promise rejections (Runtime.exceptionThrown),
	// the failed requests (Network.loadingFailed), and the browser's own
	// error-level log entries other than network ones (e.g. security or CSP
	// violations, Log.entryAdded).
	ConsoleErrors []string
	// Requests holds every URL the page requested other than the file itself,
	// each once, in the order of the first request; data:, blob: and about:
	// URLs are not requests and are left out. An offline page has none.
	Requests []string
	// SVGCount is the number of <svg> elements in the rendered DOM (elements
	// in the SVG namespace, i.e. parsed as SVG).
	SVGCount int
	// Title is document.title.
	Title string
	// ScreenshotPath is where the full-page PNG screenshot was written.
	ScreenshotPath string
	// CutOff holds, one line each, what does not fit the window's width: the page
	// itself when it scrolls sideways, and each table or chart reaching past the
	// window's edge outside a box of its own that scrolls (overflow-x auto or scroll).
	CutOff []string
	// Overlaps holds, one line each, the pairs of texts of one SVG chart whose boxes
	// overlap, each box turned as the text is drawn (a slanted label's box is slanted).
	Overlaps []string
}

// Chromium returns the path of the Chromium binary (/usr/bin/chromium, or
// $DBPERF_CHROMIUM when set) or "" when absent (not an executable file).
func Chromium() string {
	p := os.Getenv(EnvChromium)
	if p == "" {
		p = DefaultChromium
	}
	if !filepath.IsAbs(p) {
		var err error
		if p, err = exec.LookPath(p); err != nil {
			return ""
		}
	}
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return ""
	}
	return p
}

// Width and height of the browser window, in CSS pixels (Open; OpenAt sets the
// width). The screenshot has the window's width and the height of the whole page.
const (
	windowWidth  = 1280
	windowHeight = 900
)

// closeTimeout bounds the graceful shutdown of the browser; past it the
// browser is killed.
const closeTimeout = 10 * time.Second

// allocatorOptions are the flags Chromium runs with. This machine's network
// is closed, so everything that would phone home is off; as root Chromium
// needs --no-sandbox. chromedp adds --remote-debugging-pipe (it talks to the
// browser over a pipe, no port) and a fresh --user-data-dir in the temporary
// directory, which it removes, after killing any process still using it,
// when the browser ends. HOME, TMPDIR and the XDG directories point into
// scratch, so that nothing the browser writes outlives Open: Debian's build
// starts a crash handler (chrome_crashpad_handler, detached from the browser)
// even with --disable-breakpad or --disable-crash-reporter, which keeps its
// database in $XDG_CONFIG_HOME/chromium; --disable-crashpad-for-testing would
// stop it, but makes Chromium 156's network service crash in a loop.
func allocatorOptions(exe, scratch string, width int) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.Env(
			"HOME="+scratch,
			"TMPDIR="+scratch,
			"XDG_CONFIG_HOME="+filepath.Join(scratch, ".config"),
			"XDG_CACHE_HOME="+filepath.Join(scratch, ".cache"),
		),
		chromedp.ExecPath(exe),
		chromedp.Headless, // --headless, --hide-scrollbars, --mute-audio
		chromedp.NoSandbox,
		chromedp.DisableGPU, // --disable-gpu, and software rendering instead
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.WindowSize(width, windowHeight),
	}
}

// maxScratch is the longest path of the scratch directory: Chromium makes
// its singleton socket at $TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket
// (45 more bytes), and a Unix socket path has at most 107; past that Chromium
// dies at start with "Socket path too long".
const maxScratch = 60

// scratchDir makes the directory that serves the browser as HOME and TMPDIR:
// in the temporary directory, or in /tmp when that path would be too long for
// Chromium.
func scratchDir() (string, error) {
	const prefix = "dbperf-chromium-"
	dir := os.TempDir()
	if len(dir)+1+len(prefix)+10 > maxScratch {
		dir = "/tmp"
	}
	return os.MkdirTemp(dir, prefix)
}

// Open loads file:// path in a new headless Chromium (flags above), waits for
// the load event and the next rendered frame, collects the Result and writes
// a full-page PNG screenshot to screenshotPath. ctx bounds it all. The browser
// and every process it started are gone, and its profile directory removed,
// when Open returns.
func Open(ctx context.Context, path, screenshotPath string) (res Result, err error) {
	return OpenAt(ctx, path, screenshotPath, windowWidth)
}

// OpenAt is Open in a window width CSS pixels wide; with screenshotPath "" it takes no
// screenshot (Chromium cannot capture a page of many thousand pixels).
func OpenAt(ctx context.Context, path, screenshotPath string, width int) (res Result, err error) {
	exe := Chromium()
	if exe == "" {
		return Result{}, fmt.Errorf("browsertest: no Chromium at %s (install Debian's chromium, or set %s)", DefaultChromium, EnvChromium)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Result{}, fmt.Errorf("browsertest: %s: %w", path, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return Result{}, fmt.Errorf("browsertest: %w", err)
	}
	page := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	return visit(ctx, exe, page, screenshotPath, width, nil)
}

// Visit loads pageURL (a page a test serves on 127.0.0.1) as Open loads a file, then runs
// actions in the page (tick boxes, submit a form, wait for the next page) and collects
// the Result of where they end: its title, SVG count and screenshot, and the console
// errors and requests of every page on the way (the first page's own URL is not a
// request; the pages navigated to are).
func Visit(ctx context.Context, pageURL, screenshotPath string, actions ...chromedp.Action[chromedp.Void]) (Result, error) {
	exe := Chromium()
	if exe == "" {
		return Result{}, fmt.Errorf("browsertest: no Chromium at %s (install Debian's chromium, or set %s)", DefaultChromium, EnvChromium)
	}
	return visit(ctx, exe, pageURL, screenshotPath, windowWidth, actions)
}

func visit(ctx context.Context, exe, page, screenshotPath string, width int, actions []chromedp.Action[chromedp.Void]) (res Result, err error) {
	scratch, err := scratchDir()
	if err != nil {
		return Result{}, fmt.Errorf("browsertest: %w", err)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, allocatorOptions(exe, scratch, width)...)
	col := newCollector(page)
	tab, cancelTab := chromedp.NewContext(allocCtx,
		chromedp.WithListener(col.event),
		// chromedp logs the errors of its own event handling; once ctx
		// is done they are only echoes of that.
		chromedp.WithErrorf(func(format string, args ...any) {
			if ctx.Err() == nil {
				stdlog.Printf("browsertest: chromedp: "+format, args...)
			}
		}),
	)
	defer func() {
		if cerr := shutdown(ctx, tab, cancelTab, cancelAlloc, scratch); cerr != nil && err == nil {
			res, err = Result{}, cerr
		}
	}()

	if err := chromedp.Do(tab, chromedp.Navigate(page)); err != nil {
		return Result{}, fmt.Errorf("browsertest: loading %s in %s: %w", page, exe, err)
	}
	// Let the page settle: web fonts, one frame, and timers of 0 that the
	// load handlers set.
	const settle = `document.fonts.ready.then(() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 50))))`
	if err := chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](settle, chromedp.EvalAwaitPromise)); err != nil {
		return Result{}, fmt.Errorf("browsertest: waiting for %s to render: %w", page, err)
	}
	for i, a := range actions {
		if err := chromedp.Do(tab, a); err != nil {
			return Result{}, fmt.Errorf("browsertest: %s: action %d: %w", page, i+1, err)
		}
	}
	if len(actions) > 0 {
		if err := chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](settle, chromedp.EvalAwaitPromise)); err != nil {
			return Result{}, fmt.Errorf("browsertest: waiting for the page after the actions on %s to render: %w", page, err)
		}
	}
	if res.Title, err = chromedp.Run(tab, chromedp.Title()); err != nil {
		return Result{}, fmt.Errorf("browsertest: reading the title of %s: %w", page, err)
	}
	const countSVG = `Array.from(document.querySelectorAll('svg')).filter(e => e instanceof SVGSVGElement).length`
	if res.SVGCount, err = chromedp.Run(tab, chromedp.Evaluate[int](countSVG)); err != nil {
		return Result{}, fmt.Errorf("browsertest: counting the SVG elements of %s: %w", page, err)
	}
	var layout struct{ CutOff, Overlaps []string }
	if layout, err = chromedp.Run(tab, chromedp.Evaluate[struct{ CutOff, Overlaps []string }](layoutScript)); err != nil {
		return Result{}, fmt.Errorf("browsertest: checking the layout of %s: %w", page, err)
	}
	res.CutOff, res.Overlaps = layout.CutOff, layout.Overlaps
	if screenshotPath != "" {
		png, err := chromedp.Run(tab, chromedp.FullScreenshot(100)) // 100: PNG
		if err != nil {
			return Result{}, fmt.Errorf("browsertest: screenshot of %s: %w", page, err)
		}
		if err := os.WriteFile(screenshotPath, png, 0o644); err != nil {
			return Result{}, fmt.Errorf("browsertest: %w", err)
		}
		res.ScreenshotPath = screenshotPath
	}
	// The listener runs, in order, before the reply of a later command is
	// read: every event up to the screenshot has been seen.
	res.ConsoleErrors, res.Requests = col.results()
	return res, nil
}

// shutdown ends the browser of tab: gracefully if it can within
// closeTimeout, else by killing it. When it returns, chromedp has reaped the
// browser, killed the processes that used its profile directory and removed
// that; shutdown then kills whatever still uses the scratch directory (the
// crash handler) and removes it.
func shutdown(ctx, tab context.Context, cancelTab, cancelAlloc context.CancelFunc, scratch string) error {
	var errs []error
	cctx, cancel := context.WithTimeout(tab, closeTimeout)
	if err := chromedp.Cancel(cctx); err != nil && ctx.Err() == nil {
		errs = append(errs, fmt.Errorf("closing chromium: %w", err))
	}
	cancel()
	cancelTab()   // kills the browser if it is still running, and waits
	cancelAlloc() // waits for chromedp's clean-up
	killUsing(scratch)
	var err error
	for range 50 { // a process killed just now may still have had files open
		if err = os.RemoveAll(scratch); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("browsertest: %w", err)
	}
	return nil
}

// collector gathers the events of a page. Its event method runs on chromedp's
// reading goroutine, so it only records.
type collector struct {
	page string

	mu       sync.Mutex
	urls     map[network.RequestID]string
	seen     map[string]bool
	requests []string
	errors   []string
}

func newCollector(page string) *collector {
	return &collector{page: page, urls: map[network.RequestID]string{}, seen: map[string]bool{}}
}

// results returns copies of what was collected so far.
func (c *collector) results() (errs, requests []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.errors...), append([]string(nil), c.requests...)
}

// event records one protocol event.
func (c *collector) event(ev any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			c.addError("console." + string(ev.Type) + ": " + argsText(ev.Args) + stackPlace(ev.StackTrace))
		}
	case *runtime.EventExceptionThrown:
		c.addError("exception: " + exceptionText(ev.ExceptionDetails))
	case *network.EventRequestWillBeSent:
		if ev.Request == nil {
			return
		}
		u := ev.Request.URL + ev.Request.URLFragment
		c.urls[ev.RequestID] = u
		if c.isRequest(u) && !c.seen[u] {
			c.seen[u] = true
			c.requests = append(c.requests, u)
		}
	case *network.EventLoadingFailed:
		u := c.urls[ev.RequestID]
		if u == "" {
			u = "request " + string(ev.RequestID)
		}
		msg := "request failed: " + u + ": " + ev.ErrorText
		if ev.BlockedReason != "" {
			msg += " (blocked: " + string(ev.BlockedReason) + ")"
		}
		if ev.Canceled {
			msg += " (canceled)"
		}
		c.addError(msg)
	case *log.EventEntryAdded:
		// Network errors are reported by loadingFailed above.
		if e := ev.Entry; e != nil && e.Level == log.EntryLevelError && e.Source != log.EntrySourceNetwork {
			msg := "log." + string(e.Source) + ": " + e.Text
			if e.URL != "" {
				msg += fmt.Sprintf(" (%s:%d)", e.URL, e.LineNumber+1)
			}
			c.addError(msg)
		}
	}
}

// isRequest reports whether the page loading u counts as a request: anything
// but the page itself and URLs whose content is in the page.
func (c *collector) isRequest(u string) bool {
	if strings.SplitN(u, "#", 2)[0] == c.page {
		return false
	}
	for _, local := range []string{"data:", "blob:", "about:"} {
		if strings.HasPrefix(u, local) {
			return false
		}
	}
	return true
}

func (c *collector) addError(s string) {
	c.errors = append(c.errors, oneLine(s))
}

// oneLine joins the lines of s with " | ".
func oneLine(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " | ")
}

// argsText renders console arguments roughly as the DevTools console does:
// a format string's %s, %d, %i, %f, %o, %O and %c take the arguments after it,
// strings show as they are, other values by their JSON value or description.
func argsText(args []*runtime.RemoteObject) string {
	var parts []string
	if len(args) > 0 && args[0] != nil && args[0].Type == runtime.RemoteObjectTypeString {
		var used int
		parts = append(parts, format(objectText(args[0]), args[1:], &used))
		args = args[1+used:]
	}
	for _, a := range args {
		parts = append(parts, objectText(a))
	}
	return strings.Join(parts, " ")
}

// format substitutes the console format directives of f with args, and
// counts the arguments it used in *used.
func format(f string, args []*runtime.RemoteObject, used *int) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(f, '%')
		if i < 0 || i == len(f)-1 {
			b.WriteString(f)
			return b.String()
		}
		b.WriteString(f[:i])
		verb := f[i+1]
		f = f[i+2:]
		switch {
		case verb == '%':
			b.WriteByte('%')
		case strings.IndexByte("sdifoOc", verb) < 0 || *used >= len(args):
			b.WriteByte('%')
			b.WriteByte(verb)
		default:
			a := args[*used]
			*used++
			switch verb {
			case 'c': // CSS: not text
			case 'd', 'i':
				if n, err := strconv.ParseFloat(objectText(a), 64); err == nil {
					b.WriteString(strconv.FormatFloat(math.Trunc(n), 'f', -1, 64))
				} else {
					b.WriteString("NaN")
				}
			default:
				b.WriteString(objectText(a))
			}
		}
	}
}

// objectText renders one remote object.
func objectText(o *runtime.RemoteObject) string {
	switch {
	case o == nil:
		return ""
	case o.Type == runtime.RemoteObjectTypeString && len(o.Value) > 0:
		var s string
		if json.Unmarshal(o.Value, &s) == nil {
			return s
		}
	case o.Type == runtime.RemoteObjectTypeUndefined:
		return "undefined"
	case o.UnserializableValue != "":
		return string(o.UnserializableValue)
	case o.Description != "":
		return o.Description
	}
	if len(o.Value) > 0 {
		return string(o.Value)
	}
	return string(o.Type)
}

// exceptionText renders an exception as "Uncaught Error: bad (url:line:col)".
func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "unknown exception"
	}
	msg := d.Text
	if d.Exception != nil {
		// The description is the message followed by the stack, one frame a
		// line; keep the message.
		desc := objectText(d.Exception)
		if first, _, _ := strings.Cut(desc, "\n"); first != "" && !strings.Contains(msg, first) {
			msg += " " + first
		}
	}
	place := d.URL
	if place == "" && d.StackTrace != nil && len(d.StackTrace.CallFrames) > 0 {
		place = d.StackTrace.CallFrames[0].URL
	}
	if place != "" {
		msg += fmt.Sprintf(" (%s:%d:%d)", place, d.LineNumber+1, d.ColumnNumber+1)
	}
	return msg
}

// stackPlace renders the top frame of a stack as " (url:line:col)".
func stackPlace(st *runtime.StackTrace) string {
	if st == nil || len(st.CallFrames) == 0 {
		return ""
	}
	f := st.CallFrames[0]
	return fmt.Sprintf(" (%s:%d:%d)", f.URL, f.LineNumber+1, f.ColumnNumber+1)
}
