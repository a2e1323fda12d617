package changepoint

import "testing"

// BenchmarkDetect is the speed target: change-point detection over 10 series of
// 1,000 points each in under 1 s per iteration (ns/op). The series are 2%-noise levels of
// 1,000 with 0 to 3 drops of 20% (13 change points in all), like a metric of nightly runs.
func BenchmarkDetect(b *testing.B) {
	var all [][]float64
	for s := range 10 {
		changes := s % 4
		var levels []level
		mu := 1000.0
		for i := range changes + 1 {
			n := 1000 / (changes + 1)
			if i == changes {
				n = 1000 - changes*n
			}
			levels = append(levels, level{n, mu, mu * 0.02})
			mu *= 0.8
		}
		all = append(all, series(uint64(500+s), levels...))
	}
	o := DefaultOptions()
	points := 0
	b.ReportAllocs()
	for b.Loop() {
		points = 0
		for _, x := range all {
			pts, err := Detect(x, o)
			if err != nil {
				b.Fatal(err)
			}
			points += len(pts)
		}
	}
	b.ReportMetric(float64(points), "points/op")
}
