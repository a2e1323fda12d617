package archtest

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// archDoc is the document, relative to the module, whose package table holds the import
// rules.
const archDoc = "docs/architecture.md"

// tableHeader is the header line of archDoc's package table; the table is the rows that
// follow it and its separator line, up to the first line that does not start with "|".
const tableHeader = "| package | role | may import (ours) |"

// The words of a third cell: cellNone, nothing of ours; cellAll, every package of the
// module; subtree, after a name, that package and every package below it.
const (
	cellNone = "–" // an en dash, as the table writes it
	cellAll  = "all"
	subtree  = "/…" // one ellipsis character
)

// A tableRow is one row of the package table.
type tableRow struct {
	line int    // 1-based line in the document, for messages
	pkg  string // the first cell's path, relative to the module: "internal/cli"
	// nonGo is the marker after the path of a row that is not a Go package ("Python" for
	// "`tools/sidebyside` (Python)"); empty for a Go package.
	nonGo string
	// family is true for a row whose first cell ends in /… (`internal/engine/…`): it
	// holds for every package below pkg that has no row of its own, so that a new engine,
	// server engine or workload needs no new row.
	family bool
	// testHelper is true when the role begins with "test helper": only _test.go files and
	// other test helpers may import the package.
	testHelper bool
	cell       string // the third cell as written, for messages
	all        bool   // the cell is "all"
	// may holds the cell's names relative to the module: "internal/engine" permits that
	// package, "internal/workload/..." it and every package below it. Empty for "–".
	may []string
}

var (
	separatorRe = regexp.MustCompile(`^\|(\s*:?-+:?\s*\|){3}$`)
	// firstCellRe is a path in backticks, optionally followed by a parenthesized marker.
	firstCellRe = regexp.MustCompile("^`([^`]+)`(?: \\(([A-Za-z][A-Za-z0-9+#]*)\\))?$")
	pathRe      = regexp.MustCompile(`^[a-z0-9_][a-z0-9_.-]*(/[a-z0-9_][a-z0-9_.-]*)*$`)
	nameRe      = regexp.MustCompile(`^[a-z0-9_]+(/[a-z0-9_]+)*$`)
)

// parseTable reads the package table of a Markdown document named doc (for messages). It
// checks the table's form only, not that its packages exist: every problem is in the
// error, each prefixed by doc:line.
func parseTable(doc, md string) ([]tableRow, error) {
	lines := strings.Split(md, "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) != tableHeader {
			continue
		}
		if start >= 0 {
			return nil, fmt.Errorf("%s:%d: a second package table (%q): keep one", doc, i+1, tableHeader)
		}
		start = i
	}
	if start < 0 {
		return nil, fmt.Errorf("%s: no package table: archtest reads the table whose header is %q", doc, tableHeader)
	}
	if start+1 >= len(lines) || !separatorRe.MatchString(strings.TrimSpace(lines[start+1])) {
		return nil, fmt.Errorf("%s:%d: the package table's header is not followed by its separator |---|---|---|", doc, start+2)
	}
	var rows []tableRow
	var errs []error
	seen := map[string]int{}
	for i := start + 2; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "|") {
			break
		}
		r, err := parseRow(l)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", doc, i+1, err))
			continue
		}
		r.line = i + 1
		key := r.pkg
		if r.family {
			key += subtree
		}
		if prev, ok := seen[key]; ok {
			errs = append(errs, fmt.Errorf("%s:%d: a second row for %s (the first is on line %d): keep one", doc, i+1, key, prev))
			continue
		}
		seen[key] = r.line
		rows = append(rows, r)
	}
	if len(rows) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s:%d: the package table has no rows", doc, start+1))
	}
	return rows, errors.Join(errs...)
}

// parseRow reads one line of the table, "| first | role | may import |".
func parseRow(line string) (tableRow, error) {
	cells := splitCells(line)
	if len(cells) != 3 {
		return tableRow{}, fmt.Errorf("a row has 3 cells (package | role | may import), this one %d (a | inside a cell is written \\|)", len(cells))
	}
	var r tableRow
	m := firstCellRe.FindStringSubmatch(cells[0])
	if m == nil {
		return r, fmt.Errorf("first cell %q: write the package's path relative to the module in backticks, as `internal/cli`, followed by a marker such as (Python) for what is not a Go package", cells[0])
	}
	r.pkg, r.nonGo = m[1], m[2]
	r.pkg, r.family = strings.CutSuffix(r.pkg, subtree)
	if r.family && r.nonGo != "" {
		return r, fmt.Errorf("first cell %q: a row for every package below a path (/…) is for Go packages only", cells[0])
	}
	if !pathRe.MatchString(r.pkg) || path.Clean(r.pkg) != r.pkg {
		return r, fmt.Errorf("first cell %q: %q is not a clean path relative to the module", cells[0], r.pkg)
	}
	if r.nonGo == "Go" {
		return r, fmt.Errorf("first cell %q: a Go package takes no marker", cells[0])
	}
	r.testHelper = strings.HasPrefix(cells[1], "test helper")
	r.cell = cells[2]
	if r.nonGo != "" {
		if r.cell != cellNone {
			return r, fmt.Errorf("%s is not a Go package (%s): its third cell is %s, since archtest checks no imports of it", r.pkg, r.nonGo, cellNone)
		}
		return r, nil
	}
	may, all, err := parseMay(r.cell)
	if err != nil {
		return r, fmt.Errorf("third cell of %s: %w", r.pkg, err)
	}
	r.all, r.may = all, may
	return r, nil
}

// splitCells returns the trimmed cells of a table line: the text between its unescaped
// pipes, the leading and trailing pipe excluded. An escaped pipe (\|) stays in its cell,
// unescaped.
func splitCells(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || strings.HasSuffix(line, `\|`) || len(line) < 2 {
		return nil
	}
	line = line[1 : len(line)-1]
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// parseMay reads a third cell: "–" (nothing of ours), "all" (every package of the module),
// or names relative to internal/ separated by ", ", each a package ("engine",
// "report/chart") or a package and everything below it ("workload/…"). It returns the
// names relative to the module, a subtree as "internal/workload/...".
func parseMay(cell string) (may []string, all bool, err error) {
	switch cell {
	case cellNone:
		return nil, false, nil
	case cellAll:
		return nil, true, nil
	case "", "-", "—", "none":
		return nil, false, fmt.Errorf("%q: write %s (an en dash) for nothing of ours", cell, cellNone)
	}
	for item := range strings.SplitSeq(cell, ",") {
		name := strings.TrimSpace(item)
		base, isTree := strings.CutSuffix(name, subtree)
		switch {
		case name == "":
			return nil, false, fmt.Errorf("%q: an empty name (names are separated by \", \")", cell)
		case strings.HasSuffix(name, "/...") || strings.Contains(name, "..."):
			return nil, false, fmt.Errorf("%q: write a subtree as %q, with one ellipsis character (…)", cell, "name"+subtree)
		case strings.HasPrefix(name, "internal/"):
			return nil, false, fmt.Errorf("%q: names are relative to internal/: write %q", cell, strings.TrimPrefix(name, "internal/"))
		case name == cellAll || name == cellNone:
			return nil, false, fmt.Errorf("%q: %q stands alone in its cell", cell, name)
		case !nameRe.MatchString(base):
			return nil, false, fmt.Errorf("%q: %q is not a package name relative to internal/ (lower case, / between elements, optionally ending in %s)", cell, name, subtree)
		}
		full := "internal/" + base
		if isTree {
			full += "/..."
		}
		if slices.Contains(may, full) {
			return nil, false, fmt.Errorf("%q: %q twice", cell, name)
		}
		may = append(may, full)
	}
	return may, false, nil
}

// permits says whether a row allows its package's non-test files to import imp (relative
// to the module).
func (r tableRow) permits(imp string) bool {
	if r.all {
		return true
	}
	for _, p := range r.may {
		if base, ok := strings.CutSuffix(p, "/..."); ok {
			if imp == base || strings.HasPrefix(imp, base+"/") {
				return true
			}
		} else if imp == p {
			return true
		}
	}
	return false
}

func TestParseMay(t *testing.T) {
	for _, c := range []struct {
		cell string
		may  []string
		all  bool
		bad  bool
	}{
		{cell: "–"},
		{cell: "all", all: true},
		{cell: "engine", may: []string{"internal/engine"}},
		{cell: "engine, engine/drvconn", may: []string{"internal/engine", "internal/engine/drvconn"}},
		{cell: "workload/…, engine/…", may: []string{"internal/workload/...", "internal/engine/..."}},
		{cell: "store, report/chart", may: []string{"internal/store", "internal/report/chart"}},
		{cell: "", bad: true},
		{cell: "-", bad: true},
		{cell: "none", bad: true},
		{cell: "workload/...", bad: true},
		{cell: "internal/engine", bad: true},
		{cell: "engine,, store", bad: true},
		{cell: "engine, engine", bad: true},
		{cell: "engine, all", bad: true},
		{cell: "Engine", bad: true},
		{cell: "engine (for tests)", bad: true},
		{cell: "`engine`", bad: true},
		{cell: "…", bad: true},
	} {
		may, all, err := parseMay(c.cell)
		if c.bad {
			if err == nil {
				t.Errorf("parseMay(%q) = %q, %v; want an error", c.cell, may, all)
			}
			continue
		}
		if err != nil || all != c.all || !slices.Equal(may, c.may) {
			t.Errorf("parseMay(%q) = %q, %v, %v; want %q, %v", c.cell, may, all, err, c.may, c.all)
		}
	}
}

func TestPermits(t *testing.T) {
	may, _, err := parseMay("engine, workload/…")
	if err != nil {
		t.Fatal(err)
	}
	r := tableRow{may: may}
	for imp, want := range map[string]bool{
		"internal/engine": true, "internal/engine/sqlite": false,
		"internal/workload": true, "internal/workload/insertbench": true,
		"internal/workloadx": false, "internal/store": false,
	} {
		if got := r.permits(imp); got != want {
			t.Errorf("permits(%q) = %v, want %v", imp, got, want)
		}
	}
	if none := (tableRow{}); none.permits("internal/engine") {
		t.Error("– permits internal/engine")
	}
	if all := (tableRow{all: true}); !all.permits("internal/store") {
		t.Error("all does not permit internal/store")
	}
}

func TestParseTable(t *testing.T) {
	const head = "# x\n\n| package | role | may import (ours) |\n|---|---|---|\n"
	good := head +
		"| `cmd/dbperf` | the process → `cli.Run` | cli |\n" +
		"| `internal/engine/kvtest` | test helper: a suite | engine |\n" +
		"| `internal/catalog` | lists, `a \\| b` | workload/…, engine/… |\n" +
		"| `tools/sidebyside` (Python) | a tool | – |\n" +
		"| `internal/engine/…` | every other engine | engine/… |\n" +
		"| `internal/engine` | the engines' interfaces | – |\n" +
		"\nafter the table | not a row |\n"
	rows, err := parseTable("doc.md", good)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6: %+v", len(rows), rows)
	}
	if r := rows[4]; r.pkg != "internal/engine" || !r.family || !slices.Equal(r.may, []string{"internal/engine/..."}) {
		t.Errorf("row 4 = %+v", r)
	}
	if r := rows[5]; r.pkg != "internal/engine" || r.family || len(r.may) != 0 {
		t.Errorf("row 5 = %+v", r)
	}
	if r, ok := familyRow(rows, "internal/engine/example"); !ok || r.line != rows[4].line {
		t.Errorf("familyRow(internal/engine/example) = %+v, %v", r, ok)
	}
	if _, ok := familyRow(rows, "internal/engine"); ok {
		t.Error("a row for every package below internal/engine holds for internal/engine itself")
	}
	if r := rows[0]; r.pkg != "cmd/dbperf" || r.line != 5 || !slices.Equal(r.may, []string{"internal/cli"}) || r.testHelper || r.nonGo != "" {
		t.Errorf("row 0 = %+v", r)
	}
	if r := rows[1]; !r.testHelper {
		t.Errorf("row 1 is not a test helper: %+v", r)
	}
	if r := rows[2]; !slices.Equal(r.may, []string{"internal/workload/...", "internal/engine/..."}) {
		t.Errorf("row 2 = %+v", r)
	}
	if r := rows[3]; r.pkg != "tools/sidebyside" || r.nonGo != "Python" {
		t.Errorf("row 3 = %+v", r)
	}

	for name, md := range map[string]string{
		"no table":         "# x\n\n| package | role |\n|---|---|\n",
		"two tables":       good + "\n" + good,
		"no separator":     "| package | role | may import (ours) |\n| `a` | b | – |\n",
		"no rows":          head + "\n",
		"two cells":        head + "| `internal/a` | – |\n",
		"four cells":       head + "| `internal/a` | a | b | – |\n",
		"unescaped pipe":   head + "| `internal/a` | a|b | – |\n",
		"no backticks":     head + "| internal/a | a | – |\n",
		"two paths":        head + "| `internal/a`, `internal/b` | a | – |\n",
		"bad marker":       head + "| `tools/x` Python | a | – |\n",
		"Go marker":        head + "| `internal/a` (Go) | a | – |\n",
		"unclean path":     head + "| `internal/../a` | a | – |\n",
		"absolute path":    head + "| `/internal/a` | a | – |\n",
		"non-Go imports":   head + "| `tools/x` (Python) | a | engine |\n",
		"hyphen for none":  head + "| `internal/a` | a | - |\n",
		"dots for subtree": head + "| `internal/a` | a | workload/... |\n",
		"duplicate row":    head + "| `internal/a` | a | – |\n| `internal/a` | b | – |\n",
		"no closing pipe":  head + "| `internal/a` | a | –\n",
		"non-Go family":    head + "| `tools/…` (Python) | a | – |\n",
		"duplicate family": head + "| `internal/a/…` | a | – |\n| `internal/a/…` | b | – |\n",
	} {
		if rows, err := parseTable("doc.md", md); err == nil {
			t.Errorf("%s: parseTable = %+v, want an error", name, rows)
		}
	}
}

// TestParseArchDoc checks that the real document parses and says what everyone knows.
func TestParseArchDoc(t *testing.T) {
	rows := archRows(t, repoRoot(t))
	byPkg := map[string]tableRow{}
	for _, r := range rows {
		if !r.family {
			byPkg[r.pkg] = r
		}
	}
	if !byPkg["internal/runner"].permits("internal/metrics") {
		t.Error("runner must be allowed to use metrics")
	}
	if byPkg["internal/engine"].permits("internal/runner") {
		t.Error("engine must not be allowed to use runner")
	}
	if !byPkg["internal/engine/enginetest"].testHelper {
		t.Error("enginetest is not a test helper")
	}
}
