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

// TestCHandles: the C handles get.go takes from grocksdb's unexported fields, and the
// C++ objects ops.cc reads at their start, are the ones grocksdb uses: get and put read
// and write what grocksdb's Get and Put do (a large value, a missing key, an empty
// value), and a pinned value stays as read until the pin's next get.
func TestCHandles(t *testing.T) {
	h := openSmall(t)
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	wo := grocksdb.NewDefaultWriteOptions()
	defer wo.Destroy()
	vals := map[string][]byte{"a": kvtest.Value(1, 10), "big": kvtest.Value(2, 100_000), "empty": {}}
	p := newOps()
	defer p.free()
	for k, v := range vals {
		if err := put(h.db, wo, []byte(k), v, p); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 2 { // from the memtable, then from the files
		for _, k := range []string{"a", "big", "empty", "missing"} {
			want, err := h.db.GetBytes(ro, []byte(k))
			if err != nil {
				t.Fatal(err)
			}
			got, found, err := get(h.db, ro, []byte(k), p)
			if err != nil {
				t.Fatalf("get %q: %v", k, err)
			}
			_, exists := vals[k]
			if found != exists || !bytes.Equal(got, want) || (exists && !bytes.Equal(got, vals[k])) {
				t.Errorf("round %d: get %q = %d bytes, found %v; grocksdb's Get: %d bytes, exists %v", round, k, len(got), found, len(want), exists)
			}
		}
		a, _, _ := get(h.db, ro, []byte("a"), p)
		held := bytes.Clone(a)
		if _, err := h.db.GetBytes(ro, []byte("big")); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, held) {
			t.Errorf("round %d: a pinned value changed before the pin's next get", round)
		}
		p.release()
		if err := h.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReopenWithAPinnedValue: a session whose last Get pinned a block of the cache
// survives a Reopen (which destroys that cache) and a Close: the handle releases the pin
// first, and the session's next Get reads the reopened database.
func TestReopenWithAPinnedValue(t *testing.T) {
	ctx := context.Background()
	h := openSmall(t)
	s, err := h.NewKVSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := s.Put(kvtest.Key(i), kvtest.Value(i, 400)); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if v, found, err := s.Get(kvtest.Key(5)); err != nil || !found || !bytes.Equal(v, kvtest.Value(5, 400)) {
			t.Fatalf("Get = %d bytes, found %v, %v", len(v), found, err)
		}
		if err := h.Reopen(ctx, h.Options()); err != nil {
			t.Fatal(err)
		}
	}
	if _, found, err := s.Get(kvtest.Key(6)); err != nil || !found {
		t.Fatalf("Get after the reopens = found %v, %v", found, err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestNoAllocations: a session's Get and Put allocate nothing on the Go heap (the
// noescape directives in get.go; without them each call moved its result variables to
// the heap), and put writes what grocksdb then reads.
func TestNoAllocations(t *testing.T) {
	ctx := context.Background()
	h := openSmall(t)
	s, err := h.NewKVSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key, val := kvtest.Key(7), kvtest.Value(7, 400)
	if err := s.Put(key, val); err != nil {
		t.Fatal(err)
	}
	if got, err := h.db.GetBytes(s.(*session).ro, key); err != nil || !bytes.Equal(got, val) {
		t.Fatalf("grocksdb's Get after put: %d bytes, %v; want the %d bytes put", len(got), err, len(val))
	}
	if _, _, err := s.Get(key); err != nil { // the session's buffer grows once
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(200, func() {
		if _, found, err := s.Get(key); err != nil || !found {
			t.Fatalf("Get = found %v, %v", found, err)
		}
	}); n != 0 {
		t.Errorf("a session Get allocates %.1f times, want 0", n)
	}
	if n := testing.AllocsPerRun(200, func() {
		if err := s.Put(key, val); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("a session Put allocates %.1f times, want 0", n)
	}
}
