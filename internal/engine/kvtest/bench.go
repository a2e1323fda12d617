package kvtest

import (
	"context"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
)

// Bench runs the engine's hot-path benchmarks (make bench): Get of existing keys, a
// MultiGet of 10 and Put, each through one session on a database of 100,000 keys of 400
// bytes, reporting ns/op and allocs/op (the cost of Go, and of cgo for RocksDB, on top
// of the engine's own work).
func Bench(b *testing.B, open func(b *testing.B) engine.KV) {
	const keys, vsize = 100_000, 400
	kv := open(b)
	s, err := kv.NewKVSession(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := range keys {
		s.BatchPut(Key(i), Value(i, vsize))
		if i%1000 == 999 {
			if err := s.Commit(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := kv.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	// Measured on a settled tree: no compaction competes for the CPU or reshapes the
	// levels while reads run.
	if _, err := kv.WaitForCompaction(context.Background()); err != nil {
		b.Fatal(err)
	}
	ks := make([][]byte, keys)
	for i := range ks {
		ks[i] = Key(i)
	}
	b.Run("Get", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, found, err := s.Get(ks[(i*7919)%keys]); err != nil || !found {
				b.Fatal(found, err)
			}
		}
	})
	b.Run("MultiGet10", func(b *testing.B) {
		b.ReportAllocs()
		batch := make([][]byte, 10)
		for i := 0; b.Loop(); i++ {
			for j := range batch {
				batch[j] = ks[((i*10+j)*7919)%keys]
			}
			if found, _, err := s.MultiGet(batch); err != nil || found != 10 {
				b.Fatal(found, err)
			}
		}
	})
	b.Run("Seek10", func(b *testing.B) { // fwdrange's op: a new iterator, a seek, 10 nexts
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			it, err := s.NewIterator()
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for ok := it.SeekGE(ks[(i*7919)%(keys-20)]); ok && n < 10; ok = it.Next() {
				n++
				_ = it.Value()
			}
			if err := it.Close(); err != nil || n != 10 {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("Put", func(b *testing.B) {
		b.ReportAllocs()
		v := Value(1, vsize)
		for i := 0; b.Loop(); i++ {
			if err := s.Put(ks[(i*7919)%keys], v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
