package script

import (
	"math"
	"math/bits"
)

// prng is PostgreSQL's pg_prng (src/common/pg_prng.c): xoroshiro128** seeded through
// splitmix64. pgbench draws every random value from it, so with the same seed a script
// gets the values pgbench gets with --random-seed (see seeds).
type prng struct{ s0, s1 uint64 }

func splitmix64(x *uint64) uint64 {
	*x += 0x9E3779B97f4A7C15
	v := *x
	v = (v ^ v>>30) * 0xBF58476D1CE4E5B9
	v = (v ^ v>>27) * 0x94D049BB133111EB
	return v ^ v>>31
}

func newPRNG(seed uint64) prng {
	var r prng
	r.s0 = splitmix64(&seed)
	r.s1 = splitmix64(&seed)
	if r.s0 == 0 && r.s1 == 0 {
		r.s0, r.s1 = 0x5851F42D4C957F2D, 0x14057B7EF767814F
	}
	return r
}

func (r *prng) uint64() uint64 {
	s0 := r.s0
	sx := r.s1 ^ s0
	v := bits.RotateLeft64(s0*5, 7) * 9
	r.s0 = bits.RotateLeft64(s0, 24) ^ sx ^ sx<<16
	r.s1 = bits.RotateLeft64(sx, 37)
	return v
}

// uint64Range is uniform in [lo, hi] by bitmask rejection (pg_prng_uint64_range).
func (r *prng) uint64Range(lo, hi uint64) uint64 {
	if hi <= lo {
		return lo
	}
	rng := hi - lo
	shift := uint(bits.LeadingZeros64(rng))
	for {
		if v := r.uint64() >> shift; v <= rng {
			return lo + v
		}
	}
}

// double is uniform in [0, 1) (pg_prng_double).
func (r *prng) double() float64 {
	return math.Ldexp(float64(r.uint64()>>(64-52)), -52)
}

// normal is a standard normal value by Box-Muller (pg_prng_double_normal).
func (r *prng) normal() float64 {
	u1 := 1.0 - r.double()
	u2 := 1.0 - r.double()
	return math.Sqrt(-2.0*math.Log(u1)) * math.Sin(2.0*math.Pi*u2)
}

// seeds are the random streams of a run as pgbench derives them from --random-seed
// (main, pgbench.c): one stream per client for the script functions, then the
// :default_seed of hash and permute, then per thread the stream choosing the script
// (pgbench -j 1: one thread) and the one of the --rate schedule.
type seeds struct {
	clients     []uint64
	defaultSeed int64
	choose      uint64
	throttle    uint64
}

func deriveSeeds(seed int64, clients int) seeds {
	base := newPRNG(uint64(seed))
	var s seeds
	for range clients {
		s.clients = append(s.clients, base.uint64())
	}
	s.defaultSeed = int64(base.uint64())
	s.choose = base.uint64()
	s.throttle = base.uint64()
	return s
}

// randInt is pgbench's getrand: uniform in [lo, hi].
func randInt(r *prng, lo, hi int64) int64 {
	return lo + int64(r.uint64Range(0, uint64(hi-lo)))
}

func randExponential(r *prng, lo, hi int64, param float64) int64 {
	cut := math.Exp(-param)
	uniform := 1.0 - r.double()
	rand := -math.Log(cut+(1.0-cut)*uniform) / param
	return lo + int64(float64(hi-lo+1)*rand)
}

func randGaussian(r *prng, lo, hi int64, param float64) int64 {
	var stdev float64
	for {
		stdev = r.normal()
		if stdev >= -param && stdev < param {
			break
		}
	}
	rand := (stdev + param) / (param * 2.0)
	return lo + int64(float64(hi-lo+1)*rand)
}

func randZipfian(r *prng, lo, hi int64, s float64) int64 {
	n := hi - lo + 1
	return lo - 1 + iterativeZipfian(r, n, s)
}

// iterativeZipfian is Devroye's rejection method, as pgbench computes it.
func iterativeZipfian(r *prng, n int64, s float64) int64 {
	if n <= 1 {
		return 1
	}
	b := math.Pow(2.0, s-1.0)
	for {
		u := r.double()
		v := r.double()
		x := math.Floor(math.Pow(u, -1.0/(s-1.0)))
		t := math.Pow(1.0+1.0/x, s-1.0)
		if v*x*(t-1.0)/(b-1.0) <= t/b && x <= float64(n) {
			return int64(x)
		}
	}
}

// poisson is pgbench's getPoissonRand: a delay with mean center, rounded.
func poisson(r *prng, center float64) int64 {
	uniform := 1.0 - r.double()
	return int64(-math.Log(uniform)*center + 0.5)
}

const (
	fnvPrime      = 0x100000001b3
	fnvOffset     = 0xcbf29ce484222325
	mm2Mul        = 0xc6a4a7935bd1e995
	mm2MulTimes8  = 0x35253c9ade8f4ca8
	mm2Rot        = 47
	minGaussParam = 2.0
	minZipfParam  = 1.001
	maxZipfParam  = 1000.0
)

func hashFNV1a(val int64, seed uint64) int64 {
	result := uint64(fnvOffset) ^ seed
	for range 8 {
		octet := uint64(val & 0xff)
		val >>= 8
		result ^= octet
		result *= fnvPrime
	}
	return int64(result)
}

func hashMurmur2(val int64, seed uint64) int64 {
	result := seed ^ mm2MulTimes8
	k := uint64(val)
	k *= mm2Mul
	k ^= k >> mm2Rot
	k *= mm2Mul
	result ^= k
	result *= mm2Mul
	result ^= result >> mm2Rot
	result *= mm2Mul
	result ^= result >> mm2Rot
	return int64(result)
}

// permute is pgbench's pseudorandom permutation of [0, size).
func permute(val, isize, seed int64) int64 {
	if isize < 2 {
		return 0
	}
	st := newPRNG(uint64(seed))
	size := uint64(isize)
	v := uint64(val) % size
	masklen := uint(63 - bits.LeadingZeros64(size))
	mask := uint64(1)<<masklen - 1
	for range 6 {
		m := st.uint64()&mask | 1
		r := st.uint64() & mask
		if v <= mask {
			v = (v*m ^ r) & mask
			v = (v<<1)&mask | v>>(masklen-1)
		}
		m = st.uint64()&mask | 1
		r = st.uint64() & mask
		t := size - 1 - v
		if t <= mask {
			t = (t*m ^ r) & mask
			t = (t<<1)&mask | t>>(masklen-1)
			v = size - 1 - t
		}
		r = st.uint64Range(0, size-1)
		v = (v + r) % size
	}
	return int64(v)
}
