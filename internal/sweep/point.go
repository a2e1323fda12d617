package sweep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/fleet/sweepq"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/session"
	"github.com/dbperf/dbperf/internal/store"
)

// A Point is one version and profile of a sweep. A point named in --profiles
// (NAME=PROFILE) is called by its name: two points may then share a profile (an A/A
// comparison, or a known effect with --think).
type Point struct {
	// Version is the engine version ("": the default), Profile its config profile,
	// Label the label its runs are stored with.
	Version, Profile, Label string
	// Clients is the point's --clients; ByClients says the sweep has a concurrency axis,
	// so the count is part of the point's name ("/c4").
	Clients   int
	ByClients bool
	// Vary are the point's values of the --vary axes, in their order: FLAG, VALUE.
	Vary [][2]string
	// As is the point's own name (NAME=PROFILE), "" for a profile given by itself.
	As string
	// Think is the pause of its closed-loop workers after each operation (--think).
	Think time.Duration
	// Embedded: the engine runs inside dbperf (no version in the point's name).
	Embedded bool
	// Latency is the point's --node-latency, a sweep's distance axis (ByLatency: the
	// sweep has one, so the latency is part of the point's name, "/lat=5ms").
	Latency   time.Duration
	ByLatency bool
}

// Name is the point's name (VERSION/PROFILE…), its Label after the sweep's.
func (p Point) Name() string {
	prof := p.Profile
	if p.As != "" {
		prof = p.As
	}
	c := ""
	if p.ByClients {
		c = fmt.Sprintf("/c%d", p.Clients)
	}
	for _, v := range p.Vary {
		c += "/" + v[0] + "=" + v[1]
	}
	if p.ByLatency {
		c += "/lat=" + p.Latency.String()
	}
	if p.Embedded {
		return prof + c
	}
	v := p.Version
	if v == "" {
		v = "default"
	}
	return v + "/" + prof + c
}

// LatencyPoints is the cross product of a sweep's points and its node latencies (the
// innermost axis), each point named and labelled with its latency; points unchanged
// without a distance axis.
func LatencyPoints(points []Point, lats []time.Duration, prefix string) []Point {
	if len(lats) < 2 {
		return points
	}
	out := make([]Point, 0, len(points)*len(lats))
	for _, pt := range points {
		for _, d := range lats {
			p := pt
			p.Latency, p.ByLatency = d, true
			p.Label = prefix + "/" + p.Name()
			out = append(out, p)
		}
	}
	return out
}

// ConcurrencyPoints places each compared group on the sweep's concurrency axis: the
// point's name without its count, and its count.
func ConcurrencyPoints(points []Point, groups []report.Group) []report.ConcurrencyPoint {
	out := make([]report.ConcurrencyPoint, 0, len(groups))
	for _, g := range groups {
		for _, p := range points {
			if p.Name() == g.Name {
				q := p
				q.ByClients = false
				out = append(out, report.ConcurrencyPoint{Config: q.Name(), Clients: p.Clients})
				break
			}
		}
	}
	return out
}

// Compare is the relative comparison of a sweep's points, the first the base.
func Compare(ctx context.Context, st *store.Store, groups []report.Group) (report.Comparison, error) {
	var all []int64
	for _, g := range groups {
		all = append(all, g.RunIDs...)
	}
	runs, err := st.Results(context.WithoutCancel(ctx), all)
	if err != nil {
		return report.Comparison{}, err
	}
	return report.Compare(report.Build(runs), groups, 0), nil
}

// Report is the relative comparison of a sweep's points' groups (Compare); a sweep with
// a concurrency axis (its points ByClients) gets its concurrency tables first, the
// seeds' view of such a sweep.
func Report(ctx context.Context, st *store.Store, points []Point, groups []report.Group) (report.Comparison, error) {
	cmp, err := Compare(ctx, st, groups)
	if err != nil || len(points) == 0 || !points[0].ByClients {
		return cmp, err
	}
	cmp.Tables = append(cmp.ConcurrencyTables(ConcurrencyPoints(points, groups)), cmp.Tables...)
	return cmp, nil
}

// MeasuredGroups are the measured points of a waited queued sweep (out), a group each
// named by its point, for Compare.
func MeasuredGroups(out sweepq.Outcome) []report.Group {
	var groups []report.Group
	for _, m := range out.Points {
		if m.OK() {
			groups = append(groups, report.Group{Name: m.Job.Args.Point, RunIDs: m.RunIDs})
		}
	}
	return groups
}

// A NamedProfile is one --profiles entry: PROFILE or NAME=PROFILE.
type NamedProfile struct{ Name, Profile string }

// ParseProfiles splits --profiles into named profiles, dropping a value repeated as it is
// and refusing two points of one name (a=default,a=cached; cached,cached=default).
func ParseProfiles(vs []string) ([]NamedProfile, error) {
	var out []NamedProfile
	seen := map[string]bool{}
	for _, v := range Dedupe(vs) {
		np := NamedProfile{Profile: v}
		if n, p, ok := strings.Cut(v, "="); ok {
			n, p = strings.TrimSpace(n), strings.TrimSpace(p)
			if n == "" || p == "" || strings.ContainsAny(n, "/=") || strings.IndexFunc(n, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
				return nil, fmt.Errorf("--profiles %q: name a point NAME=PROFILE, NAME printable, without / or =, e.g. a=default,b=default", v)
			}
			np = NamedProfile{Name: n, Profile: p}
		}
		key := np.Name
		if key == "" {
			key = np.Profile
		}
		if seen[key] {
			return nil, fmt.Errorf("--profiles %q: a second point named %s; give each point its own name, e.g. a=default,b=cached", v, key)
		}
		seen[key] = true
		out = append(out, np)
	}
	return out, nil
}

// ParseThink reads --think NAME=DURATION values.
func ParseThink(vs []string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for _, v := range vs {
		n, d, ok := strings.Cut(v, "=")
		dur, err := time.ParseDuration(strings.TrimSpace(d))
		if !ok || strings.TrimSpace(n) == "" || err != nil || dur <= 0 {
			return nil, fmt.Errorf("--think %q: give NAME=DURATION with a point's name and a positive duration, e.g. --think b=200us", v)
		}
		if _, ok := out[strings.TrimSpace(n)]; ok {
			return nil, fmt.Errorf("--think %q: point %s has a --think already; give one per point", v, strings.TrimSpace(n))
		}
		out[strings.TrimSpace(n)] = dur
	}
	return out, nil
}

// Dedupe drops empty and repeated values, keeping the first of each.
func Dedupe(vs []string) []string {
	var out []string
	for _, v := range vs {
		v = strings.TrimSpace(v)
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// Axes are what a sweep varies. Its points are their cross product: versions outer, then
// profiles, counts of clients, the --vary axes, and node latencies innermost.
type Axes struct {
	// Versions are the engine versions ("": the default), at least one.
	Versions []string
	// Profiles are the named profiles, at least one; Think the pause of the points so
	// named (--think).
	Profiles []NamedProfile
	Think    map[string]time.Duration
	// Clients are the counts of clients, at least one (more: a concurrency axis).
	Clients []int
	Vary    []VaryAxis
	// Latencies are the node latencies (fewer than two: no distance axis).
	Latencies []time.Duration
	// Embedded: the engine runs inside dbperf (no version in the points' names).
	Embedded bool
}

// Defaults are the axes with the sweep's own configuration cfg where an axis was not
// given: the default version, cfg's profile, cfg's count of clients.
func (a Axes) Defaults(cfg *config.Run) Axes {
	if len(a.Versions) == 0 {
		a.Versions = []string{""}
	}
	if len(a.Profiles) == 0 {
		a.Profiles = []NamedProfile{{Profile: cfg.Profile}}
	}
	if len(a.Clients) == 0 {
		a.Clients = []int{cfg.Clients}
	}
	return a
}

// Label is the label of a sweep of cfg started at now: its --label, else
// sweep-WORKLOAD-ENGINE-TIME.
func Label(cfg *config.Run, now time.Time) string {
	if cfg.Label != "" {
		return cfg.Label
	}
	return "sweep-" + cfg.Workload + "-" + strings.ReplaceAll(session.EngineLabel(cfg), "/", "-") + "-" + now.Format("20060102-150405")
}

// Points are the axes' points, each labelled prefix/NAME. check is asked about each
// point before the distance axis is added; its errors, each named by its point, are
// joined in the error.
func Points(a Axes, prefix string, check func(Point) error) ([]Point, error) {
	var points []Point
	var errs []error
	for _, v := range a.Versions {
		for _, np := range a.Profiles {
			for _, n := range a.Clients {
				for _, vals := range CrossVary(a.Vary) {
					pt := Point{Version: v, Profile: np.Profile, As: np.Name, Think: a.Think[np.Name], Embedded: a.Embedded,
						Clients: n, ByClients: len(a.Clients) > 1, Vary: vals}
					if err := check(pt); err != nil {
						errs = append(errs, fmt.Errorf("%s: %w", pt.Name(), err))
					}
					pt.Label = prefix + "/" + pt.Name()
					points = append(points, pt)
				}
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return LatencyPoints(points, a.Latencies, prefix), nil
}

// OnePoint is the point of points named name (--point: an agent's job of a queued
// sweep), alone; an error naming the points when none is.
func OnePoint(points []Point, name string) ([]Point, error) {
	var names []string
	for _, pt := range points {
		if pt.Name() == name {
			return []Point{pt}, nil
		}
		names = append(names, pt.Name())
	}
	return nil, fmt.Errorf("--point %q: no point of this sweep is named so; its points: %s", name, strings.Join(names, ", "))
}
