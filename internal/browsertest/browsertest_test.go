package browsertest

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
)

// needChromium skips the test when Chromium is not installed.
func needChromium(t *testing.T) {
	t.Helper()
	if Chromium() == "" {
		t.Skip("chromium not installed: make test installs it (as root)")
	}
}

// isolate points TMPDIR, where chromedp makes the browser's profile
// directory and Open its scratch directory, at a directory of this test's
// own, and returns it. So the test can tell its browser's processes from any
// other Chromium on the machine (by the --user-data-dir on their command
// line), and check that nothing is left behind. The directory is in /tmp, not
// t.TempDir(): a path that long would be too long for Open's scratch
// directory (see maxScratch).
func isolate(t *testing.T) string {
	t.Helper()
	tmp, err := os.MkdirTemp("", "bt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	return tmp
}

// processesUsing returns "pid comm" of the live (not zombie) processes whose
// command line mentions dir.
func processesUsing(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		// stat is "pid (comm) state ...", and comm may hold spaces.
		s := string(stat)
		if i := strings.LastIndexByte(s, ')'); i > 0 && len(s) > i+2 && s[i+2] == 'Z' {
			continue // a zombie is not running; its parent has yet to reap it
		}
		found = append(found, strings.TrimSpace(s[:strings.IndexByte(s, ')')+1]))
	}
	return found
}

// chromiumCount counts the live processes of Chromium (named chromium, or
// chrome_crashpad for its crash handler), of any user.
func chromiumCount(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if i < 0 || j < i || len(s) < j+3 {
			continue
		}
		if comm := s[i+1 : j]; (comm == "chromium" || comm == "chrome_crashpad") && s[j+2] != 'Z' {
			n++
		}
	}
	return n
}

// checkGone fails the test when a process of the browser still runs or its
// profile directory is left in tmp.
func checkGone(t *testing.T, tmp string) {
	t.Helper()
	if ps := processesUsing(t, tmp); len(ps) > 0 {
		t.Errorf("processes of the browser still run after Open returned: %q", ps)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left in the temporary directory: %s", e.Name())
	}
}

// open writes html to a file and opens it, checking afterwards that the
// browser is gone.
func open(t *testing.T, html string) Result {
	t.Helper()
	dir := t.TempDir()
	tmp := isolate(t)
	page := filepath.Join(dir, "page.html")
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Open(ctx, page, filepath.Join(dir, "shot.png"))
	checkGone(t, tmp)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	return res
}

func page(title, body string) string {
	return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + title + "</title></head><body>\n" + body + "\n</body></html>\n"
}

func contains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestCleanPage(t *testing.T) {
	needChromium(t)
	before := chromiumCount(t)
	// An inline <svg> without xmlns, as the report's charts are.
	res := open(t, page("clean page", `<h1>Report</h1>
<svg width="200pt" height="100pt" viewBox="0 0 200 100" role="img"><rect width="200" height="100" style="fill:#4E79A7"/><text x="10" y="50" style="font-family:Liberation Sans,Arial,sans-serif;font-size:12px">chart</text></svg>
<p>and a second: <svg width="10" height="10"><circle cx="5" cy="5" r="5"/></svg></p>`))
	if res.SVGCount != 2 {
		t.Errorf("SVGCount = %d, want 2", res.SVGCount)
	}
	if len(res.ConsoleErrors) > 0 {
		t.Errorf("ConsoleErrors = %q, want none", res.ConsoleErrors)
	}
	if len(res.Requests) > 0 {
		t.Errorf("Requests = %q, want none", res.Requests)
	}
	if res.Title != "clean page" {
		t.Errorf("Title = %q", res.Title)
	}
	f, err := os.Open(res.ScreenshotPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if cfg.Width != windowWidth || cfg.Height < 100 {
		t.Errorf("screenshot is %dx%d, want %d wide", cfg.Width, cfg.Height, windowWidth)
	}
	if after := chromiumCount(t); after > before {
		t.Errorf("%d chromium processes before the test, %d after", before, after)
	}
}

func TestConsoleError(t *testing.T) {
	needChromium(t)
	res := open(t, page("console", `<script>console.error("boom", 42); console.log("fine"); console.assert(1 === 2, "assert %s", "failed")</script>`))
	if !contains(res.ConsoleErrors, "console.error: boom 42") {
		t.Errorf("ConsoleErrors = %q, want console.error: boom 42", res.ConsoleErrors)
	}
	if !contains(res.ConsoleErrors, "console.assert: assert failed") {
		t.Errorf("ConsoleErrors = %q, want the failed console.assert", res.ConsoleErrors)
	}
	if contains(res.ConsoleErrors, "fine") {
		t.Errorf("ConsoleErrors = %q has console.log", res.ConsoleErrors)
	}
	if len(res.ConsoleErrors) != 2 {
		t.Errorf("ConsoleErrors = %q, want 2", res.ConsoleErrors)
	}
}

func TestException(t *testing.T) {
	needChromium(t)
	res := open(t, page("throws", `<script>throw new Error("bad")</script>
<script>Promise.reject(new Error("rejected"))</script>
<script>setTimeout(() => { undefinedFunction() }, 0)</script>`))
	for _, want := range []string{"exception: Uncaught Error: bad (file://", "rejected", "undefinedFunction is not defined"} {
		if !contains(res.ConsoleErrors, want) {
			t.Errorf("ConsoleErrors = %q, want one with %q", res.ConsoleErrors, want)
		}
	}
	for _, e := range res.ConsoleErrors {
		if strings.Contains(e, "\n") {
			t.Errorf("not one line: %q", e)
		}
	}
}

func TestNetworkRequest(t *testing.T) {
	needChromium(t)
	const img = "http://example.invalid/x.png"
	res := open(t, page("online", `<img src="`+img+`" alt="x"><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="inline">`))
	if len(res.Requests) != 1 || res.Requests[0] != img {
		t.Errorf("Requests = %q, want just %s", res.Requests, img)
	}
	if !contains(res.ConsoleErrors, "request failed: "+img+": net::") {
		t.Errorf("ConsoleErrors = %q, want the failed request of %s", res.ConsoleErrors, img)
	}
}

func TestMissingFile(t *testing.T) {
	needChromium(t)
	_, err := Open(context.Background(), filepath.Join(t.TempDir(), "nope.html"), filepath.Join(t.TempDir(), "x.png"))
	if err == nil {
		t.Fatal("no error for a missing file")
	}
}

func TestCanceled(t *testing.T) {
	needChromium(t)
	dir := t.TempDir()
	tmp := isolate(t)
	p := filepath.Join(dir, "page.html")
	// A page that never finishes loading.
	if err := os.WriteFile(p, []byte(page("slow", `<script>while (true) {}</script>`)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	_, err := Open(ctx, p, filepath.Join(dir, "shot.png"))
	if err == nil {
		t.Fatal("no error when the context ends first")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Open took %v after a 3s deadline", d)
	}
	checkGone(t, tmp)
	if _, err := os.Stat(filepath.Join(dir, "shot.png")); err == nil {
		t.Error("a screenshot was written")
	}
}

func TestChromiumEnv(t *testing.T) {
	t.Setenv(EnvChromium, filepath.Join(t.TempDir(), "no-such-chromium"))
	if got := Chromium(); got != "" {
		t.Errorf("Chromium() = %q for a missing binary, want \"\"", got)
	}
	if _, err := Open(context.Background(), "x.html", "x.png"); err == nil || !strings.Contains(err.Error(), EnvChromium) {
		t.Errorf("Open without Chromium: error %v, want one naming %s", err, EnvChromium)
	}
	exe := filepath.Join(t.TempDir(), "fake-chromium")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvChromium, exe)
	if got := Chromium(); got != exe {
		t.Errorf("Chromium() = %q, want %q", got, exe)
	}
}

func TestFormat(t *testing.T) {
	str := func(s string) *runtime.RemoteObject {
		return &runtime.RemoteObject{Type: runtime.RemoteObjectTypeString, Value: []byte(strconv.Quote(s))}
	}
	num := func(v string) *runtime.RemoteObject {
		return &runtime.RemoteObject{Type: runtime.RemoteObjectTypeNumber, Value: []byte(v), Description: v}
	}
	obj := &runtime.RemoteObject{Type: runtime.RemoteObjectTypeObject, Description: "Object"}
	for _, tc := range []struct {
		args []*runtime.RemoteObject
		want string
	}{
		{[]*runtime.RemoteObject{str("boom")}, "boom"},
		{[]*runtime.RemoteObject{str("a %s b %d%%"), str("x"), num("4.7"), num("5")}, "a x b 4% 5"},
		{[]*runtime.RemoteObject{str("%c styled %o"), str("color: red"), obj}, " styled Object"},
		{[]*runtime.RemoteObject{str("no args %s")}, "no args %s"},
		{[]*runtime.RemoteObject{num("1"), str("%s")}, "1 %s"},
		{[]*runtime.RemoteObject{{Type: runtime.RemoteObjectTypeUndefined}}, "undefined"},
	} {
		if got := argsText(tc.args); got != tc.want {
			t.Errorf("argsText = %q, want %q", got, tc.want)
		}
	}
}

func TestScratchDir(t *testing.T) {
	short := isolate(t)
	dir, err := scratchDir()
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(dir)
	if filepath.Dir(dir) != short || len(dir) > maxScratch {
		t.Errorf("scratchDir() = %q, want it in %s and at most %d bytes", dir, short, maxScratch)
	}
	long := filepath.Join(short, strings.Repeat("x", 50))
	if err := os.Mkdir(long, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", long)
	dir, err = scratchDir()
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(dir)
	if filepath.Dir(dir) != "/tmp" {
		t.Errorf("scratchDir() = %q with a long TMPDIR, want it in /tmp", dir)
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("Error: x\n    at a (f:1:2)\r\n    at b\n"); got != "Error: x |     at a (f:1:2) |     at b" {
		t.Errorf("oneLine = %q", got)
	}
}
