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

// openSession opens a database with kvtest's small options and a session on it, both
// closed when the test ends.
func openSession(t *testing.T) (*handle, engine.KVSession) {
	t.Helper()
	h := openSmall(t)
	s, err := h.NewKVSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return h, s
}

// TestNoPerfContext: a session's operations leave RocksDB's thread-local perf context
// untouched (perf level kDisable, as db_bench runs), while the same Get with counting on
// counts its key comparisons, so the test can tell the two apart.
func TestNoPerfContext(t *testing.T) {
	runtime.LockOSThread() // the perf context and level are the OS thread's
	defer runtime.UnlockOSThread()
	ctx := context.Background()
	h, s := openSession(t)
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
	h, s := openSession(t)
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
	h, s := openSession(t)
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

// TestIteratorMatchesGrocksdb: the session's iterator (one cgo call per move, iter.go)
// lands on the keys and values grocksdb's iterator does, forwards from SeekGE and
// backwards from SeekLE, over a tree half in files and half in the memtable, and its
// moves allocate nothing.
func TestIteratorMatchesGrocksdb(t *testing.T) {
	ctx := context.Background()
	h, s := openSession(t)
	for i := range 2000 {
		if err := s.Put(kvtest.Key(i*2), kvtest.Value(i, 100)); err != nil { // even keys only
			t.Fatal(err)
		}
		if i == 1000 {
			if err := h.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	ref := h.db.NewIterator(s.(*session).ro)
	defer ref.Close()
	for _, tc := range []struct {
		from    int
		reverse bool
	}{{0, false}, {1001, false}, {3999, true}, {2001, true}, {5000, false}, {-1, true}} {
		it, err := s.NewIterator()
		if err != nil {
			t.Fatal(err)
		}
		seek := kvtest.Key(max(tc.from, 0))
		if tc.from < 0 {
			seek = []byte{0}
		}
		var ok bool
		if tc.reverse {
			ok = it.SeekLE(seek)
			ref.SeekForPrev(seek)
		} else {
			ok = it.SeekGE(seek)
			ref.Seek(seek)
		}
		n := 0
		for ; ok && n < 50; n++ {
			if !ref.Valid() || !bytes.Equal(it.Key(), ref.Key().Data()) || !bytes.Equal(it.Value(), ref.Value().Data()) {
				t.Fatalf("from %d (reverse %v), move %d: on %q, grocksdb's on %q (valid %v)", tc.from, tc.reverse, n, it.Key(), ref.Key().Data(), ref.Valid())
			}
			if tc.reverse {
				ok = it.Prev()
				ref.Prev()
			} else {
				ok = it.Next()
				ref.Next()
			}
		}
		if ok != ref.Valid() || it.Valid() != ok {
			t.Errorf("from %d (reverse %v): valid %v after %d moves, grocksdb's %v", tc.from, tc.reverse, ok, n, ref.Valid())
		}
		if err := it.Err(); err != nil {
			t.Error(err)
		}
		if tc.from == 0 {
			if a := testing.AllocsPerRun(100, func() {
				if !it.Next() {
					it.SeekGE(kvtest.Key(0))
				}
			}); a != 0 {
				t.Errorf("an iterator move allocates %.1f times, want 0", a)
			}
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMultiGet: the session's MultiGet (one cgo call, ops.cc) finds what grocksdb's
// MultiGet finds, with the same total size, for present and missing keys from the
// memtable and the files, and allocates nothing once its buffers have grown.
func TestMultiGet(t *testing.T) {
	ctx := context.Background()
	h, s := openSession(t)
	for i := range 300 {
		if err := s.Put(kvtest.Key(i*2), kvtest.Value(i, 10+i)); err != nil {
			t.Fatal(err)
		}
		if i == 150 {
			if err := h.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	var keys [][]byte
	for _, i := range []int{0, 1, 2, 299, 300, 301, 598, 599, 1000} {
		keys = append(keys, kvtest.Key(i))
	}
	vals, err := h.db.MultiGet(s.(*session).ro, keys...)
	if err != nil {
		t.Fatal(err)
	}
	wantFound, wantBytes := 0, int64(0)
	for _, v := range vals {
		if v.Exists() {
			wantFound++
			wantBytes += int64(v.Size())
		}
	}
	vals.Destroy()
	found, n, err := s.MultiGet(keys)
	if err != nil || found != wantFound || n != wantBytes || found != 4 {
		t.Fatalf("MultiGet = %d found, %d bytes, %v; grocksdb's: %d found, %d bytes (want 4 found)", found, n, err, wantFound, wantBytes)
	}
	if a := testing.AllocsPerRun(100, func() {
		if _, _, err := s.MultiGet(keys); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("a MultiGet allocates %.1f times, want 0", a)
	}
}
