package rocksdb

import (
	"context"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/kvtest"
)

func open(t *testing.T, o engine.KVOptions) engine.KV {
	t.Helper()
	h, err := New().Open(context.Background(), engine.Target{Dir: t.TempDir(), KV: o})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h.(engine.KV)
}

func TestConformance(t *testing.T) {
	kvtest.Run(t, open, kvtest.Options{})
}
