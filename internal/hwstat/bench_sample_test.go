package hwstat

import (
	"os"
	"testing"
)

// BenchmarkSample is one runner tick's reading of /proc: the machine, dbperf itself, the
// process tree of init (standing in for a server) and every process's CPU.
func BenchmarkSample(b *testing.B) {
	s, err := New()
	if err != nil {
		b.Skip(err)
	}
	req := Request{PIDs: []int{os.Getpid()}, TreeOf: os.Getpid(), AllTasks: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Sample(req); err != nil {
			b.Fatal(err)
		}
	}
}
