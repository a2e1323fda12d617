package archtest

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

// TestReadmeCommands runs every command the README shows, in order, as a new user would,
// against a temporary results store. `make test` is skipped (it is what runs this test)
// and the Insert Benchmark runs at --scale tiny so the test stays short.
func TestReadmeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's benchmarks")
	}
	root := repoRoot(t)
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := shellBlocks(string(md))
	if len(blocks) < 2 {
		t.Fatalf("README has %d sh blocks, want the quick start and the worked example", len(blocks))
	}
	if q := strings.Join(blocks[0], "\n"); q != "make run\nmake test" {
		t.Fatalf("the README's first block must be exactly the two commands make run and make test, got:\n%s", q)
	}

	tmp := t.TempDir()
	bin := filepath.Join(tmp, "dbperf")
	results := filepath.Join(tmp, "results.db")
	env := append(os.Environ(), "DBPERF_RESULTS="+results, "TMPDIR="+tmp)
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = root
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	var outputs, written []string
	workedExample := "" // what the worked example's (the second block's) last command printed
	for bi, block := range blocks {
		for _, line := range block {
			fields := strings.Fields(line)
			switch {
			case line == "make test":
				continue
			case line == "make run":
				out := run("make", "run", "SCALE=tiny", "BIN="+bin, "RESULTS="+results)
				for _, step := range []string{"l.i0", "l.x", "l.i1", "l.i2", "cleanup", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"} {
					if !strings.Contains(out, step) {
						t.Errorf("make run printed no %s step:\n%s", step, out)
					}
				}
				outputs = append(outputs, out)
			case fields[0] == "./bin/dbperf" || fields[0] == "dbperf":
				args := fields[1:]
				for i, a := range args {
					if a == "small" && i > 0 && args[i-1] == "--scale" {
						args[i] = "tiny"
					}
					if i > 0 && (args[i-1] == "-o" || args[i-1] == "--output") {
						args[i] = filepath.Join(tmp, filepath.Base(a)) // not into the checkout
						written = append(written, args[i])
					}
				}
				out := run(bin, args...)
				outputs = append(outputs, out)
				if bi == 1 {
					workedExample = out
				}
			case len(fields) > 1 && fields[0] == "python3" && fields[1] == "scripts/sidebyside.py":
				// The side-by-side comparison needs iibench.py and half an hour: check that
				// the script runs, documents its options, and refuses a missing iibench.py
				// with one line and exit status 2.
				help := run("python3", "scripts/sidebyside.py", "--help")
				for _, opt := range []string{"--iibench", "--rounds", "--out"} {
					if !strings.Contains(help, opt) {
						t.Errorf("sidebyside.py --help does not mention %s:\n%s", opt, help)
					}
				}
				cmd := exec.Command("python3", "scripts/sidebyside.py", "--iibench", filepath.Join(tmp, "missing.py"))
				cmd.Dir, cmd.Env = root, env
				out, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 2 || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
					t.Errorf("sidebyside.py with a missing iibench.py: %v, output:\n%s", err, out)
				}
			default:
				t.Fatalf("README command %q is not one this test knows how to run: teach TestReadmeCommands", line)
			}
		}
	}
	for _, f := range written {
		b, err := os.ReadFile(f)
		if err != nil || len(b) == 0 {
			t.Errorf("README command wrote no %s: %v", f, err)
		}
		if strings.HasSuffix(f, ".html") && (strings.Contains(string(b), "http://") || strings.Contains(string(b), "https://")) {
			t.Errorf("%s references the network", f)
		}
	}
	if !strings.Contains(workedExample, "l.i0") {
		t.Errorf("the worked example's last command printed no step table:\n%s", workedExample)
	}
}
