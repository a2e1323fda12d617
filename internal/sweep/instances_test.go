package sweep

import (
	"slices"
	"testing"
)

// instanceOf splits the blocks into n runs of consecutive blocks, as equal as they can be;
// with --same-data block 1 alone is the first.
func TestInstanceOf(t *testing.T) {
	for _, tc := range []struct {
		last, n  int
		sameData bool
		want     []int // block 1..last
	}{
		{6, 1, false, []int{1, 1, 1, 1, 1, 1}},
		{6, 2, false, []int{1, 1, 1, 2, 2, 2}},
		{7, 3, false, []int{1, 1, 1, 2, 2, 3, 3}},
		{4, 4, false, []int{1, 2, 3, 4}},
		{6, 1, true, []int{1, 1, 1, 1, 1, 1}},
		{7, 3, true, []int{1, 2, 2, 2, 3, 3, 3}},
		{4, 4, true, []int{1, 2, 3, 4}},
		{40, 8, false, slices.Concat(rep(1, 5), rep(2, 5), rep(3, 5), rep(4, 5), rep(5, 5), rep(6, 5), rep(7, 5), rep(8, 5))},
	} {
		var got []int
		for b := 1; b <= tc.last; b++ {
			got = append(got, instanceOf(b, tc.last, tc.n, tc.sameData))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%d blocks, %d instances, same data %v: %v, want %v", tc.last, tc.n, tc.sameData, got, tc.want)
		}
	}
}

func rep(v, n int) []int { return slices.Repeat([]int{v}, n) }
