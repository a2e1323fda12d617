package sweep

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
)

// MinSlice and MaxSlice bound --slice in seconds (0 aside): a shorter slice is mostly
// the switch between points (0.0001 stored thousands of runs a minute), a longer one no
// longer alternates the points within a step.
const MinSlice, MaxSlice = 0.5, 3600.0

// Kind is what kind of engine a sweep runs: a key-value engine (KV) is swept over its
// profiles (LSM options) only, the library dbperf links being its one version; an
// embedded SQL engine (Embedded) has neither versions nor profiles, and is swept only
// over named points of its one configuration (an A/A comparison, a known effect with
// --think).
type Kind struct{ KV, Embedded bool }

// KindOf is the kind of a sweep over the engine meta describes.
func KindOf(meta engine.Meta) Kind {
	return Kind{KV: meta.Kind == engine.KindKV, Embedded: meta.Embedded && meta.Kind != engine.KindKV}
}

// Managed says the points run on servers dbperf starts (versions and profiles).
func (k Kind) Managed() bool { return !k.KV && !k.Embedded }

// Asked is a sweep as its command line asks for it, before its points are expanded:
// what Problems and KindProblems check.
type Asked struct {
	// Design is Interleaved, Sequential or Duet; Slice the interleaved designs' slice in
	// seconds (0: whole steps).
	Design string
	Slice  float64
	// LoadOnce, Settle, SameData and Instances are Options'; Repeat is the blocks asked
	// for and Resume --resume.
	LoadOnce, Settle, SameData bool
	Instances, Repeat          int
	Resume                     bool
	// Cluster is --cluster's nodes (0 or 1: one server per point).
	Cluster int
	// ServerCPUs is the managed servers' --server-cpus (0: none).
	ServerCPUs int
	// Placement is the duet's --duet-placement (Placements; "": PlacementPoint),
	// PlacementGiven whether the command line set it.
	Placement      string
	PlacementGiven bool
	// Versions are the versions given, Profiles the points named in --profiles.
	Versions []string
	Profiles []NamedProfile
	// Clients is how many counts of clients were given, Vary how many --vary axes.
	Clients, Vary int
}

// Problems are the sweep's refusals of its design's settings, one line each.
func (a Asked) Problems() []string {
	var errs []string
	if a.Settle && !a.LoadOnce {
		errs = append(errs, "--settle: only with --load-once (without it every block loads its tables afresh); add --load-once or drop --settle")
	}
	if a.SameData && !a.LoadOnce {
		errs = append(errs, "--same-data: only with --load-once (the copy is made once the first block has loaded the data, which the later blocks keep); add --load-once or drop --same-data")
	}
	errs = append(errs, a.instancesProblems()...)
	if a.SameData && a.Cluster > 1 {
		errs = append(errs, "--same-data: a point's cluster has several servers; drop --same-data or --cluster")
	}
	if a.Placement != "" && !slices.Contains(Placements(), a.Placement) {
		errs = append(errs, fmt.Sprintf("--duet-placement %q: use %s", a.Placement, strings.Join(Placements(), " or ")))
	} else if a.PlacementGiven && a.Design != Duet {
		errs = append(errs, "--duet-placement: only with --design duet; add --design duet or drop --duet-placement")
	}
	if a.LoadOnce && a.Design == Sequential {
		errs = append(errs, "--load-once: only with --design interleaved or duet (a sequential design runs each repeat whole); drop --load-once")
	}
	if !slices.Contains(Designs(), a.Design) {
		errs = append(errs, fmt.Sprintf("--design %q: use %s", a.Design, strings.Join(Designs(), ", ")))
	}
	if a.Slice != 0 && !(a.Slice >= MinSlice && a.Slice <= MaxSlice) { // NaN too
		errs = append(errs, fmt.Sprintf("--slice %g: give 0 (whole steps) or the seconds of a slice, from %g to %g", a.Slice, MinSlice, MaxSlice))
	}
	if a.ServerCPUs > 0 && a.Design == Duet {
		errs = append(errs, "--server-cpus: the duet design pins each point's server to CPUs of its own; drop --server-cpus, or use --design interleaved or sequential")
	}
	return errs
}

// instancesProblems are --instances' refusals.
func (a Asked) instancesProblems() []string {
	n := a.Instances
	switch {
	case n < 0:
		return []string{fmt.Sprintf("--instances %d: give 1 (one server per point for the whole sweep) or more", n)}
	case n <= 1:
		return nil
	case !a.LoadOnce:
		return []string{"--instances: only with --load-once (a renewed server starts from a copy of the data the first block loaded); add --load-once or drop --instances"}
	case a.Design == Sequential:
		return []string{"--instances: only with --design interleaved or duet; drop --instances"}
	case a.Cluster > 1:
		return []string{"--instances: a point's cluster has several servers; drop --instances or --cluster"}
	case a.Resume:
		return []string{"--instances: a resumed sweep starts its servers anew in the middle of an instance; run the sweep again whole (another --label), or drop --instances"}
	case a.Repeat > 0 && n > a.Repeat:
		return []string{fmt.Sprintf("--instances %d: more instances than the %d blocks (--repeat); give at most %d", n, a.Repeat, a.Repeat)}
	}
	return nil
}

// KindProblems are what a sweep of this kind of engine (named engineName) cannot do
// (Kind's comment).
func (a Asked) KindProblems(kind Kind, engineName string) []string {
	onlyDefault := len(a.Profiles) > 0
	for _, np := range a.Profiles {
		onlyDefault = onlyDefault && np.Name != "" && np.Profile == "default"
	}
	switch {
	case kind.KV && len(a.Versions) > 0:
		return []string{fmt.Sprintf("--versions: --engine %s is the library dbperf links (%s has one version); sweep it over --profiles", engineName, engineName)}
	case kind.KV && a.Design == Duet:
		return []string{fmt.Sprintf("--design duet: --engine %s compacts and flushes on threads of its own that dbperf cannot pin to a point's CPUs; use --design interleaved", engineName)}
	case kind.Embedded && (len(a.Versions) > 0 || !onlyDefault && !(len(a.Profiles) == 0 && (a.Clients > 1 || a.Vary > 0))):
		return []string{fmt.Sprintf("--engine %s is embedded: a sweep is over versions or profiles of a managed server (postgres, mariadb), over the profiles of a key-value engine (rocksdb, pebble), or over named points of one configuration (--profiles a=default,b=default)", engineName)}
	case a.Instances > 1 && !kind.Managed():
		return []string{fmt.Sprintf("--instances: engine %s has no server to renew; drop --instances", engineName)}
	case a.SameData && !kind.Managed():
		return []string{fmt.Sprintf("--same-data: engine %s has no server whose data dbperf can copy; drop --same-data", engineName)}
	case a.SameData && len(Dedupe(a.Versions)) > 1:
		return []string{fmt.Sprintf("--same-data: the points run versions %s, and a physical copy of one version's data starts only on that version; sweep one version's profiles, or drop --same-data", strings.Join(Dedupe(a.Versions), ", "))}
	case kind.Embedded && a.Design == Duet && a.Placement == PlacementRole:
		return []string{fmt.Sprintf("--duet-placement %s: engine %s runs inside dbperf's own process, with no server to place apart from its clients; use --duet-placement %s", PlacementRole, engineName, PlacementPoint)}
	}
	return nil
}

// ThinkProblems are the --think entries that name no point of named, one line each.
func ThinkProblems(think map[string]time.Duration, named []NamedProfile) []string {
	var errs []string
	for n := range think {
		if !slices.ContainsFunc(named, func(np NamedProfile) bool { return np.Name == n }) {
			errs = append(errs, fmt.Sprintf("--think %s=…: no point is named %s; name points in --profiles NAME=PROFILE", n, n))
		}
	}
	return errs
}

// ParseVary reads --vary FLAG=V1,V2,…: FLAG a flag of the workload's own (has says the
// command has it, own that it is the sweep's or the run's own, never an axis), at least
// one value; a value repeated is dropped.
func ParseVary(vs []string, has, own func(flag string) bool) ([]VaryAxis, error) {
	var out []VaryAxis
	var errs []error
	for _, v := range vs {
		name, list, ok := strings.Cut(v, "=")
		name = strings.TrimPrefix(strings.TrimSpace(name), "--")
		switch {
		case !ok || name == "" || strings.TrimSpace(list) == "":
			errs = append(errs, fmt.Errorf("--vary %q: give FLAG=V1,V2,… with a flag of the workload, e.g. --vary rows=100000,200000", v))
			continue
		case !has(name):
			errs = append(errs, fmt.Errorf("--vary %s: the workload has no flag --%s (see its --help)", name, name))
			continue
		case own(name):
			errs = append(errs, fmt.Errorf("--vary %s: --%s is the sweep's or the run's own; sweep versions, profiles and clients with --versions, --profiles and --clients", name, name))
			continue
		}
		ax := VaryAxis{Flag: name}
		for _, x := range strings.Split(list, ",") {
			x = strings.TrimSpace(x)
			if x == "" || slices.Contains(ax.Values, x) {
				continue
			}
			ax.Values = append(ax.Values, x)
		}
		for _, o := range out {
			if o.Flag == name {
				errs = append(errs, fmt.Errorf("--vary %s: given twice; list its values once", name))
			}
		}
		out = append(out, ax)
	}
	return out, errors.Join(errs...)
}

// Resolver is a sweep's resolve of a point's configuration: resolve's, with the point's
// node latency when the sweep has a distance axis, and the CPU profile's rate, call graph
// and perf's availability of the sweep's own configuration cfg, read once before the
// first point (session.PrepareCPUProfile), which a point resolved again takes.
func Resolver(cfg *config.Run, resolve func(Point) (*config.Run, error)) func(Point) (*config.Run, error) {
	return func(pt Point) (*config.Run, error) {
		pc, err := resolve(pt)
		if err != nil {
			return pc, err
		}
		if pt.ByLatency {
			pc.NodeLatency = pt.Latency
		}
		if pc.CPUProfileDir != "" {
			pc.CPUProfileDir, pc.CPUProfileHz, pc.CPUProfileOff = cfg.CPUProfileDir, cfg.CPUProfileHz, cfg.CPUProfileOff
			pc.CPUProfileCallGraph = cfg.CPUProfileCallGraph
		}
		return pc, nil
	}
}
