package store

import (
	"context"
	"fmt"
	"path/filepath"
)

// CopyCounts are what CopyRuns did: the runs it copied, those the destination held
// already, and those still running, left out.
type CopyCounts struct{ Copied, Present, Running int }

// Select is the ids of the runs refs name (ResolveRuns), or of every run of the store
// when refs is empty.
func (s *Store) Select(ctx context.Context, refs []string) ([]int64, error) {
	if len(refs) > 0 {
		return s.ResolveRuns(ctx, refs)
	}
	sums, err := s.Runs(ctx, RunFilter{})
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, r := range sums {
		ids = append(ids, r.ID)
	}
	return ids, nil
}

// CopyRuns copies the runs ids of src into dst (Import), one at a time (a store of
// thousands never sits in memory), each whole or not at all; runs still running are left
// out and counted. Its counts are those of the runs before an error.
func CopyRuns(ctx context.Context, src, dst *Store, ids []int64) (CopyCounts, error) {
	var n CopyCounts
	for _, id := range ids {
		runs, err := src.Results(ctx, []int64{id})
		if err != nil {
			return n, err
		}
		r := runs[0]
		if r.Status == RunRunning {
			n.Running++
			continue
		}
		_, added, err := dst.Import(ctx, r)
		if err != nil {
			return n, fmt.Errorf("copy run %d: %w (nothing of it was written, the runs before it are in %s: copy again to finish)", r.ID, err, dst.Path())
		}
		if added {
			n.Copied++
		} else {
			n.Present++
		}
	}
	return n, nil
}

// Same reports whether two store paths name the same store: the same file (through
// symbolic links too), or the same DSN.
func Same(a, b string) bool {
	if IsPostgres(a) || IsPostgres(b) {
		return a == b
	}
	aa, errA := filepath.Abs(a)
	bb, errB := filepath.Abs(b)
	if errA != nil || errB != nil {
		return a == b
	}
	if aa == bb {
		return true
	}
	ea, errA := filepath.EvalSymlinks(aa)
	eb, errB := filepath.EvalSymlinks(bb)
	return errA == nil && errB == nil && ea == eb
}
