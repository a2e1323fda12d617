package dbbench

import (
	"math/bits"
	"math/rand/v2"
)

// compressionRatio is db_bench's --compression_ratio of every run (§4.1 "Common db_bench
// flags"): a value compresses to about half its size.
const compressionRatio = 0.5

// valueDataSize is the size of the buffer values are cut from (db_bench's RandomGenerator
// keeps 1 MB, or more for larger values).
const valueDataSize = 1 << 20

// chunk is the size of the pieces RandomGenerator fills its buffer with: each is
// chunk×ratio random printable bytes repeated to fill chunk (CompressibleString).
const chunk = 100

// putKey writes key index i into key (len(key) = --key-size bytes) as db_bench's
// GenerateKeyFromInt does: the index big-endian in the first min(8, len) bytes, the rest
// '0's. Keys are fixed-width, so their byte order is the index order.
func putKey(key []byte, i uint64) {
	n := min(len(key), 8)
	for j := range n {
		key[j] = byte(i >> (8 * (n - j - 1)))
	}
	for j := n; j < len(key); j++ {
		key[j] = '0'
	}
}

// keyIndex decodes putKey's index (the first min(8, len) bytes, big-endian).
func keyIndex(key []byte) uint64 {
	var i uint64
	for _, b := range key[:min(len(key), 8)] {
		i = i<<8 | uint64(b)
	}
	return i
}

// values are the value generator: a buffer of compressible data as db_bench's
// RandomGenerator makes with --compression_ratio=0.5, and each key's value is a
// valueSize-byte slice of it at an offset derived from the key's index. db_bench's values
// differ on every write; here a key always gets the same value, so every audit can check
// any key's value (an LSM never compares values: the bytes written are the same).
type values struct {
	data []byte
	size int
	seed uint64
}

// newValues builds the buffer from the run's seed.
func newValues(rng *rand.Rand, seed uint64, valueSize int) *values {
	n := max(valueDataSize, valueSize)
	n = (n + chunk - 1) / chunk * chunk
	data := make([]byte, n)
	raw := int(chunk * compressionRatio)
	for off := 0; off < n; off += chunk {
		c := data[off : off+chunk]
		for j := range raw {
			c[j] = ' ' + byte(rng.IntN(95)) // RandomString: printable
		}
		for j := raw; j < chunk; j++ {
			c[j] = c[j-raw]
		}
	}
	return &values{data: data, size: valueSize, seed: seed}
}

// of returns key i's value: a view of the buffer, never to be written to.
func (v *values) of(i uint64) []byte {
	span := uint64(len(v.data) - v.size + 1)
	off := splitmix64(i^v.seed) % span
	return v.data[off : off+uint64(v.size) : off+uint64(v.size)]
}

// splitmix64 is the SplitMix64 finalizer: a bijective mix that spreads nearby inputs.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// permutation is a seeded pseudo-random bijection of [0, n): fillrandom writes every key
// once in its order without keeping n indexes. It is a four-round Feistel network over
// the smallest even number of bits covering n, walked until the result is below n
// (cycle walking: fewer than four rounds of the network on average).
type permutation struct {
	n    uint64
	half uint   // bits of each half
	mask uint64 // (1 << half) - 1
	keys [4]uint64
}

func newPermutation(n uint64, rng *rand.Rand) *permutation {
	b := uint(bits.Len64(max(n-1, 1)))
	b += b & 1
	p := &permutation{n: n, half: b / 2, mask: 1<<(b/2) - 1}
	for i := range p.keys {
		p.keys[i] = rng.Uint64()
	}
	return p
}

// at returns the i-th element (i < n).
func (p *permutation) at(i uint64) uint64 {
	for {
		l, r := i>>p.half, i&p.mask
		for _, k := range p.keys {
			l, r = r, l^(splitmix64(r^k)&p.mask)
		}
		i = l<<p.half | r
		if i < p.n {
			return i
		}
	}
}
