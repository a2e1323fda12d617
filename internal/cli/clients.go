package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// clientsValue is the --clients flag: one count for dbperf run, and for dbperf sweep a
// list of counts, the sweep's concurrency axis (--clients 1,2,4,8). A list given to run
// is refused with a line that names the sweep to use.
type clientsValue struct {
	n    *int   // the first count: the run's
	list *[]int // sweep: every count, in the order given, repeats dropped; nil for run
	cmd  string // the command, for the error: "dbperf run insertbench"
}

func (v *clientsValue) Set(s string) error {
	var ns []int
	for _, part := range strings.Split(s, ",") {
		// A count under 1 is the config's to refuse (config.Run.Validate), with the
		// command's other problems.
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return fmt.Errorf("%q is not a count of clients: give 1 or more, e.g. --clients 4", strings.TrimSpace(part))
		}
		if !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	if len(ns) > 1 && v.list == nil {
		return fmt.Errorf("%s takes one count of clients; to compare counts sweep them: dbperf sweep %s --clients %s", v.cmd,
			strings.TrimPrefix(strings.TrimPrefix(v.cmd, "dbperf run "), "dbperf sweep "), s)
	}
	*v.n = ns[0]
	if v.list != nil {
		*v.list = ns
	}
	return nil
}

func (v *clientsValue) String() string {
	if v.list != nil && len(*v.list) > 1 {
		parts := make([]string, len(*v.list))
		for i, n := range *v.list {
			parts[i] = strconv.Itoa(n)
		}
		return strings.Join(parts, ",")
	}
	return strconv.Itoa(*v.n)
}

func (v *clientsValue) Type() string {
	if v.list != nil {
		return "counts"
	}
	return "int"
}
