package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/dbperf/dbperf/internal/session"
	"github.com/dbperf/dbperf/internal/store"
)

// BlocksDone reads which blocks of an interleaved sweep are stored whole for every point
// (each of the point's runs of the block finished ok), and the highest block number
// stored, so --resume runs the missing blocks under new numbers (a partly stored block's
// trial keys are never reused: they would pair with the new ones).
func BlocksDone(ctx context.Context, st *store.Store, labels []string) (done, maxBlock int, err error) {
	okBlocks := make([]map[int]bool, len(labels))
	for li, label := range labels {
		sums, err := st.Runs(ctx, store.RunFilter{Label: label})
		if err != nil {
			return 0, 0, err
		}
		var ids []int64
		for _, s := range sums {
			ids = append(ids, s.ID)
		}
		okBlocks[li] = map[int]bool{}
		if len(ids) == 0 {
			continue
		}
		runs, err := st.Results(ctx, ids)
		if err != nil {
			return 0, 0, err
		}
		bad := map[int]bool{}
		for _, r := range runs {
			b, ok := store.IntParam(r.Params[store.ParamBlock])
			if !ok {
				continue
			}
			maxBlock = max(maxBlock, b)
			if r.Status == store.RunOK {
				okBlocks[li][b] = true
			} else {
				bad[b] = true
			}
		}
		for b := range bad {
			delete(okBlocks[li], b)
		}
	}
	for b := range okBlocks[0] {
		all := true
		for _, m := range okBlocks[1:] {
			all = all && m[b]
		}
		if all {
			done++
		}
	}
	return done, maxBlock, nil
}

// resumeIgnored are stored parameters a --resume may change: what names a point (its
// label holds them), the sweep's bookkeeping and how its trials are laid out. Every other
// stored parameter, and the seed, changes what is measured: a resume that changes one
// would store runs of two settings under one label (which report then refuses).
func resumeIgnored() []string {
	return append([]string{
		"label", "repeat",
		"profile", "engine_version", "storage_engine", "managed", "steps", "tests", "report_interval_sec",
	}, store.SweepParams()...)
}

// CheckResume refuses a --resume that cannot complete the stored sweep o.Prefix: no run
// is stored under it, or its runs were measured with other settings (a parameter or the
// seed) than o's. It reads one stored run per point, the latest, before anything is
// installed or measured, and creates no store (o.Session.Store is not used). flagOf
// names the flag a stored parameter comes from (--time for time_sec). Its refusals are
// *session.BadInputError.
func CheckResume(ctx context.Context, o Options, flagOf func(key string) string) error {
	cfg, params, prefix := o.Session.Config, o.Session.Params, o.Prefix
	st, err := store.OpenExisting(ctx, cfg.ResultsPath)
	if err != nil {
		return session.BadInput(fmt.Errorf("--resume: no stored sweep labelled %s: %w", prefix, err))
	}
	defer st.Close()
	labels, err := st.Distinct(ctx, "label")
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(labels, func(l string) bool { return strings.HasPrefix(l, prefix+"/") }) {
		return session.BadInput(fmt.Errorf("--resume: no stored sweep labelled %s in %s; drop --resume to start one (dbperf runs lists the labels)", prefix, st.Path()))
	}
	var diffs []string
	seen := map[string]bool{}
	ignored := resumeIgnored()
	for _, pt := range o.Points {
		sums, err := st.Runs(ctx, store.RunFilter{Label: pt.Label})
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
		pc, err := o.Resolve(pt)
		if err != nil {
			return err
		}
		pc.EngineVersion, pc.Label, pc.Think, pc.Clients = pt.Version, pt.Label, pt.Think, pt.Clients
		now, err := jsonValues(session.StoredParams(pc, params.Stored(), nil))
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
			if slices.Contains(ignored, k) || reflect.DeepEqual(now[k], was[k]) {
				continue
			}
			add(k, fmt.Sprintf("%s %s (the stored sweep used %s)", flagOf(k), paramText(now[k]), paramText(was[k])))
		}
	}
	if len(diffs) > 0 {
		return session.BadInput(fmt.Errorf("--resume --label %s: %s; resume with the stored sweep's settings, or drop --resume and give another --label", prefix, strings.Join(diffs, ", ")))
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
