package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dbperf/dbperf/internal/report/reporttest"
	"github.com/dbperf/dbperf/internal/store"
)

// manyStepsStore is a results store holding a 41-step sysbench comparison: configs a
// and b, 4 runs each (synthetic runs through the real store and report code: a real
// suite of 41 steps, repeated, takes too long for a test).
func manyStepsStore(t *testing.T) (path string, ids []int64) {
	t.Helper()
	ctx := context.Background()
	path = filepath.Join(t.TempDir(), "r.db")
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ids, err = reporttest.Save(ctx, st, reporttest.ManyStepsRuns(reporttest.SysbenchSteps())...)
	if err != nil {
		t.Fatal(err)
	}
	return path, ids
}

// TestReportFitsColumns (issue 42): the text report of a 41-step sysbench comparison,
// dbperf compare's and one run's, have no line over $COLUMNS (100), or over 80 when
// COLUMNS is unset and the output is not a terminal; a file written with -o too.
func TestReportFitsColumns(t *testing.T) {
	t.Parallel()
	results, ids := manyStepsStore(t)
	out := filepath.Join(t.TempDir(), "r.txt")
	for _, c := range []struct {
		columns string
		width   int
	}{{"100", 100}, {"", 80}} {
		env := map[string]string{"COLUMNS": c.columns}
		for _, args := range [][]string{{"report", "a", "b"}, {"compare", "a", "b", "--metric", "throughput,p99"},
			{"report", fmt.Sprint(ids[0])}, {"report", "a", "b", "-o", out}} {
			code, stdout, stderr := runCLI(t, env, append(args, "--results", results)...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, stderr)
			}
			if args[len(args)-2] == "-o" {
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				stdout = string(b)
			}
			lines := strings.Split(stdout, "\n")
			if len(lines) < 40 {
				t.Fatalf("COLUMNS=%s %v: %d lines:\n%s", c.columns, args, len(lines), stdout)
			}
			for _, l := range lines {
				if n := utf8.RuneCountInString(l); n > c.width {
					t.Errorf("COLUMNS=%s %v: a line of %d runes:\n%s", c.columns, args, n, l)
					break
				}
			}
		}
	}
}
