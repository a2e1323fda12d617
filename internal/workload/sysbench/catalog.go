package sysbench

import (
	"slices"
	"strconv"
)

// kind is what a test's event does (reference §3.3, one lua script each).
type kind int

const (
	kPointQuery     kind = iota // oltp_point_select
	kRandomPoints               // oltp_inlist_select
	kHotPoints                  // oltp_inlist_select --hot-points
	kPoints                     // oltp_points_covered
	kRange                      // oltp_range_covered
	kScan                       // oltp_scan
	kReadOnly                   // oltp_read_only
	kReadOnlyCount              // oltp_read_only_count
	kUpdateIndex                // oltp_update_index
	kUpdateNonIndex             // oltp_update_non_index
	kUpdateInlist               // oltp_inlist_update
	kWriteOnly                  // oltp_write_only
	kReadWrite                  // oltp_read_write
	kDelete                     // oltp_delete
	kInsert                     // oltp_insert
)

// read-only's range queries (oltp_read_only's simple/sum/order/distinct_ranges).
const (
	roSimple = 1 << iota
	roSum
	roOrder
	roDistinct
	roAll = roSimple | roSum | roOrder | roDistinct
)

// Id distributions of the update-nonindex family (§3.3).
const (
	idsUniform = iota // --rand-type=uniform (run.sh's default)
	idsOne            // --table-size=1: always id 1
	idsZipf           // --rand-type=zipfian
)

// Durations (§3.2, §3.4): which of --read-time (the zero value), --write-time,
// --insert-time a run lasts, or the scan warm-ups' 60 s (capped at the read time).
const (
	timeRead = iota
	timeWrite
	timeInsert
	timeScanWarm
)

// Step groups (workload.Meta.Groups), in the order of the reference's published tables
// (§3.6, last paragraph), then the load and the warm-up runs, which no reference table
// summarizes.
const (
	groupPoint  = "point"
	groupRange  = "range"
	groupAgg    = "range-agg"
	groupWrite  = "write"
	groupLoad   = "load"
	groupWarmUp = "warm-up"
)

// points and ranges are the tests' fixed sizes: points-*/hot-points look up 100 ids,
// range-* read BETWEEN x AND x+100 (101 rows).
const (
	fixedPoints = 100
	fixedRange  = 100
	pointSelect = 10 // read-only's point selects per transaction
)

// test is one microbenchmark of the catalogue (§3.3).
type test struct {
	name  string // verbatim
	kind  kind
	group string
	// ranges it runs at, in order (§3.4); nil: it takes no range argument.
	ranges []int
	time   int
	// covered: the query reads only the index (points-/range-covered-*); onID: on the
	// primary key rather than the secondary index on k.
	covered, onID bool
	ro            int // kReadOnly: which range queries
	ids           int // kUpdateNonIndex: id distribution
}

// writes says whether the test's statements change rows (a data check follows it).
func (t test) writes() bool {
	switch t.kind {
	case kUpdateIndex, kUpdateNonIndex, kUpdateInlist, kWriteOnly, kReadWrite, kDelete, kInsert:
		return true
	}
	return false
}

// statements is how many statements one event sends, as sysbench counts its queries
// (BEGIN and COMMIT included, §3.6): 16 per read-only transaction, 13 for the
// read-only-simple/-sum/-order/-distinct, 6 per write-only, 20 per read-write, else 1.
func (t test) statements() int {
	switch t.kind {
	case kReadOnly:
		n := 2 + pointSelect
		for _, bit := range []int{roSimple, roSum, roOrder, roDistinct} {
			if t.ro&bit != 0 {
				n++
			}
		}
		return n
	case kWriteOnly:
		return 2 + 4
	case kReadWrite:
		return 2 + pointSelect + 4 + 4
	}
	return 1
}

// catalogue is every test of §3.3, verbatim.
func catalogue() []test {
	return []test{
		{name: "point-query", kind: kPointQuery, group: groupPoint},
		{name: "random-points", kind: kRandomPoints, group: groupPoint, ranges: []int{10, 100, 1000}},
		{name: "hot-points", kind: kHotPoints, group: groupPoint},
		{name: "points-covered-pk", kind: kPoints, group: groupPoint, covered: true, onID: true},
		{name: "points-notcovered-pk", kind: kPoints, group: groupPoint, onID: true},
		{name: "points-covered-si", kind: kPoints, group: groupPoint, covered: true},
		{name: "points-notcovered-si", kind: kPoints, group: groupPoint},
		{name: "range-covered-pk", kind: kRange, group: groupRange, covered: true, onID: true},
		{name: "range-notcovered-pk", kind: kRange, group: groupRange, onID: true},
		{name: "range-covered-si", kind: kRange, group: groupRange, covered: true},
		{name: "range-notcovered-si", kind: kRange, group: groupRange},
		{name: "scan", kind: kScan, group: groupRange},
		{name: "read-only", kind: kReadOnly, group: groupAgg, ranges: []int{10, 100, 10000}, ro: roAll},
		{name: "read-only-simple", kind: kReadOnly, group: groupAgg, ranges: []int{1000}, ro: roSimple},
		{name: "read-only-sum", kind: kReadOnly, group: groupAgg, ranges: []int{1000}, ro: roSum},
		{name: "read-only-order", kind: kReadOnly, group: groupAgg, ranges: []int{1000}, ro: roOrder},
		{name: "read-only-distinct", kind: kReadOnly, group: groupAgg, ranges: []int{1000}, ro: roDistinct},
		{name: "read-only-count", kind: kReadOnlyCount, group: groupAgg, ranges: []int{1000}},
		{name: "update-index", kind: kUpdateIndex, group: groupWrite, time: timeWrite},
		{name: "update-nonindex", kind: kUpdateNonIndex, group: groupWrite, time: timeWrite, ids: idsUniform},
		{name: "update-one", kind: kUpdateNonIndex, group: groupWrite, time: timeWrite, ids: idsOne},
		{name: "update-zipf", kind: kUpdateNonIndex, group: groupWrite, time: timeWrite, ids: idsZipf},
		{name: "update-inlist", kind: kUpdateInlist, group: groupWrite, time: timeWrite},
		// write-only's statements take no range (its reference label says range=10000);
		// it lasts the read time (§3.4 item 10).
		{name: "write-only", kind: kWriteOnly, group: groupWrite},
		{name: "read-write", kind: kReadWrite, group: groupWrite, ranges: []int{10, 100}, ro: roAll},
		{name: "delete", kind: kDelete, group: groupWrite, time: timeWrite},
		{name: "insert", kind: kInsert, group: groupWrite, time: timeInsert},
	}
}

func testByName(name string) (test, bool) {
	for _, t := range catalogue() {
		if t.name == name {
			return t, true
		}
	}
	return test{}, false
}

// Steps that are not tests.
const (
	stepLoad             = "load"
	stepCleanupLoad      = "cleanup.load"
	stepCleanupReadWrite = "cleanup.read-write"
)

// entry is one item of the sequence (§3.4): a test run, possibly as a warm-up (variant
// ".warm", ".pre" or ".warmpre", the same test run earlier for cache warming or as a
// "before writes" baseline), or a step that is not a test (the load, the cleanups).
type entry struct {
	test    string // "" for the load and the cleanups
	variant string
	step    string // the load and the cleanups: their step name
}

// name is what --tests selects: the test's name with its variant, e.g. "scan.warm".
func (e entry) name() string {
	if e.test == "" {
		return e.step
	}
	return e.test + e.variant
}

// sequence is the run order of §3.4 (all_small.sh): the load and its cleanup (run.sh's
// setup and postwrite around point-query.warm), the warm-ups, the writes, the cleanup
// after read-write, then the reads, delete and insert.
func sequence() []entry {
	t := func(name string) entry { return entry{test: name} }
	v := func(name, variant string) entry { return entry{test: name, variant: variant} }
	return []entry{
		{step: stepLoad},
		v("point-query", ".warm"),
		{step: stepCleanupLoad},
		v("scan", ".warmpre"),
		v("point-query", ".pre"),
		v("range-notcovered-si", ".pre"),
		t("update-inlist"), t("update-index"), t("update-nonindex"), t("update-one"), t("update-zipf"),
		t("write-only"),
		t("read-write"),
		{step: stepCleanupReadWrite},
		v("scan", ".warm"), t("scan"),
		t("read-only"),
		t("read-only-simple"), t("read-only-sum"), t("read-only-order"), t("read-only-distinct"), t("read-only-count"),
		t("point-query"),
		t("random-points"),
		t("hot-points"),
		t("points-covered-pk"), t("points-notcovered-pk"), t("range-covered-pk"), t("range-notcovered-pk"),
		v("points-covered-si", ".warm"), t("points-covered-si"), t("points-notcovered-si"),
		t("range-covered-si"), t("range-notcovered-si"),
		t("delete"),
		t("insert"),
	}
}

// testNames are the names --tests accepts, in run order: every test of the sequence with
// its variant.
func testNames() []string {
	var out []string
	for _, e := range sequence() {
		if e.test != "" {
			out = append(out, e.name())
		}
	}
	return out
}

// stepSpec is one step of a run: an entry at one range and one thread count.
type stepSpec struct {
	name    string
	entry   entry
	test    test // zero for the load and the cleanups
	rng     int  // the range (0: the test takes none)
	threads int
	// group is the step's group in Meta.Groups ("" for the cleanups).
	group string
}

// stepName is the step-name scheme: the verbatim test name first, then its variant,
// ".range=R" when the test takes a range, and ".t<N>" when --threads lists several
// counts: "read-only.range=10", "scan.warm", "read-write.range=100.t16".
func stepName(e entry, rng, threads int, manyThreads bool) string {
	n := e.name()
	if rng > 0 {
		n += ".range=" + strconv.Itoa(rng)
	}
	if manyThreads {
		n += ".t" + strconv.Itoa(threads)
	}
	return n
}

// allSteps lists every step of a run, in order, for the thread counts and the range
// override (0: the catalogue's ranges): test-major as run.sh runs them (one test, one
// range, each thread count in turn), the load and the cleanups once.
func allSteps(threads []int, rangeSize int) []stepSpec {
	many := len(threads) > 1
	var out []stepSpec
	for _, e := range sequence() {
		if e.test == "" {
			g := ""
			if e.step == stepLoad {
				g = groupLoad
			}
			out = append(out, stepSpec{name: e.step, entry: e, group: g})
			continue
		}
		t, _ := testByName(e.test)
		ranges := []int{0}
		if t.ranges != nil {
			ranges = t.ranges
			if rangeSize > 0 {
				ranges = []int{rangeSize}
			}
		}
		g := t.group
		if e.variant != "" {
			g = groupWarmUp
		}
		for _, r := range ranges {
			for _, n := range threads {
				out = append(out, stepSpec{name: stepName(e, r, n, many), entry: e, test: t, rng: r, threads: n, group: g})
			}
		}
	}
	return out
}

// stepNames lists the names of steps.
func stepNames(steps []stepSpec) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.name
	}
	return out
}

// selectByTests keeps the load, its cleanup, the selected tests and the cleanup after
// read-write when read-write is selected, in run order.
func selectByTests(all []stepSpec, tests []string) []stepSpec {
	var out []stepSpec
	for _, s := range all {
		switch {
		case s.name == stepLoad || s.name == stepCleanupLoad:
		case s.name == stepCleanupReadWrite:
			if !slices.Contains(tests, "read-write") {
				continue
			}
		case !slices.Contains(tests, s.entry.name()):
			continue
		}
		out = append(out, s)
	}
	return out
}
