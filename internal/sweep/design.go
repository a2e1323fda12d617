// Package sweep runs the comparisons dbperf runs itself (dbperf sweep): its points, and
// the designs that order their trials. The sequential design runs each point's repeats in
// turn (session.Repeat); the interleaved design runs randomized blocks, per step every
// point once in a random order drawn from the seed, a workload.Steady step cut into
// slices that alternate between the points (Schedule); the duet runs every trial on all
// points at once, each point on CPUs of its own (DuetCPUs, CPUAssignment, PinTree).
//
// The interleaved and duet designs keep every point's target open (session.Target: a
// managed server stays up for the whole sweep, an embedded engine gets a fresh directory
// per block). A slice is the same planned step object with its Load's duration divided
// and its audit after the last slice only: steps share state through their plan (the
// inserters' next keys, the audit's expectations), which a second plan on the same
// tables would break. Slice k of a block is a run of its own, its params carrying the
// design, sweep, trial, block and slice (store/params.go), so reports pair the points'
// runs by trial (report/pairs.go). A trial is runner.Sequence.Step on the point's record;
// Sequence.Stop passes a point's failure to its other runs of the block, and Ctrl-C
// stops every run.
//
// What a sweep refuses before its points are expanded (Asked, by the engine's Kind), the
// --vary axes (ParseVary) and a point's configuration (Resolver) are check.go's.
package sweep

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/store"
)

// Designs of a comparison dbperf runs itself (dbperf sweep --design), stored as the
// runs' store.ParamDesign.
const (
	// Interleaved measures every step on every point close together in time, in
	// randomized blocks: the default.
	Interleaved = store.DesignInterleaved
	// Sequential runs each point's repeats one after another, points in order.
	Sequential = store.DesignSequential
	// Duet runs the points' trials at the same time, each point on CPUs of its own
	// (Bulej et al., "Duet Benchmarking: Improving Measurement Accuracy in the Cloud",
	// ICPE 2020).
	Duet = store.DesignDuet
)

// Designs are the values of --design.
func Designs() []string { return []string{Interleaved, Sequential, Duet} }

// DuetCPUs splits the CPUs dbperf may run on into n equal sets, one per point of a duet;
// an error when there are fewer CPUs than points.
func DuetCPUs(n int) ([]unix.CPUSet, error) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		return nil, fmt.Errorf("read the CPUs dbperf may use: %w", err)
	}
	var cpus []int
	for c := 0; c < len(all)*64 && len(cpus) < all.Count(); c++ {
		if all.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) < n {
		return nil, fmt.Errorf("--design duet runs every point on CPUs of its own: %d points need %d CPUs, dbperf may use %d; sweep fewer points or use --design interleaved", n, n, len(cpus))
	}
	per := len(cpus) / n
	sets := make([]unix.CPUSet, n)
	for i := range sets {
		for _, c := range cpus[i*per : (i+1)*per] {
			sets[i].Set(c)
		}
	}
	return sets, nil
}

// CPUAssignment is which CPU set (an index into DuetCPUs' sets) each of n points of a
// duet runs on in block b (from 1): counterbalanced, so that every n consecutive blocks
// (a cycle: 1..n, n+1..2n, …) give each point each CPU set once — the rows of a cyclic
// Latin square, point p on set (p + shift) mod n — in an order of the shifts drawn per
// cycle from the sweep's seed (so a repeated sweep draws the same). A random assignment
// per block, as before, balanced the CPUs only by chance (a binomial count), and left
// whatever imbalance it drew in the ratio.
func CPUAssignment(seed int64, n, b int) []int {
	if n < 1 || b < 1 {
		return nil
	}
	cycle, pos := (b-1)/n, (b-1)%n
	rng := rand.New(rand.NewPCG(uint64(seed), 0xc0ffee+uint64(cycle)))
	shift := rng.Perm(n)[pos]
	out := make([]int, n)
	for p := range out {
		out[p] = (p + shift) % n
	}
	return out
}

// PinTree sets the affinity of every thread of root's process tree (a managed server and
// its backends) to cpus. Threads that exit meanwhile are skipped.
func PinTree(s *hwstat.Sampler, root int, cpus *unix.CPUSet) error {
	pids, err := s.ProcessTree(root)
	if err != nil {
		return err
	}
	for _, pid := range pids {
		tids, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			continue // exited
		}
		for _, t := range tids {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, cpus); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("thread %d of process %d: %w", tid, pid, err)
			}
		}
	}
	return nil
}

// CPUList names a CPU set's CPUs, e.g. "0" or "2,3".
func CPUList(set *unix.CPUSet) string {
	var out []string
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			out = append(out, strconv.Itoa(c))
		}
	}
	return strings.Join(out, ",")
}

// A Trial is one entry of a block's schedule: Slice (from 1, of Slices) of Step (its
// index in the plan) on Points (one point; every point at once in a duet).
type Trial struct {
	Step, Slice, Slices int
	Points              []int
}

// Schedule is the order of one block's trials: the steps in plan order; a steady step
// (steady[i] > 0, its time) cut into slices of about slice (at least one; slice 0:
// whole); each slice on every point, in an order drawn from rng for each slice — or, in
// a duet, on all points at once.
func Schedule(steady []time.Duration, points int, slice time.Duration, duet bool, rng *rand.Rand) []Trial {
	var out []Trial
	for si, d := range steady {
		n := 1
		if d > 0 && slice > 0 {
			n = max(1, int((d+slice/2)/slice))
		}
		for k := 1; k <= n; k++ {
			if duet {
				all := make([]int, points)
				for p := range all {
					all[p] = p
				}
				out = append(out, Trial{Step: si, Slice: k, Slices: n, Points: all})
				continue
			}
			for _, p := range rng.Perm(points) {
				out = append(out, Trial{Step: si, Slice: k, Slices: n, Points: []int{p}})
			}
		}
	}
	return out
}

// A VaryAxis is one --vary axis: a workload flag and its values.
type VaryAxis struct {
	Flag   string
	Values []string
}

// CrossVary is every combination of the axes' values, the last axis innermost; one empty
// combination without axes.
func CrossVary(axes []VaryAxis) [][][2]string {
	out := [][][2]string{nil}
	for _, ax := range axes {
		var next [][][2]string
		for _, c := range out {
			for _, v := range ax.Values {
				next = append(next, append(slices.Clone(c), [2]string{ax.Flag, v}))
			}
		}
		out = next
	}
	return out
}

// SliceInterval is the measurement interval a sweep with slices of slice uses when the
// one asked for (--report-interval, or the scale's) is interval: a slice shorter than two
// intervals would hold one partial interval, and a comparison's white-noise limit, taken
// from the spread between the intervals within each slice, could not be measured at all.
// Such a slice is cut into five intervals instead (0.1 s for --slice 0.5, the shortest);
// a slice of two intervals or more, or whole steps (slice 0), keeps interval. Measured on
// the project's 2-core VM (docs/measurements/2026-11-29-short-blocks.md): with 1-s steps
// in 0.5-s slices and 0.1-s intervals the seconds' share of an A/A's variance was larger
// than the blocks' (each on its own servers) in 38 of 40 cells; the intervals cost the
// client about 1 µs of CPU per query.
func SliceInterval(slice, interval time.Duration) time.Duration {
	if slice <= 0 || slice >= 2*interval {
		return interval
	}
	return slice / 5
}
