package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/store"
)

// mismatchIgnored are stored parameters whose differences do not make configs
// incomparable, so Mismatches never reports them:
//   - what a comparison legitimately varies: profile (a managed server's or a key-value
//     engine's config profile), engine_version, storage_engine (MariaDB's InnoDB or
//     MyRocks), managed (a throwaway server or --dsn), and the two knobs the README's
//     worked examples compare: rows_per_commit (insertbench --rows-per-commit) and
//     prepared (sysbench --prepared);
//   - bookkeeping: label, repeat, the interleaved design of a sweep (sweep, trial, design,
//     block, slice, and a duet's cpus), steps and sysbench's tests (each step is compared on its own; a step
//     one config did not run is blank), report_interval_sec and think_us.
//
// The key-value engines' LSM options (lsmParams) are ignored too when they come from a
// profile (see profileSets).
var mismatchIgnored = append([]string{
	"label", "repeat",
	"profile", "engine_version", "storage_engine", "managed",
	"steps", "tests", "report_interval_sec", "think_us",
	"rows_per_commit", "prepared",
}, store.SweepParams()...)

// lsmParams are the stored parameters of dbbench (internal/workload/dbbench Params.Stored)
// that a key-value engine's profile may set: its LSM flags (lsmFlags there) with
// underscores. A difference in one of them is ignored when a compared run's profile sets
// it (the runs' engine settings keep the profile's text), or when the runs' profiles
// differ and none kept its text: comparing profiles is comparing those options.
var lsmParams = []string{
	"compression", "bottommost_compression", "min_level_to_compress", "write_buffer_size",
	"max_write_buffer_number", "target_file_size_base", "max_bytes_for_level_base",
	"level_multiplier", "num_levels", "l0_compaction_trigger", "l0_slowdown_trigger",
	"l0_stop_trigger", "max_background_jobs", "cache_size", "block_size", "bloom_bits",
}

// MismatchIgnoredDoc says which stored parameters may differ between compared configs
// (README, --help).
const MismatchIgnoredDoc = "label, repeat, sweep, trial, design, block, slice, cpus, profile, engine_version, " +
	"storage_engine, managed, steps, tests, report_interval_sec, think_us, rows_per_commit, prepared, and a " +
	"key-value engine's LSM options where its profile sets them"

// settingProfileText is the engine setting holding a key-value engine's profile text.
const settingProfileText = "dbperf.profile_text"

// Mismatches says how the compared configs' runs differ in what makes figures
// incomparable: workload, workload version, scale and the stored parameters (except
// mismatchIgnored, and LSM options that come from a profile). One line per difference,
// e.g. "scale: small (rpc100) vs tiny (run 1)"; runs of one config that differ among
// themselves are a line each too ("scale differs within a: tiny (runs 3, 4) vs small
// (run 5)"). When the workloads differ nothing else is compared: their parameters are
// different things. Runs of groups missing from rep are skipped. Nil when the configs are
// comparable.
func Mismatches(rep Report, groups []Group) []string {
	byID := make(map[int64]RunReport, len(rep.Runs))
	for _, r := range rep.Runs {
		byID[r.ID] = r
	}
	runs := make([][]RunReport, len(groups))
	var all []RunReport
	for gi, g := range groups {
		for _, id := range g.RunIDs {
			if r, ok := byID[id]; ok {
				runs[gi] = append(runs[gi], r)
				all = append(all, r)
			}
		}
	}
	var out []string
	facet := func(name string, get func(RunReport) (key, text string)) {
		out = append(out, facetMismatches(name, groups, runs, get)...)
	}
	facet("workload", func(r RunReport) (string, string) { return r.Workload, r.Workload })
	if len(out) > 0 {
		return out
	}
	facet("workload version", func(r RunReport) (string, string) {
		v := strconv.Itoa(r.WorkloadVersion)
		return v, v
	})
	keys := paramKeys(all)
	set := profileSets(all)
	for _, k := range keys {
		if slices.Contains(mismatchIgnored, k) || slices.Contains(lsmParams, k) && set(k) {
			continue
		}
		facet(k, func(r RunReport) (string, string) { return paramKey(r.Params, k) })
	}
	return out
}

// paramKeys are the stored parameters' names over runs: scale first, then the others in
// order.
func paramKeys(runs []RunReport) []string {
	var keys []string
	for _, r := range runs {
		for k := range r.Params {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "scale":
			return -1
		case b == "scale":
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys
}

// profileSets says whether an LSM option comes from a profile: one of the runs' profile
// texts sets it, or their profiles differ and none of them kept its text.
func profileSets(runs []RunReport) func(string) bool {
	set := map[string]bool{}
	texts := false
	profiles := map[string]bool{}
	for _, r := range runs {
		profiles[paramText(r.Params["profile"])] = true
		text, ok := r.EngineSettings[settingProfileText]
		if !ok {
			continue
		}
		texts = true
		for _, line := range strings.Split(text, "\n") {
			line, _, _ = strings.Cut(line, "#")
			if k, _, ok := strings.Cut(line, "="); ok {
				set[strings.ReplaceAll(strings.TrimSpace(k), "-", "_")] = true
			}
		}
	}
	anyDiffer := !texts && len(profiles) > 1
	return func(k string) bool { return set[k] || anyDiffer }
}

// paramKey is a stored parameter canonically (JSON, so 60, 60.0 and json.Number("60")
// are one value; "\x00" when the run has none) and as shown.
func paramKey(p map[string]any, k string) (key, text string) {
	v, ok := p[k]
	if !ok {
		return "\x00", "unset"
	}
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(fmt.Sprint(v))
	}
	return string(b), paramText(v)
}

// paramText shows a stored parameter: strings and numbers as they are, lists and maps as
// JSON.
func paramText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if x == "" {
			return `""`
		}
		return x
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool, int, int64, int32, float32:
		return fmt.Sprint(x)
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprint(v)
}

// facetMismatches compares one facet of the runs: a line per group whose runs differ
// among themselves, and a line when the groups whose runs agree differ from each other.
func facetMismatches(name string, groups []Group, runs [][]RunReport, get func(RunReport) (key, text string)) []string {
	type value struct {
		key, text string
		who       []string // groups (across) or run ids (within)
	}
	add := func(vs []value, key, text, who string) []value {
		for i := range vs {
			if vs[i].key == key {
				vs[i].who = append(vs[i].who, who)
				return vs
			}
		}
		return append(vs, value{key: key, text: text, who: []string{who}})
	}
	join := func(vs []value, who func([]string) string) string {
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = fmt.Sprintf("%s (%s)", v.text, who(v.who))
		}
		return strings.Join(parts, " vs ")
	}
	var out []string
	var across []value
	for gi, g := range groups {
		var within []value
		for _, r := range runs[gi] {
			k, t := get(r)
			within = add(within, k, t, strconv.FormatInt(r.ID, 10))
		}
		switch len(within) {
		case 0:
		case 1:
			across = add(across, within[0].key, within[0].text, g.Name)
		default:
			out = append(out, fmt.Sprintf("%s differs within %s: %s", name, g.Name, join(within, func(ids []string) string {
				if len(ids) == 1 {
					return "run " + ids[0]
				}
				return "runs " + strings.Join(ids, ", ")
			})))
		}
	}
	if len(across) > 1 {
		out = append([]string{fmt.Sprintf("%s: %s", name, join(across, func(gs []string) string { return strings.Join(gs, ", ") }))}, out...)
	}
	return out
}
