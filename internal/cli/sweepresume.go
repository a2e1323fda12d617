package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/workload"
)

// resumeIgnored are stored parameters a --resume may change: what names a point (its
// label holds them), the sweep's bookkeeping and how its trials are laid out. Every other
// stored parameter, and the seed, changes what is measured: a resume that changes one
// would store runs of two settings under one label (which report then refuses).
var resumeIgnored = append([]string{
	"label", "repeat",
	"profile", "engine_version", "storage_engine", "managed", "steps", "tests", "report_interval_sec",
}, store.SweepParams()...)

// checkResume refuses a --resume that cannot complete the stored sweep prefix: no run is
// stored under it, or its runs were measured with other settings (a parameter or the
// seed) than this command line gives. It reads one stored run per point, the latest,
// before anything is installed or measured, and creates no store.
func checkResume(ctx context.Context, cmd *cobra.Command, cfg *config.Run, params workload.Params,
	points []sweepPoint, resolve func(sweepPoint) (*config.Run, error), prefix string) error {
	st, err := store.OpenExisting(ctx, cfg.ResultsPath)
	if err != nil {
		return badInput(fmt.Errorf("--resume: no stored sweep labelled %s: %w", prefix, err))
	}
	defer st.Close()
	labels, err := st.Distinct(ctx, "label")
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(labels, func(l string) bool { return strings.HasPrefix(l, prefix+"/") }) {
		return badInput(fmt.Errorf("--resume: no stored sweep labelled %s in %s; drop --resume to start one (dbperf runs lists the labels)", prefix, st.Path()))
	}
	var diffs []string
	seen := map[string]bool{}
	for _, pt := range points {
		sums, err := st.Runs(ctx, store.RunFilter{Label: pt.label})
		if err != nil {
			return err
		}
		if len(sums) == 0 {
			continue
		}
		runs, err := st.Results(ctx, []int64{sums[len(sums)-1].ID})
		if err != nil {
			return err
		}
		stored := runs[0]
		pc, err := resolve(pt)
		if err != nil {
			return err
		}
		pc.EngineVersion, pc.Label, pc.Think, pc.Clients = pt.version, pt.label, pt.think, pt.clients
		now, err := jsonValues(storedParams(pc, params.Stored(), nil))
		if err != nil {
			return err
		}
		was, err := jsonValues(stored.Params)
		if err != nil {
			return err
		}
		add := func(key, d string) {
			if !seen[key] {
				seen[key] = true
				diffs = append(diffs, d)
			}
		}
		if stored.Seed != cfg.Seed {
			add("seed", fmt.Sprintf("--seed %d (the stored sweep used %d)", cfg.Seed, stored.Seed))
		}
		keys := make([]string, 0, len(now)+len(was))
		for k := range now {
			keys = append(keys, k)
		}
		for k := range was {
			if _, ok := now[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			if slices.Contains(resumeIgnored, k) || reflect.DeepEqual(now[k], was[k]) {
				continue
			}
			add(k, fmt.Sprintf("%s %s (the stored sweep used %s)", paramFlag(cmd, k), paramText(now[k]), paramText(was[k])))
		}
	}
	if len(diffs) > 0 {
		return badInput(fmt.Errorf("--resume --label %s: %s; resume with the stored sweep's settings, or drop --resume and give another --label", prefix, strings.Join(diffs, ", ")))
	}
	return nil
}

// jsonValues is m as read back from JSON (numbers float64, lists []any), so the
// parameters given now compare equal to the same ones stored.
func jsonValues(m map[string]any) (map[string]any, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

// paramFlag names the flag a stored parameter comes from (--time for time_sec), or the
// parameter when no flag has its name.
func paramFlag(cmd *cobra.Command, key string) string {
	name := strings.ReplaceAll(key, "_", "-")
	for _, n := range []string{name, strings.TrimSuffix(name, "-sec"), strings.TrimSuffix(name, "-us")} {
		if cmd.Flags().Lookup(n) != nil {
			return "--" + n
		}
	}
	return key
}

// paramText is a stored parameter's value as a user would write it ("absent" when the
// stored runs have no such parameter).
func paramText(v any) string {
	switch x := v.(type) {
	case nil:
		return "absent"
	case string:
		return fmt.Sprintf("%q", x)
	case []any:
		s := make([]string, len(x))
		for i, e := range x {
			s[i] = fmt.Sprint(e)
		}
		return strings.Join(s, ",")
	}
	return fmt.Sprint(v)
}
