package workload

import (
	"hash/fnv"
	"math/rand/v2"
)

// Stream returns a deterministic random stream for one actor, independent of every other
// actor's: the PCG state is derived from the run's seed and the names identifying the actor
// (family, step, role, client), so two actors never share a stream (the reference's forked
// processes did, reference §5.6) and the same seed always gives the same data.
func Stream(seed int64, names ...string) *rand.Rand {
	h := fnv.New64a()
	for _, n := range names {
		_, _ = h.Write([]byte(n))
		_, _ = h.Write([]byte{0}) // separator: ("ab","c") ≠ ("a","bc")
	}
	key := h.Sum64()
	hi := splitmix64(uint64(seed) ^ splitmix64(key))
	lo := splitmix64(key ^ splitmix64(hi))
	return rand.New(rand.NewPCG(hi, lo))
}

// splitmix64 is the SplitMix64 finalizer: a bijective mix that spreads nearby inputs.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
