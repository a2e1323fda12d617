package archtest

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// shellBlocks returns the command lines of every ```sh block in a Markdown text, without
// comments, in order.
func shellBlocks(md string) [][]string {
	var blocks [][]string
	var cur []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(md))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && strings.TrimSpace(line) == "```sh":
			in, cur = true, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			blocks = append(blocks, cur)
		case in:
			if i := strings.Index(line, " #"); i >= 0 {
				line = line[:i]
			}
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
				cur = append(cur, l)
			}
		}
	}
	return blocks
}

func TestShellBlocks(t *testing.T) {
	md := "x\n```sh\nmake run   # build and run\n# a comment\nmake test\n```\n```go\nnot this\n```\n```sh\ndbperf runs\n```\n"
	got := shellBlocks(md)
	if len(got) != 2 || strings.Join(got[0], "|") != "make run|make test" || got[1][0] != "dbperf runs" {
		t.Fatalf("shellBlocks = %q", got)
	}
}

// docFiles returns, relative to root, the Markdown files whose ```sh blocks
// TestReadmeCommands runs, in the order it runs them: README.md first, then every regular
// file docs/*.md, sorted by name (subdirectories of docs/ are not read).
func docFiles(root string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(root, "README.md")); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(root, "docs"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var docs []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".md") {
			docs = append(docs, "docs/"+e.Name())
		}
	}
	sort.Strings(docs)
	return append([]string{"README.md"}, docs...), nil
}

// Kinds of command a ```sh block may hold; commandKind says which a line is, "" for one
// TestReadmeCommands does not know how to run.
const (
	cmdMakeRun    = "make run"
	cmdMakeTest   = "make test"
	cmdDbperf     = "dbperf"
	cmdSideBySide = "sidebyside.py"
)

func commandKind(line string) string {
	fields := strings.Fields(line)
	switch {
	case line == "make test":
		return cmdMakeTest
	case line == "make run":
		return cmdMakeRun
	case len(fields) > 0 && (fields[0] == "./bin/dbperf" || fields[0] == "dbperf"):
		return cmdDbperf
	case len(fields) > 1 && fields[0] == "python3" && fields[1] == "scripts/sidebyside.py":
		return cmdSideBySide
	}
	return ""
}

func TestDocsBlocks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string // created under a temporary root; a name ending in / is a directory
		want  []string // nil: docFiles fails
	}{
		{"README only", []string{"README.md"}, []string{"README.md"}},
		{"empty docs", []string{"README.md", "docs/"}, []string{"README.md"}},
		{
			"README first, then docs sorted",
			[]string{"docs/sysbench.md", "README.md", "docs/architecture.md", "docs/Zed.md", "docs/dbbench.md", "docs/insertbench.md"},
			[]string{"README.md", "docs/Zed.md", "docs/architecture.md", "docs/dbbench.md", "docs/insertbench.md", "docs/sysbench.md"},
		},
		{
			"only regular .md files directly in docs",
			[]string{"README.md", "docs/b.md", "docs/notes.txt", "docs/a.md.orig", "docs/dir.md/", "docs/sub/c.md", "other/d.md", "e.md"},
			[]string{"README.md", "docs/b.md"},
		},
		{"no README", []string{"docs/a.md"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range tc.files {
				p := filepath.Join(root, filepath.FromSlash(f))
				if strings.HasSuffix(f, "/") {
					if err := os.MkdirAll(p, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("# "+f+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := docFiles(root)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("docFiles = %q, want an error", got)
				}
				return
			}
			if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("docFiles = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestDocsCommands checks, without running anything, what TestReadmeCommands will run: the
// README's first block is the quick start, a second block (the worked example) follows,
// and every command of every file is one TestReadmeCommands knows.
func TestDocsCommands(t *testing.T) {
	root := repoRoot(t)
	files, err := docFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		md, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		blocks := shellBlocks(string(md))
		if f == "README.md" {
			if len(blocks) < 2 {
				t.Errorf("README has %d sh blocks, want the quick start and the worked example", len(blocks))
			} else if q := strings.Join(blocks[0], "\n"); q != "make run\nmake test" {
				t.Errorf("the README's first block must be exactly the two commands make run and make test, got:\n%s", q)
			}
		}
		for _, block := range blocks {
			for _, line := range block {
				if commandKind(line) == "" {
					t.Errorf("%s: command %q is not one TestReadmeCommands knows how to run", f, line)
				}
			}
		}
	}
}

// TestReadmeCommands runs every command of the ```sh blocks of the README and of
// docs/*.md (docFiles' order), each file's in order, as a new user following that file
// would, against a temporary results store of the file's own. The files run side by side
// (parallel subtests: no file's commands read what another's wrote), the README's first.
// `make test` is skipped (it is what runs this test) and the Insert Benchmark runs at
// --scale tiny so the test stays short. ```console blocks are shown, not run.
func TestReadmeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's benchmarks")
	}
	root := repoRoot(t)
	files, err := docFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string][][]string{}
	for _, f := range files {
		md, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		blocks[f] = shellBlocks(string(md))
		if f == "README.md" {
			if len(blocks[f]) < 2 {
				t.Fatalf("README has %d sh blocks, want the quick start and the worked example", len(blocks[f]))
			}
			if q := strings.Join(blocks[f][0], "\n"); q != "make run\nmake test" {
				t.Fatalf("the README's first block must be exactly the two commands make run and make test, got:\n%s", q)
			}
		}
	}
	bin := filepath.Join(t.TempDir(), "dbperf")
	// make test passes the dbperf it just built (same flags): a copy in place makes `make
	// run`'s build find its target up to date instead of linking dbperf again (10 s here).
	// Without it, make builds it here first: every file's commands run it.
	if src := os.Getenv("DBPERF_TEST_BIN"); src != "" {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatalf("DBPERF_TEST_BIN: %v", err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	} else if out, err := exec.Command("make", "-C", root, "build", "BIN="+bin).CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	for _, f := range files {
		// The README's quick start (make run) is a user's first session of its own, apart
		// from its worked example: they run side by side too.
		first, name := 0, f
		if f == "README.md" {
			t.Run("README.md quick start", func(t *testing.T) {
				t.Parallel()
				runDocBlocks(newDocRun(t, root, bin, f), blocks[f][:1], 0)
			})
			first, name = 1, "README.md worked example"
		}
		if len(blocks[f]) > first {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				runDocBlocks(newDocRun(t, root, bin, f), blocks[f][first:], first)
			})
		}
	}
}

// runDocBlocks runs blocks, the first of them the file's block number first, in order,
// then checks what they wrote.
func runDocBlocks(d *docRun, blocks [][]string, first int) {
	for i, block := range blocks {
		d.workedRan = d.workedRan || d.file == "README.md" && first+i == 1
		for _, line := range block {
			start := time.Now()
			d.command(first+i, line)
			d.t.Logf("%s (%.1f s)", line, time.Since(start).Seconds())
		}
	}
	d.check()
}

// docRun is one doc file's commands as TestReadmeCommands runs them: the dbperf binary,
// a temporary directory and results store of the file's own, and what the commands wrote.
type docRun struct {
	t                 *testing.T
	root, file        string
	bin, tmp, results string
	env               []string
	written           []string
	workedExample     string // what the worked example's (the README's second block's) last command printed
	workedRan         bool   // the worked example's block ran here
}

func newDocRun(t *testing.T, root, bin, file string) *docRun {
	tmp := t.TempDir()
	results := filepath.Join(tmp, "results.db")
	return &docRun{t: t, root: root, file: file, bin: bin, tmp: tmp, results: results,
		env: append(os.Environ(), "DBPERF_RESULTS="+results, "TMPDIR="+tmp)}
}

// run runs a command in the checkout, failing the test when it fails; it returns its output.
func (d *docRun) run(name string, args ...string) string {
	d.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = d.root
	cmd.Env = d.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		d.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// command runs one line of the file's block number block.
func (d *docRun) command(block int, line string) {
	t := d.t
	switch commandKind(line) {
	case cmdMakeTest:
	case cmdMakeRun:
		// RUNARGS=--time 1: every step still runs; the query steps' 5 s at tiny
		// scale would only make the test longer.
		out := d.run("make", "run", "SCALE=tiny", "RUNARGS=--time 1", "BIN="+d.bin, "RESULTS="+d.results)
		for _, step := range []string{"l.i0", "l.x", "l.i1", "l.i2", "cleanup", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"} {
			if !strings.Contains(out, step) {
				t.Errorf("make run printed no %s step:\n%s", step, out)
			}
		}
	case cmdDbperf:
		out := d.run(d.bin, d.dbperfArgs(strings.Fields(line)[1:])...)
		if d.file == "README.md" && block == 1 {
			d.workedExample = out
		}
	case cmdSideBySide:
		d.sideBySide()
	default:
		t.Fatalf("%s command %q is not one this test knows how to run: teach TestReadmeCommands (and commandKind)", d.file, line)
	}
}

// dbperfArgs are a dbperf command's arguments as the test runs them: --scale small is
// tiny, files written go to the temporary directory, timed runs take 1 s a step.
func (d *docRun) dbperfArgs(args []string) []string {
	for i, a := range args {
		if a == "small" && i > 0 && args[i-1] == "--scale" {
			args[i] = "tiny"
		}
		if i > 0 && (args[i-1] == "-o" || args[i-1] == "--output") {
			args[i] = filepath.Join(d.tmp, filepath.Base(a)) // not into the checkout
			d.written = append(d.written, args[i])
		}
	}
	if len(args) > 1 && (args[0] == "run" || args[0] == "sweep") && !slices.Contains(args, "--time") {
		// As --scale small becomes tiny: timed steps of 1 s show the same
		// tables in a fraction of the test's time.
		args = append(args, "--time", "1")
	}
	if d.file != "README.md" {
		// Outside the README's worked example (whose comparison must show the
		// difference it promises), two repeats run every command's path; four
		// would only double the test's time.
		for i := 1; i < len(args); i++ {
			if args[i-1] == "--repeat" {
				if n, err := strconv.Atoi(args[i]); err == nil && n > 2 {
					args[i] = "2"
				}
			}
		}
	}
	return args
}

// sideBySide checks scripts/sidebyside.py: the side-by-side comparison needs iibench.py
// and half an hour, so the test checks that the script runs, documents its options, and
// refuses a missing iibench.py with one line and exit status 2.
func (d *docRun) sideBySide() {
	t := d.t
	help := d.run("python3", "scripts/sidebyside.py", "--help")
	for _, opt := range []string{"--iibench", "--rounds", "--out"} {
		if !strings.Contains(help, opt) {
			t.Errorf("sidebyside.py --help does not mention %s:\n%s", opt, help)
		}
	}
	cmd := exec.Command("python3", "scripts/sidebyside.py", "--iibench", filepath.Join(d.tmp, "missing.py"))
	cmd.Dir, cmd.Env = d.root, d.env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
		t.Errorf("sidebyside.py with a missing iibench.py: %v, output:\n%s", err, out)
	}
}

// check checks what the file's commands wrote, and the README's worked example's output.
func (d *docRun) check() {
	t := d.t
	for _, f := range d.written {
		b, err := os.ReadFile(f)
		if err != nil || len(b) == 0 {
			t.Errorf("a README or docs command wrote no %s: %v", f, err)
		}
		if strings.HasSuffix(f, ".html") && (strings.Contains(string(b), "http://") || strings.Contains(string(b), "https://")) {
			t.Errorf("%s references the network", f)
		}
	}
	if d.workedRan && !strings.Contains(d.workedExample, "l.i0") {
		t.Errorf("the worked example's last command printed no step table:\n%s", d.workedExample)
	}
}
