package pebble

import (
	"context"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/kvtest"
)

func BenchmarkOps(b *testing.B) {
	kvtest.Bench(b, func(b *testing.B) engine.KV {
		o := kvtest.Small()
		o.WriteBufferSize, o.TargetFileSizeBase, o.MaxBytesForLevelBase = 4<<20, 4<<20, 16<<20
		h, err := New().Open(context.Background(), engine.Target{Dir: b.TempDir(), KV: o})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = h.Close() })
		return h.(engine.KV)
	})
}
