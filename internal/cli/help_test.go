package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/engine"
)

// TestWorkloadExamples checks every example of `dbperf run W --help` as the command itself
// would, short of running: the flags parse and the configuration validates (checkRun:
// engine, target, parameters, the plan). The examples of `dbperf sweep W --help` are checked
// to be shown and to parse only: validating a sweep starts its servers. Each workload has
// examples of both.
func TestWorkloadExamples(t *testing.T) {
	env := Env{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{},
		Getenv: func(string) string { return "" }}
	for _, wl := range catalog.Workloads() {
		name := wl.Meta().Name
		if len(wl.Meta().Examples) == 0 || len(wl.Meta().SweepExamples) == 0 {
			t.Errorf("%s: no examples for run and sweep (workload.Meta.Examples, SweepExamples)", name)
		}
		for _, ex := range wl.Meta().Examples {
			cmd, f, params := newWorkloadCmd(env, wl)
			if !strings.Contains(cmd.Example, "dbperf run "+name+" "+ex) {
				t.Errorf("run %s --help does not show %q:\n%s", name, ex, cmd.Example)
			}
			if err := cmd.ParseFlags(strings.Fields(ex)); err != nil {
				t.Errorf("dbperf run %s %s: %v", name, ex, err)
				continue
			}
			if _, _, err := checkRun(cmd, env, wl, params, f); err != nil {
				t.Errorf("dbperf run %s %s: %v", name, ex, err)
			}
		}
		for _, ex := range wl.Meta().SweepExamples {
			cmd := newSweepWorkloadCmd(env, wl)
			if !strings.Contains(cmd.Example, "dbperf sweep "+name+" "+ex) {
				t.Errorf("sweep %s --help does not show %q:\n%s", name, ex, cmd.Example)
			}
			if err := cmd.ParseFlags(strings.Fields(ex)); err != nil {
				t.Errorf("dbperf sweep %s %s: %v", name, ex, err)
			}
		}
	}
}

// TestWorkloadHelpFlags: a workload's --help offers only the engines of its kind, and the
// server flags only when one of them is a server (hidden, not removed: using one still gets
// the line saying why it does not apply, TestDBBenchProfiles).
func TestWorkloadHelpFlags(t *testing.T) {
	env := Env{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{},
		Getenv: func(string) string { return "" }}
	for _, wl := range catalog.Workloads() {
		m := wl.Meta()
		run, _, _ := newWorkloadCmd(env, wl)
		sweep := newSweepWorkloadCmd(env, wl)
		want := map[engine.Kind][]string{engine.KindSQL: {"sqlite", "postgres", "mariadb"}, engine.KindKV: {"rocksdb", "pebble"}}[m.Kind]
		for _, c := range []*cobra.Command{run, sweep} {
			eng := c.Flags().Lookup("engine")
			if eng == nil || eng.DefValue != want[0] || eng.Usage != "engine to benchmark: "+strings.Join(want, ", ") {
				t.Errorf("%s %s --engine: %+v, want default %s of %v", c.Name(), m.Name, eng, want[0], want)
			}
			for _, fl := range serverOnlyFlags() {
				if shown(c, fl) != (m.Kind == engine.KindSQL) {
					t.Errorf("%s %s --help: --%s shown %v, want %v", c.Name(), m.Name, fl, shown(c, fl), m.Kind == engine.KindSQL)
				}
			}
		}
		if shown(sweep, "versions") != (m.Kind == engine.KindSQL) {
			t.Errorf("sweep %s --help: --versions shown %v", m.Name, shown(sweep, "versions"))
		}
	}
}

// shown says whether cmd's --help lists flag name.
func shown(cmd *cobra.Command, name string) bool {
	return strings.Contains(cmd.Flags().FlagUsages(), "--"+name+" ")
}

// TestEveryCommandHasExample: every command of dbperf's (but cobra's own help and
// completion) shows an example in its --help, and each example's flags parse as that
// command's; the workloads' run and sweep examples are checked further above.
func TestEveryCommandHasExample(t *testing.T) {
	env := Env{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{},
		Getenv: func(string) string { return "" }}
	root := newRoot(t.Context(), env)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c == root || c.Hidden || c.Name() == "help" || c.Name() == "completion" || (c.Parent() != nil && c.Parent().Name() == "completion") {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no example in its --help (cobra.Command.Example)", c.CommandPath())
			return
		}
		for _, line := range strings.Split(c.Example, "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || f[0] != "dbperf" {
				t.Errorf("%s: example %q does not start with dbperf", c.CommandPath(), line)
				continue
			}
			cmd, args, err := root.Find(f[1:])
			if err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
				continue
			}
			if err := cmd.ParseFlags(args); err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
			}
		}
	}
	walk(root)
}
