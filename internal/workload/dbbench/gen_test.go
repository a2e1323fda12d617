package dbbench

import (
	"bytes"
	"compress/flate"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

func TestKeys(t *testing.T) {
	for _, tc := range []struct {
		size int
		i    uint64
		want []byte
	}{
		{20, 0, []byte("\x00\x00\x00\x00\x00\x00\x00\x00000000000000")},
		{20, 0x0102, []byte("\x00\x00\x00\x00\x00\x00\x01\x02000000000000")},
		{8, 1<<40 + 5, []byte{0, 0, 1, 0, 0, 0, 0, 5}},
		{4, 0x01020304, []byte{1, 2, 3, 4}},
	} {
		k := make([]byte, tc.size)
		putKey(k, tc.i)
		if !bytes.Equal(k, tc.want) {
			t.Errorf("key %d (%d bytes) = %q, want %q", tc.i, tc.size, k, tc.want)
		}
		if got := keyIndex(k); got != tc.i {
			t.Errorf("keyIndex(%q) = %d, want %d", k, got, tc.i)
		}
	}
	// Fixed width: byte order is index order.
	a, b := make([]byte, 20), make([]byte, 20)
	for _, i := range []uint64{0, 1, 255, 256, 65535, 1 << 32, 1<<62 - 2} {
		putKey(a, i)
		putKey(b, i+1)
		if bytes.Compare(a, b) >= 0 {
			t.Errorf("key %d does not sort before key %d", i, i+1)
		}
	}
}

func TestPermutation(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 17, 1000, 20_000, 65_536, 100_003} {
		p := newPermutation(n, workload.Stream(7, "perm"))
		seen := make([]bool, n)
		inOrder := 0
		for i := range n {
			v := p.at(i)
			if v >= n || seen[v] {
				t.Fatalf("n=%d: at(%d) = %d: not a permutation", n, i, v)
			}
			seen[v] = true
			if v == i {
				inOrder++
			}
		}
		if n >= 1000 && inOrder > int(n/100) {
			t.Errorf("n=%d: %d fixed points: hardly shuffled", n, inOrder)
		}
	}
	a, b := newPermutation(1000, workload.Stream(7, "perm")), newPermutation(1000, workload.Stream(8, "perm"))
	same := 0
	for i := range uint64(1000) {
		if a.at(i) == b.at(i) {
			same++
		}
	}
	if same > 20 {
		t.Errorf("seeds 7 and 8 agree on %d of 1000 positions", same)
	}
}

func testValues(seed int64, size int) *values {
	return newValues(workload.Stream(seed, Name, "values"), splitmix64(uint64(seed)), size)
}

// Values are deterministic from the seed, printable, valueSize bytes, and differ between
// keys and seeds.
func TestValuesDeterministic(t *testing.T) {
	a, b, c := testValues(7, 400), testValues(7, 400), testValues(8, 400)
	for i := range uint64(1000) {
		v := a.of(i)
		if len(v) != 400 || !bytes.Equal(v, b.of(i)) {
			t.Fatalf("value %d: %d bytes, or not the same from the same seed", i, len(v))
		}
		if bytes.Equal(v, c.of(i)) || bytes.Equal(v, a.of(i+1)) {
			t.Fatalf("value %d: the same for another seed or key", i)
		}
		for _, x := range v {
			if x < ' ' || x > '~' {
				t.Fatalf("value %d: byte %d is not printable", i, x)
			}
		}
	}
	if big := testValues(7, 3<<20); len(big.of(5)) != 3<<20 {
		t.Error("a value larger than the buffer")
	}
}

// Golden fingerprint of the generated data of seed 7: a change here changes every
// result, so bump version.
func TestGeneratedDataFingerprint(t *testing.T) {
	h := fnv.New64a()
	v := testValues(7, 400)
	p := newPermutation(20_000, workload.Stream(7, Name, "fillrandom", "permutation", "0"))
	key := make([]byte, 20)
	for i := range uint64(100) {
		j := p.at(i)
		putKey(key, j)
		h.Write(key)
		h.Write(v.of(j))
	}
	if got, want := fmt.Sprintf("%016x", h.Sum64()), "a5e79c670db908b7"; got != want {
		t.Errorf("fingerprint %s, want %s", got, want)
	}
}

// Values compress to about half their size, as db_bench's with --compression_ratio=0.5:
// an 8 KiB block of values, compressed, is about half the size of a block of random
// printable bytes (which the compressor's entropy coding alone shrinks) compressed.
func TestValuesCompressibility(t *testing.T) {
	v := testValues(7, 400)
	var block []byte
	for i := uint64(0); len(block) < 8192; i++ {
		block = append(block, v.of(i*7919)...)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, len(block))
	for i := range random {
		random[i] = ' ' + byte(rnd.IntN(95))
	}
	comp := func(b []byte) float64 {
		var out bytes.Buffer
		w, _ := flate.NewWriter(&out, flate.BestCompression)
		w.Write(b)
		w.Close()
		return float64(out.Len())
	}
	rel := comp(block) / comp(random)
	abs := comp(block) / float64(len(block))
	if rel < 0.45 || rel > 0.65 || abs > 0.55 {
		t.Errorf("values compress to %.2f of random printable data (%.2f of their size), want ≈ 0.5", rel, abs)
	}
	t.Logf("compressed: %.2f of random printable bytes, %.2f of their size", rel, abs)
}

// compact1's level and the levelstats/memstats notes.
func TestShapeHelpers(t *testing.T) {
	pr := engine.KVProps{Levels: []engine.KVLevel{{Level: 0, Files: 2, Bytes: 3 << 20}, {Level: 1}, {Level: 3, Files: 4, Bytes: 8 << 20},
		{Level: 6, Files: 9, Bytes: 64 << 20}}, MemtableEntries: 12, MemtableBytes: 4096, ImmutableMemtables: engine.Unknown, LiveBytes: 75 << 20}
	if l, ok := compact1Level(pr); !ok || l != 3 {
		t.Errorf("compact1 level %d %v, want 3", l, ok)
	}
	pr.Levels[1].Files = 0
	if _, ok := compact1Level(engine.KVProps{Levels: pr.Levels[3:]}); ok {
		t.Error("compact1 with one non-empty level below L0")
	}
	if got, want := levelStats(pr), "L0 2 files 3MiB, L3 4 files 8MiB, L6 9 files 64MiB; live 75MiB; pending compaction 0B"; got != want {
		t.Errorf("levelstats %q, want %q", got, want)
	}
	if got, want := memStats(pr), "memtable 12 entries 4KiB, unknown immutable"; got != want {
		t.Errorf("memstats %q, want %q", got, want)
	}
	if levelFiles(pr, 0) != 2 || levelFiles(pr, 9) != 0 {
		t.Error("levelFiles")
	}
}
