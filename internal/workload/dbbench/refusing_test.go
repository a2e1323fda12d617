package dbbench_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/pebble"
)

// refusingKV is a real Pebble database that refuses the operations named in unsupported
// as an engine without them does (engine.ErrUnsupported), so the tests see how the
// workload skips what an engine lacks; it also counts reopens.
type refusingKV struct {
	engine.KV
	unsupported map[string]bool
	reopens     int
}

// openPebble opens a real Pebble database in a temporary directory.
func openPebble(t *testing.T, o engine.KVOptions) *refusingKV {
	t.Helper()
	h, err := pebble.New().Open(context.Background(), engine.Target{Dir: t.TempDir(), KV: o})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return &refusingKV{KV: h.(engine.KV), unsupported: map[string]bool{}}
}

func (r *refusingKV) refuse(what string) error {
	if r.unsupported[what] {
		return engine.Unsupported("refusing", what, "refused by the test")
	}
	return nil
}

func (r *refusingKV) Reopen(ctx context.Context, o engine.KVOptions) error {
	r.reopens++
	return r.KV.Reopen(ctx, o)
}

func (r *refusingKV) Flush(ctx context.Context) error {
	if err := r.refuse("flush"); err != nil {
		return err
	}
	return r.KV.Flush(ctx)
}

func (r *refusingKV) CompactLevel(ctx context.Context, level int) (string, error) {
	if err := r.refuse(fmt.Sprintf("compact%d", level)); err != nil {
		return "", err
	}
	return r.KV.CompactLevel(ctx, level)
}

func (r *refusingKV) CompactAll(ctx context.Context) error {
	if err := r.refuse("compactall"); err != nil {
		return err
	}
	return r.KV.CompactAll(ctx)
}

func (r *refusingKV) NewKVSession(ctx context.Context) (engine.KVSession, error) {
	s, err := r.KV.NewKVSession(ctx)
	if err != nil {
		return nil, err
	}
	return &refusingSession{KVSession: s, r: r}, nil
}

type refusingSession struct {
	engine.KVSession
	r *refusingKV
}

func (s *refusingSession) MultiGet(keys [][]byte) (int, int64, error) {
	if err := s.r.refuse("multiget"); err != nil {
		return 0, 0, err
	}
	return s.KVSession.MultiGet(keys)
}
