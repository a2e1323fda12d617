package sweep

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The schedule of one block: steps in plan order, steady steps cut into slices of about
// --slice, every slice on every point exactly once (in a random order), or on all points
// at once in a duet.
func TestSchedule(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name   string
		steady []time.Duration
		points int
		slice  time.Duration
		duet   bool
		slices []int // per step
	}{
		{"loads only", []time.Duration{0, 0}, 2, 5 * s, false, []int{1, 1}},
		{"tiny insertbench", []time.Duration{0, 0, 5 * s, 5 * s}, 2, 5 * s, false, []int{1, 1, 1, 1}},
		{"small, 5 s slices", []time.Duration{0, 30 * s, 30 * s}, 3, 5 * s, false, []int{1, 6, 6}},
		{"rounded", []time.Duration{7 * s, 8 * s, 2 * s}, 2, 5 * s, false, []int{1, 2, 1}},
		{"whole steps", []time.Duration{0, 30 * s}, 2, 0, false, []int{1, 1}},
		{"duet", []time.Duration{0, 10 * s}, 2, 5 * s, true, []int{1, 2}},
		{"one point", []time.Duration{0, 10 * s}, 1, 5 * s, false, []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Schedule(tc.steady, tc.points, tc.slice, tc.duet, rand.New(rand.NewPCG(1, 2)))
			seen := map[[3]int]bool{} // step, slice, point
			last := [2]int{-1, 0}
			for _, tr := range got {
				if at := [2]int{tr.Step, tr.Slice}; at[0] < last[0] || at[0] == last[0] && at[1] < last[1] {
					t.Errorf("trial %+v after step %d slice %d: out of order", tr, last[0], last[1])
				} else {
					last = at
				}
				if tr.Slices != tc.slices[tr.Step] {
					t.Errorf("step %d: %d slices, want %d", tr.Step, tr.Slices, tc.slices[tr.Step])
				}
				if tc.duet != (len(tr.Points) > 1) && tc.points > 1 || !tc.duet && len(tr.Points) != 1 {
					t.Errorf("trial %+v: points %v (duet %v)", tr, tr.Points, tc.duet)
				}
				for _, p := range tr.Points {
					k := [3]int{tr.Step, tr.Slice, p}
					if seen[k] {
						t.Errorf("step %d slice %d ran twice on point %d", tr.Step, tr.Slice, p)
					}
					seen[k] = true
				}
			}
			want := 0
			for _, n := range tc.slices {
				want += n * tc.points
			}
			if len(seen) != want {
				t.Errorf("%d (step, slice, point) trials, want %d", len(seen), want)
			}
		})
	}
}

// The points' order differs between slices and blocks (randomized blocks), follows from
// the seed, and puts each point first about equally often.
func TestScheduleOrderIsRandomized(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 0x5eed))
	first := map[int]int{}
	var orders [][]int
	for range 200 {
		tr := Schedule([]time.Duration{time.Second}, 3, time.Second, false, rng)
		order := []int{tr[0].Points[0], tr[1].Points[0], tr[2].Points[0]}
		first[order[0]]++
		orders = append(orders, order)
	}
	for p := range 3 {
		if n := first[p]; n < 40 || n > 95 {
			t.Errorf("point %d first in %d of 200 blocks, want about 67", p, n)
		}
	}
	same := 0
	for i := 1; i < len(orders); i++ {
		if slices.Equal(orders[i], orders[i-1]) {
			same++
		}
	}
	if same > 70 {
		t.Errorf("the order repeated in %d of 199 consecutive blocks", same)
	}
	again := Schedule([]time.Duration{time.Second}, 3, time.Second, false, rand.New(rand.NewPCG(7, 0x5eed)))
	if again[0].Points[0] != orders[0][0] || again[1].Points[0] != orders[0][1] {
		t.Errorf("the same seed gave another order")
	}
}

// TestCPUAssignmentCounterbalanced: every cycle of n blocks runs each point on each CPU
// set exactly once, each block's sets are a permutation, and the same seed draws the same.
func TestCPUAssignmentCounterbalanced(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4} {
		for _, seed := range []int64{1, 20220} {
			var orders [][]int
			for cycle := range 4 {
				count := make([][]int, n) // count[p][cpu]
				for p := range count {
					count[p] = make([]int, n)
				}
				for pos := range n {
					b := cycle*n + pos + 1
					a := CPUAssignment(seed, n, b)
					if len(a) != n {
						t.Fatalf("n %d block %d: %v", n, b, a)
					}
					seen := make([]bool, n)
					for p, c := range a {
						if c < 0 || c >= n || seen[c] {
							t.Fatalf("n %d block %d: %v is not a permutation", n, b, a)
						}
						seen[c] = true
						count[p][c]++
					}
					if !slices.Equal(a, CPUAssignment(seed, n, b)) {
						t.Fatalf("n %d block %d: another draw for the same seed", n, b)
					}
					orders = append(orders, a)
				}
				for p := range count {
					for c, k := range count[p] {
						if k != 1 {
							t.Errorf("n %d seed %d cycle %d: point %d on CPU set %d %d times, want once", n, seed, cycle, p, c, k)
						}
					}
				}
			}
			// The order within cycles is drawn, not fixed: over 4 cycles of 2+ points some
			// cycle starts otherwise than the first (a fixed rotation would always start alike).
			if n >= 2 {
				differs := false
				for cycle := 1; cycle < 4; cycle++ {
					differs = differs || !slices.Equal(orders[cycle*n], orders[0])
				}
				if !differs && seed == 20220 {
					t.Errorf("n %d: every cycle starts with %v", n, orders[0])
				}
			}
		}
	}
	if a := CPUAssignment(1, 2, 0); a != nil {
		t.Errorf("block 0: %v", a)
	}
}

// A slice shorter than two of the intervals asked for is cut into five; whole steps and
// slices of two intervals or more keep the interval asked for.
func TestSliceInterval(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		slice, asked, want time.Duration
	}{
		{0, time.Second, time.Second},               // whole steps
		{5 * time.Second, time.Second, time.Second}, // the default slice
		{2 * time.Second, time.Second, time.Second}, // two intervals fit
		{1999 * ms, time.Second, 1999 * ms / 5},     // just under two
		{time.Second, time.Second, 200 * ms},
		{500 * ms, time.Second, 100 * ms}, // --slice 0.5, the shortest
		{500 * ms, 100 * ms, 100 * ms},    // asked for short intervals already
		{500 * ms, 5 * time.Second, 100 * ms},
	} {
		if got := SliceInterval(c.slice, c.asked); got != c.want {
			t.Errorf("SliceInterval(%s, %s) = %s, want %s", c.slice, c.asked, got, c.want)
		}
	}
}
