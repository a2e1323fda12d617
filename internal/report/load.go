package report

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/store"
)

// ErrNamedTwice is ResolveGroups' error for a run or label given twice: the request's
// fault (`dbperf serve` answers 400), not a run that is missing.
var ErrNamedTwice = errors.New("named twice")

// ResolveGroups turns references (`dbperf report RUN...`, the runs and labels ticked on
// `dbperf serve`'s page) into the compared configs: a run id is a config of one run
// ("run N"), a label all runs with it. Without references, the latest run. An error names
// the reference that is unknown or given twice.
func ResolveGroups(ctx context.Context, st *store.Store, refs []string) ([]Group, error) {
	if len(refs) == 0 {
		id, err := st.LatestRunID(ctx)
		if err != nil {
			return nil, err
		}
		return []Group{{Name: fmt.Sprintf("run %d", id), RunIDs: []int64{id}}}, nil
	}
	var groups []Group
	for _, ref := range refs {
		ids, err := st.ResolveRuns(ctx, []string{ref})
		if err != nil {
			return nil, err
		}
		name := strings.TrimSpace(ref)
		if id, err := strconv.ParseInt(name, 10, 64); err == nil && len(ids) == 1 && ids[0] == id {
			name = fmt.Sprintf("run %d", id)
		}
		for _, g := range groups {
			if g.Name == name {
				return nil, fmt.Errorf("%q is %w: name each run or label once", ref, ErrNamedTwice)
			}
		}
		groups = append(groups, Group{Name: name, RunIDs: ids})
	}
	return groups, nil
}

// BaseIndex finds the base among the compared configs, by the reference as given or the
// config's name; "" is the first.
func BaseIndex(groups []Group, refs []string, base string) (int, error) {
	base = strings.TrimSpace(base)
	if base == "" {
		return 0, nil
	}
	for i, g := range groups {
		if g.Name == base || i < len(refs) && strings.TrimSpace(refs[i]) == base {
			return i, nil
		}
	}
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = g.Name
	}
	return 0, fmt.Errorf("base %s is not among the reported runs (%s): name one of them, or add %s to the runs reported",
		base, strings.Join(names, ", "), base)
}

// Load reads the runs of the groups from the store (each run once, in one bulk read) and
// builds their report.
func Load(ctx context.Context, st *store.Store, groups []Group) (Report, error) {
	var ids []int64
	for _, g := range groups {
		for _, id := range g.RunIDs {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	runs, err := st.Results(ctx, ids)
	if err != nil {
		return Report{}, err
	}
	return Build(runs), nil
}
