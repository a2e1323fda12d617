// Package archtest holds the tests that keep the architecture honest: the import
// directions of docs/architecture.md, and the README's commands, executed.
//
// The commands are those of README.md and docs/*.md (docFiles: the README first, then
// docs/ by name).
//
// TestImportDirections reads docs/architecture.md's package table: it is the import rules
// themselves. Every directory of the module with .go files (test-only packages too) needs
// a row: its own, or a row whose first cell ends in /…, which holds for every package
// below that path without a row of its own (so a new engine, server engine or workload is
// its folder and a catalog line, with no edit of the table). Every row must name one: the
// first cell is the path relative to the module in backticks, and a row for something
// that is not Go says so after it, as `tools/sidebyside` (Python), with – as its third
// cell (nothing is checked). The third cell is what the package's non-test files,
// whatever their build tags, may import of ours (_test.go files are not checked): – (an
// en dash) for nothing, all for every package of the module, or names relative to
// internal/ separated by ", ". engine/drvconn is that package alone; workload/… (one
// ellipsis character) is internal/workload and every package below it. Each name must be
// a package of the module. A package whose role begins with "test helper" may be
// imported only by _test.go files and other test helpers.
package archtest

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/dbperf/dbperf"

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

// archRows returns the rows of archDoc's package table, failing the test when the table
// does not parse.
func archRows(t *testing.T, root string) []tableRow {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(root, archDoc))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parseTable(archDoc, string(md))
	if err != nil {
		t.Fatalf("%v\n(how to write a row: the paragraph under the table)", err)
	}
	return rows
}

// A goPkg is one directory of the module with .go files.
type goPkg struct {
	first string // its first .go file (relative to the module), to name it in messages
	// imports maps each package of ours (relative to the module) that its non-test files
	// import to those files, relative to the module.
	imports map[string][]string
}

// goPackages returns the module's packages by directory (relative to the module): every
// directory with .go files, _test.go files alone included, outside hidden, "_", testdata,
// bin and nested-module directories. Non-test files are read for their imports only
// (go/parser's ImportsOnly), whatever their build constraints say. Files that do not parse
// are returned as errors beside the packages.
func goPackages(root string) (map[string]*goPkg, []error, error) {
	pkgs := map[string]*goPkg{}
	var bad []error
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == root {
				return nil
			}
			name := d.Name()
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "bin" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		relFile, _ := filepath.Rel(root, p)
		relFile = filepath.ToSlash(relFile)
		dir := filepath.ToSlash(filepath.Dir(relFile))
		pkg := pkgs[dir]
		if pkg == nil {
			pkg = &goPkg{first: relFile, imports: map[string][]string{}}
			pkgs[dir] = pkg
		}
		if strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			bad = append(bad, fmt.Errorf("%s: %w", relFile, err))
			return nil
		}
		for _, is := range f.Imports {
			imp, _ := strconv.Unquote(is.Path.Value)
			if ours, ok := strings.CutPrefix(imp, module+"/"); ok && !slices.Contains(pkg.imports[ours], relFile) {
				pkg.imports[ours] = append(pkg.imports[ours], relFile)
			}
		}
		return nil
	})
	return pkgs, bad, err
}

// short is how a third cell names a package of ours: relative to internal/.
func short(pkg string) string {
	if s, ok := strings.CutPrefix(pkg, "internal/"); ok {
		return s
	}
	return pkg
}

// TestImportDirections checks the module against docs/architecture.md's package table:
// every package has a row (its own, or a row for every package below a path, as
// `internal/engine/…`, without one), every row names a package (or is marked as not Go), every name
// in a third cell is a package, and every import of ours in a package's non-test files is
// one its row permits. _test.go files are not checked: a test may import any package of
// ours, and a package whose role begins with "test helper" may be imported by _test.go
// files (and other test helpers) only.
func TestImportDirections(t *testing.T) {
	root := repoRoot(t)
	rows := archRows(t, root)
	pkgs, bad, err := goPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range bad {
		t.Error(err)
	}
	byPkg := map[string]tableRow{}
	var families []tableRow
	for _, r := range rows {
		where := fmt.Sprintf("%s:%d", archDoc, r.line)
		if r.family {
			families = append(families, r)
			below := false
			for p := range pkgs {
				below = below || strings.HasPrefix(p, r.pkg+"/")
			}
			if !below {
				t.Errorf("%s: the row of every package below %s names none: fix the path or remove the row", where, r.pkg)
			}
		} else {
			byPkg[r.pkg] = r
		}
		if r.nonGo != "" {
			if fi, err := os.Stat(filepath.Join(root, r.pkg)); err != nil || !fi.IsDir() {
				t.Errorf("%s: the row of %s (%s) names no directory: fix the path or remove the row", where, r.pkg, r.nonGo)
			} else if pkgs[r.pkg] != nil {
				t.Errorf("%s: the row of %s says (%s), but %s is a Go package: remove the marker and list what it may import", where, r.pkg, r.nonGo, r.pkg)
			}
			continue
		}
		if pkgs[r.pkg] == nil && !r.family {
			t.Errorf("%s: the row of %s names no Go package (no directory with .go files): fix the path, remove the row, or mark what is not Go after its path, as `tools/sidebyside` (Python)", where, r.pkg)
		}
		for _, name := range r.may {
			base, tree := strings.CutSuffix(name, "/...")
			exists := pkgs[base] != nil
			for p := range pkgs {
				exists = exists || tree && strings.HasPrefix(p, base+"/")
			}
			if !exists {
				t.Errorf("%s: the third cell of %s (%q) names %s, which is no package of the module: fix or remove the name", where, r.pkg, r.cell, short(name))
			}
		}
	}

	dirs := make([]string, 0, len(pkgs))
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		pkg := pkgs[dir]
		imps := make([]string, 0, len(pkg.imports))
		for imp := range pkg.imports {
			imps = append(imps, imp)
		}
		sort.Strings(imps)
		r, ok := byPkg[dir]
		if !ok {
			r, ok = familyRow(families, dir)
		}
		if !ok {
			cell := cellNone
			if len(imps) > 0 {
				names := make([]string, len(imps))
				for i, imp := range imps {
					names[i] = short(imp)
				}
				cell = strings.Join(names, ", ")
			}
			t.Errorf("package %s (%s) has no row in %s's package table: add the row \"| `%s` | <its role> | %s |\"", dir, pkg.first, archDoc, dir, cell)
			continue
		}
		if r.nonGo != "" {
			continue // reported above
		}
		for _, imp := range imps {
			files := pkg.imports[imp]
			if h, ok := byPkg[imp]; ok && h.testHelper && !r.testHelper {
				t.Errorf("%s imports %s, a helper for tests only (its role, %s:%d, begins \"test helper\"): import it from _test.go files only",
					strings.Join(files, ", "), imp, archDoc, h.line)
				continue
			}
			if !r.permits(imp) {
				fix := fmt.Sprintf("add %s to that row's third cell if %s may depend on it", short(imp), dir)
				if !strings.HasPrefix(imp, "internal/") {
					fix = "only \"all\" permits a package outside internal/"
				}
				t.Errorf("%s imports %s, which the row of %s (%s:%d, may import %q) does not permit: %s, or remove the import",
					strings.Join(files, ", "), imp, dir, archDoc, r.line, r.cell, fix)
			}
		}
	}

	for _, must := range []string{"cmd/dbperf", "internal/cli", "internal/runner", "internal/store", "internal/report", "internal/archtest"} {
		if pkgs[must] == nil {
			t.Errorf("package %s was not found: is the walk broken?", must)
		}
	}
}

// familyRow is the row for every package below a path (`internal/engine/…`) that holds
// for dir, the one of the longest path when several do.
func familyRow(families []tableRow, dir string) (tableRow, bool) {
	var best tableRow
	found := false
	for _, r := range families {
		if strings.HasPrefix(dir, r.pkg+"/") && (!found || len(r.pkg) > len(best.pkg)) {
			best, found = r, true
		}
	}
	return best, found
}
