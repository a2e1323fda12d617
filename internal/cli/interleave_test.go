package cli

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
			got := schedule(tc.steady, tc.points, tc.slice, tc.duet, rand.New(rand.NewPCG(1, 2)))
			seen := map[[3]int]bool{} // step, slice, point
			last := [2]int{-1, 0}
			for _, tr := range got {
				if at := [2]int{tr.step, tr.slice}; at[0] < last[0] || at[0] == last[0] && at[1] < last[1] {
					t.Errorf("trial %+v after step %d slice %d: out of order", tr, last[0], last[1])
				} else {
					last = at
				}
				if tr.slices != tc.slices[tr.step] {
					t.Errorf("step %d: %d slices, want %d", tr.step, tr.slices, tc.slices[tr.step])
				}
				if tc.duet != (len(tr.points) > 1) && tc.points > 1 || !tc.duet && len(tr.points) != 1 {
					t.Errorf("trial %+v: points %v (duet %v)", tr, tr.points, tc.duet)
				}
				for _, p := range tr.points {
					k := [3]int{tr.step, tr.slice, p}
					if seen[k] {
						t.Errorf("step %d slice %d ran twice on point %d", tr.step, tr.slice, p)
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
		tr := schedule([]time.Duration{time.Second}, 3, time.Second, false, rng)
		order := []int{tr[0].points[0], tr[1].points[0], tr[2].points[0]}
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
	again := schedule([]time.Duration{time.Second}, 3, time.Second, false, rand.New(rand.NewPCG(7, 0x5eed)))
	if again[0].points[0] != orders[0][0] || again[1].points[0] != orders[0][1] {
		t.Errorf("the same seed gave another order")
	}
}
