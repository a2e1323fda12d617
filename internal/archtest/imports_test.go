// Package archtest holds the tests that keep the architecture honest: the import
// directions of docs/architecture.md, and the README's commands, executed.
package archtest

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/dbperf/dbperf"

// allowed lists, per package (relative to the module), the packages of ours it may import
// in non-test code. A trailing "/..." allows every package below. Keep in sync with
// docs/architecture.md.
func allowed() map[string][]string {
	return map[string][]string{
		"cmd/dbperf":                    {"internal/cli"},
		"internal/cli":                  {"internal/..."},
		"internal/config":               {},
		"internal/catalog":              {"internal/workload/...", "internal/engine/...", "internal/workload", "internal/engine"},
		"internal/engine":               {},
		"internal/engine/drvconn":       {"internal/engine"},
		"internal/engine/blockconn":     {},
		"internal/engine/sqlite":        {"internal/engine", "internal/engine/drvconn"},
		"internal/engine/postgres":      {"internal/engine", "internal/engine/blockconn"},
		"internal/engine/mariadb":       {"internal/engine", "internal/engine/blockconn", "internal/engine/drvconn"},
		"internal/engine/enginetest":    {"internal/engine"},
		"internal/engine/pebble":        {"internal/engine"},
		"internal/engine/rocksdb":       {"internal/engine"},
		"internal/engine/kvtest":        {"internal/engine"},
		"internal/server":               {},
		"internal/workload":             {"internal/engine", "internal/config"},
		"internal/workload/insertbench": {"internal/workload", "internal/engine", "internal/config"},
		"internal/workload/sysbench":    {"internal/workload", "internal/engine", "internal/config"},
		"internal/workload/dbbench":     {"internal/workload", "internal/engine", "internal/config"},
		"internal/metrics":              {"internal/hwstat"},
		"internal/hwstat":               {},
		"internal/runner":               {"internal/engine", "internal/workload", "internal/metrics", "internal/hwstat"},
		"internal/store":                {"internal/metrics"},
		"internal/stats":                {},
		"internal/changepoint":          {},
		"internal/report":               {"internal/store", "internal/stats", "internal/metrics", "internal/report/chart", "internal/changepoint"},
		"internal/report/chart":         {},
		"internal/web":                  {"internal/store", "internal/report", "internal/changepoint"},
		"internal/browsertest":          {},
		"internal/progress":             {"internal/metrics"},
		"internal/archtest":             {},
	}
}

// testHelpers are the packages only tests may import: non-test code importing them fails
// whatever its row allows.
var testHelpers = map[string]bool{"internal/browsertest": true, "internal/engine/enginetest": true}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("repo root not found from %s: %v", dir, err)
	}
	return dir
}

func permits(rules []string, imp string) bool {
	for _, r := range rules {
		if base, ok := strings.CutSuffix(r, "/..."); ok {
			if imp == base || strings.HasPrefix(imp, base+"/") {
				return true
			}
		} else if imp == r {
			return true
		}
	}
	return false
}

func TestImportDirections(t *testing.T) {
	root := repoRoot(t)
	rules := allowed()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		pkgRules, ok := rules[rel]
		if !ok {
			t.Errorf("package %s is not in archtest's import rules: add it there and to docs/architecture.md", rel)
			return nil
		}
		seen[rel] = true
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, is := range f.Imports {
			imp, _ := strconv.Unquote(is.Path.Value)
			ours, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			if !permits(pkgRules, ours) {
				t.Errorf("%s imports %s, which its row in docs/architecture.md does not allow", filepath.Base(path), ours)
			}
			if testHelpers[ours] {
				t.Errorf("%s imports %s, a helper for tests only", filepath.Base(path), ours)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"cmd/dbperf", "internal/cli", "internal/runner", "internal/store", "internal/report"} {
		if !seen[must] {
			t.Errorf("package %s was not found: is the walk broken?", must)
		}
	}
}

func TestPermits(t *testing.T) {
	r := []string{"internal/engine", "internal/workload/..."}
	for imp, want := range map[string]bool{
		"internal/engine": true, "internal/engine/sqlite": false,
		"internal/workload": true, "internal/workload/insertbench": true, "internal/store": false,
	} {
		if got := permits(r, imp); got != want {
			t.Errorf("permits(%q) = %v, want %v", imp, got, want)
		}
	}
	if !slices.Contains(allowed()["internal/runner"], "internal/metrics") {
		t.Error("runner must be allowed to use metrics")
	}
}
