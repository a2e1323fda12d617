package rocksdb

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/linxGnu/grocksdb"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/kvtest"
)

// openSmall opens a database with kvtest's small options, closed when the test ends.
func openSmall(t *testing.T) *handle {
	t.Helper()
	hh, err := New().Open(context.Background(), engine.Target{Dir: t.TempDir(), KV: kvtest.Small()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hh.Close() })
	return hh.(*handle)
}

// TestNoPerfContext: a session's operations leave RocksDB's thread-local perf context
// untouched (perf level kDisable, as db_bench runs), while the same Get with counting on
// counts its key comparisons, so the test can tell the two apart.
func TestNoPerfContext(t *testing.T) {
	runtime.LockOSThread() // the perf context and level are the OS thread's
	defer runtime.UnlockOSThread()
	ctx := context.Background()
	h := openSmall(t)
	s, err := h.NewKVSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 1000 {
		s.BatchPut(kvtest.Key(i), kvtest.Value(i, 100))
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	pc := grocksdb.NewPerfContext()
	defer pc.Destroy()
	const comparisons = 0 // rocksdb_user_key_comparison_count

	grocksdb.SetPerfLevel(grocksdb.KEnableCount)
	pc.Reset()
	sl, err := h.db.Get(s.(*session).ro, kvtest.Key(500))
	if err != nil {
		t.Fatal(err)
	}
	sl.Free()
	if pc.Metric(comparisons) == 0 {
		t.Fatal("a Get with perf level kEnableCount counted no key comparison: the check below would prove nothing")
	}

	grocksdb.SetPerfLevel(grocksdb.KEnableCount)
	pc.Reset()
	if _, found, err := s.Get(kvtest.Key(500)); err != nil || !found {
		t.Fatalf("Get = found %v, %v", found, err)
	}
	if _, _, err := s.MultiGet([][]byte{kvtest.Key(1), kvtest.Key(2)}); err != nil {
		t.Fatal(err)
	}
	it, err := s.NewIterator()
	if err != nil {
		t.Fatal(err)
	}
	it.SeekGE(kvtest.Key(10))
	_ = it.Close()
	if n := pc.Metric(comparisons); n != 0 {
		t.Errorf("the session's Get, MultiGet and SeekGE counted %d key comparisons into the perf context, want 0 (perf level kDisable)", n)
	}
}

// TestCHandles: the C handles get.go takes from grocksdb's unexported fields are the
// ones grocksdb uses, and get reads what grocksdb's Get reads (values larger than the
// buffer included, a missing key, an empty value).
func TestCHandles(t *testing.T) {
	h := openSmall(t)
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	wo := grocksdb.NewDefaultWriteOptions()
	defer wo.Destroy()
	vals := map[string][]byte{"a": kvtest.Value(1, 10), "big": kvtest.Value(2, 100_000), "empty": {}}
	for k, v := range vals {
		if err := h.db.Put(wo, []byte(k), v); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 0, 64)
	for _, k := range []string{"a", "big", "empty", "missing"} {
		want, err := h.db.GetBytes(ro, []byte(k))
		if err != nil {
			t.Fatal(err)
		}
		got, found, err := get(h.db, ro, []byte(k), buf)
		if err != nil {
			t.Fatalf("get %q: %v", k, err)
		}
		_, exists := vals[k]
		if found != exists || !bytes.Equal(got, want) {
			t.Errorf("get %q = %d bytes, found %v; grocksdb's Get: %d bytes, exists %v", k, len(got), found, len(want), exists)
		}
		if cap(got) >= cap(buf) {
			buf = got[:0]
		}
	}
	if cap(buf) < 100_000 {
		t.Errorf("the buffer was not grown for the large value: cap %d", cap(buf))
	}
}
