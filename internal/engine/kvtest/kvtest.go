// Package kvtest is the conformance suite every key-value engine (engine.KV) runs: the
// same operations, LSM-shape commands and properties checked the same way on RocksDB and
// Pebble, against the real engine in a temporary directory. Engines call Run from their
// own tests. Its cases: operations, batches, iterators, concurrent sessions,
// flush/compact/wait and their effect on the shape, properties, and a reopen with other
// options.
package kvtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
)

// Options are what the suite needs to know about an engine beyond engine.KV.
type Options struct {
	// UnknownMemtableEntries: the engine does not count its memtables' entries (Pebble).
	UnknownMemtableEntries bool
}

// Small are options under which a few thousand keys make a tree of several levels.
func Small() engine.KVOptions {
	return engine.KVOptions{
		Compression: "snappy", WriteBufferSize: 64 << 10, MaxWriteBufferNum: 4,
		TargetFileSizeBase: 64 << 10, MaxBytesForLevelBase: 256 << 10, LevelMultiplier: 4,
		NumLevels: 7, L0CompactionTrigger: 4, L0SlowdownTrigger: 20, L0StopTrigger: 30,
		MaxBackgroundJobs: 2, BlockCacheSize: 8 << 20, BlockSize: 4096, BloomBitsPerKey: 10,
	}
}

// Key is the fixed-width key of index i.
func Key(i int) []byte { return fmt.Appendf(nil, "key%012d", i) }

// Value is the value of key i, n bytes.
func Value(i, n int) []byte {
	v := bytes.Repeat(fmt.Appendf(nil, "v%d-", i), n/2+1)
	return v[:n]
}

// Run runs the suite; open opens a fresh database with the given options in a new
// temporary directory and closes it when the test ends.
func Run(t *testing.T, open func(t *testing.T, o engine.KVOptions) engine.KV, opts Options) {
	s := suite{open: open, opts: opts}
	t.Run("InfoSize", s.infoSize)
	t.Run("PutGetDelete", s.putGetDelete)
	t.Run("MultiGet", s.multiGet)
	t.Run("Batch", s.batch)
	t.Run("Iterator", s.iterator)
	t.Run("ConcurrentSessions", s.concurrent)
	t.Run("FlushAndCompactL0", s.flushCompact)
	t.Run("CompactAll", s.compactAll)
	t.Run("Reopen", s.reopen)
	t.Run("Cancelled", s.cancelled)
}

type suite struct {
	open func(t *testing.T, o engine.KVOptions) engine.KV
	opts Options
}

func session(t *testing.T, kv engine.KV) engine.KVSession {
	t.Helper()
	s, err := kv.NewKVSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// load writes keys [0, n) with values of size vsize through batches of 100.
func load(t *testing.T, s engine.KVSession, n, vsize int) {
	t.Helper()
	for i := range n {
		s.BatchPut(Key(i), Value(i, vsize))
		if i%100 == 99 || i == n-1 {
			if err := s.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func props(t *testing.T, kv engine.KV) engine.KVProps {
	t.Helper()
	p, err := kv.Properties(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func files(p engine.KVProps, level int) int64 {
	for _, l := range p.Levels {
		if l.Level == level {
			return l.Files
		}
	}
	return 0
}

func totalFiles(p engine.KVProps) (n int64) {
	for _, l := range p.Levels {
		n += l.Files
	}
	return n
}

func (s suite) infoSize(t *testing.T) {
	kv := s.open(t, Small())
	info, err := kv.Info(context.Background())
	if err != nil || info.Version == "" || len(info.Settings) == 0 {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	load(t, session(t, kv), 2000, 100)
	if err := kv.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, err := kv.Size(context.Background()); err != nil || n < 2000*15 {
		t.Errorf("Size = %d, %v after 2000 keys of 15 bytes (values of 100, compressible) were flushed", n, err)
	}
}

func (s suite) putGetDelete(t *testing.T) {
	kv := s.open(t, Small())
	ss := session(t, kv)
	if _, found, err := ss.Get(Key(1)); err != nil || found {
		t.Fatalf("Get of a missing key: found %v, %v", found, err)
	}
	if err := ss.Put(Key(1), Value(1, 300)); err != nil {
		t.Fatal(err)
	}
	v, found, err := ss.Get(Key(1))
	if err != nil || !found || !bytes.Equal(v, Value(1, 300)) {
		t.Fatalf("Get = %q, %v, %v", v, found, err)
	}
	if err := ss.Put(Key(2), Value(2, 10)); err != nil {
		t.Fatal(err)
	}
	// The first value stays intact until the session's next call, then may be reused.
	if v2, _, _ := ss.Get(Key(2)); !bytes.Equal(v2, Value(2, 10)) {
		t.Fatalf("Get(2) = %q", v2)
	}
	if err := ss.Delete(Key(1)); err != nil {
		t.Fatal(err)
	}
	if _, found, err := ss.Get(Key(1)); err != nil || found {
		t.Fatalf("Get after Delete: found %v, %v", found, err)
	}
	// An overwrite replaces the value; the caller's slices are read only during the call
	// (Put and BatchPut alike), so reusing them after changes nothing stored.
	k, v := Key(3), Value(3, 64)
	if err := ss.Put(k, v); err != nil {
		t.Fatal(err)
	}
	if err := ss.Put(k, Value(33, 40)); err != nil {
		t.Fatal(err)
	}
	k4, v4 := Key(4), Value(4, 64)
	ss.BatchPut(k4, v4)
	copy(k4, Key(5))
	copy(v4, bytes.Repeat([]byte("x"), len(v4)))
	if err := ss.Commit(); err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int][]byte{3: Value(33, 40), 4: Value(4, 64)} {
		if got, found, err := ss.Get(Key(i)); err != nil || !found || !bytes.Equal(got, want) {
			t.Errorf("Get(%d) = %q, %v, %v; want %q", i, got, found, err, want)
		}
	}
	if _, found, _ := ss.Get(Key(5)); found {
		t.Error("a key buffer changed after BatchPut changed the batch")
	}
}

func (s suite) multiGet(t *testing.T) {
	kv := s.open(t, Small())
	ss := session(t, kv)
	load(t, ss, 100, 50)
	keys := [][]byte{Key(1), Key(5), Key(1000), Key(99), Key(-1)}
	found, n, err := ss.MultiGet(keys)
	if err != nil || found != 3 || n != 150 {
		t.Fatalf("MultiGet = %d found, %d bytes, %v; want 3, 150", found, n, err)
	}
	if err := ss.Put(Key(7), Value(7, 1000)); err != nil {
		t.Fatal(err)
	}
	if found, n, err := ss.MultiGet([][]byte{Key(7), Key(8)}); err != nil || found != 2 || n != 1050 {
		t.Fatalf("MultiGet = %d found, %d bytes, %v; want 2, 1050", found, n, err)
	}
	if found, n, err := ss.MultiGet(nil); err != nil || found != 0 || n != 0 {
		t.Fatalf("MultiGet of no keys = %d, %d, %v", found, n, err)
	}
}

func (s suite) batch(t *testing.T) {
	kv := s.open(t, Small())
	ss := session(t, kv)
	if err := ss.Commit(); err != nil {
		t.Fatalf("empty Commit: %v", err)
	}
	ss.BatchPut(Key(1), Value(1, 20))
	ss.BatchPut(Key(2), Value(2, 20))
	other := session(t, kv)
	if _, found, _ := other.Get(Key(1)); found {
		t.Fatal("a pending batch is visible before Commit")
	}
	if err := ss.Commit(); err != nil {
		t.Fatal(err)
	}
	ss.BatchDelete(Key(1))
	ss.BatchPut(Key(3), Value(3, 20))
	if err := ss.Commit(); err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]bool{1: false, 2: true, 3: true} {
		if _, found, err := other.Get(Key(i)); err != nil || found != want {
			t.Errorf("key %d: found %v, %v; want %v", i, found, err, want)
		}
	}
}

func (s suite) iterator(t *testing.T) {
	kv := s.open(t, Small())
	ss := session(t, kv)
	empty, err := ss.NewIterator()
	if err != nil {
		t.Fatal(err)
	}
	if empty.SeekGE(nil) || empty.SeekLE(Key(1)) || empty.Valid() {
		t.Error("an iterator over no keys is valid")
	}
	if err := empty.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for i := 0; i < 100; i += 2 { // even keys only
		if err := ss.Put(Key(i), Value(i, 8)); err != nil {
			t.Fatal(err)
		}
	}
	it, err := ss.NewIterator()
	if err != nil {
		t.Fatal(err)
	}
	if !it.SeekGE(Key(11)) || !bytes.Equal(it.Key(), Key(12)) || !bytes.Equal(it.Value(), Value(12, 8)) {
		t.Fatalf("SeekGE(11) at %q", it.Key())
	}
	for want := 14; want <= 20; want += 2 {
		if !it.Next() || !bytes.Equal(it.Key(), Key(want)) {
			t.Fatalf("Next: %q, want %q", it.Key(), Key(want))
		}
	}
	if !it.SeekLE(Key(11)) || !bytes.Equal(it.Key(), Key(10)) {
		t.Fatalf("SeekLE(11) at %q", it.Key())
	}
	if !it.SeekLE(Key(10)) || !bytes.Equal(it.Key(), Key(10)) {
		t.Fatalf("SeekLE(10) at %q", it.Key())
	}
	if !it.Prev() || !bytes.Equal(it.Key(), Key(8)) {
		t.Fatalf("Prev at %q", it.Key())
	}
	if it.SeekGE(Key(99)) || it.Valid() {
		t.Fatal("SeekGE past the last key is valid")
	}
	if it.SeekLE([]byte("a")) {
		t.Fatal("SeekLE before the first key is valid")
	}
	if !it.SeekLE(Key(1000)) || !bytes.Equal(it.Key(), Key(98)) || it.Next() {
		t.Fatalf("SeekLE past the last key at %q, or Next from the last key is valid", it.Key())
	}
	if !it.SeekGE(nil) || !bytes.Equal(it.Key(), Key(0)) || it.Prev() {
		t.Fatal("SeekGE(nil) is not at the first key, or Prev from it is valid")
	}
	if !it.SeekGE(nil) {
		t.Fatal("SeekGE(nil) after Prev")
	}
	n := 1
	for it.Next() {
		n++
	}
	if n != 50 || it.Err() != nil {
		t.Fatalf("iterated %d keys, want 50 (%v)", n, it.Err())
	}
	n = 0
	for ok := it.SeekLE(Key(98)); ok; ok = it.Prev() {
		if want := Key(98 - 2*n); !bytes.Equal(it.Key(), want) {
			t.Fatalf("backwards at %q, want %q", it.Key(), want)
		}
		n++
	}
	if n != 50 {
		t.Fatalf("iterated %d keys backwards, want 50", n)
	}
	if err := it.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func (s suite) concurrent(t *testing.T) {
	kv := s.open(t, Small())
	const workers, each = 4, 500
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		ss := session(t, kv)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w * each; i < (w+1)*each; i++ {
				if w%2 == 1 { // half the workers write through batches
					ss.BatchPut(Key(i), Value(i, 100))
					if err := ss.Commit(); err != nil {
						errs <- err
						return
					}
				} else if err := ss.Put(Key(i), Value(i, 100)); err != nil {
					errs <- err
					return
				}
				if v, found, err := ss.Get(Key(i)); err != nil || !found || !bytes.Equal(v, Value(i, 100)) {
					errs <- fmt.Errorf("key %d: %v %v", i, found, err)
					return
				}
			}
			// Each worker's own keys, through its own iterator.
			it, err := ss.NewIterator()
			if err != nil {
				errs <- err
				return
			}
			defer it.Close()
			n := 0
			for ok := it.SeekGE(Key(w * each)); ok && bytes.Compare(it.Key(), Key((w+1)*each)) < 0; ok = it.Next() {
				n++
			}
			if n != each {
				errs <- fmt.Errorf("worker %d iterated %d of its %d keys", w, n, each)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	found, _, err := session(t, kv).MultiGet([][]byte{Key(0), Key(workers*each - 1)})
	if err != nil || found != 2 {
		t.Fatalf("after concurrent writes: %d found, %v", found, err)
	}
}

func (s suite) flushCompact(t *testing.T) {
	kv := s.open(t, Small())
	ctx := context.Background()
	ss := session(t, kv)
	before := props(t, kv)
	checkProps(t, before)
	load(t, ss, 3000, 200)
	if err := kv.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, kv)
	// Overwrites and a flush leave files in L0 that overlap the levels below, so that
	// compacting them rewrites data (not a trivial move of files).
	for i := 0; i < 3000; i += 10 {
		if err := ss.Put(Key(i), Value(i, 200)); err != nil {
			t.Fatal(err)
		}
	}
	if err := kv.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	p := props(t, kv)
	checkProps(t, p)
	monotonic(t, before, p)
	if !s.opts.UnknownMemtableEntries && p.MemtableEntries != 0 {
		t.Errorf("memtable entries after Flush = %d, want 0", p.MemtableEntries)
	}
	if p.FlushBytesWritten <= before.FlushBytesWritten {
		t.Errorf("flush bytes %d → %d after flushes", before.FlushBytesWritten, p.FlushBytesWritten)
	}
	if files(p, 0) == 0 {
		t.Fatalf("no L0 file after a flush: %+v", p.Levels)
	}
	detail, err := kv.CompactLevel(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CompactLevel(0): %s", detail)
	after := props(t, kv)
	checkProps(t, after)
	monotonic(t, p, after)
	if files(after, 0) != 0 {
		t.Errorf("L0 files after CompactLevel(0) = %d (%s)", files(after, 0), detail)
	}
	var below int64
	for _, l := range after.Levels[1:] {
		below += l.Bytes
	}
	if below == 0 || after.LiveBytes != engine.Unknown && after.LiveBytes < below {
		t.Errorf("after compacting L0: %d bytes below L0, %d live (%+v)", below, after.LiveBytes, after.Levels)
	}
	if after.CompactionBytesWritten <= 0 || after.CompactionBytesWritten <= p.CompactionBytesWritten {
		t.Errorf("compaction bytes written %d → %d", p.CompactionBytesWritten, after.CompactionBytesWritten)
	}
	waitIdle(t, kv)
	// An empty level is not an error.
	if _, err := kv.CompactLevel(ctx, 0); err != nil {
		t.Errorf("CompactLevel of an empty L0: %v", err)
	}
	readAll(t, ss, 3000, 200)
}

// waitIdle waits for compactions and checks that nothing is left running or pending.
func waitIdle(t *testing.T, kv engine.KV) {
	t.Helper()
	detail, err := kv.WaitForCompaction(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := props(t, kv)
	if p.RunningCompactions > 0 || p.RunningFlushes > 0 || p.FlushPending || p.CompactionPending || p.ImmutableMemtables > 0 {
		t.Errorf("after WaitForCompaction (%s): running %d compactions, %d flushes; pending flush %v, compaction %v; %d immutable memtables",
			detail, p.RunningCompactions, p.RunningFlushes, p.FlushPending, p.CompactionPending, p.ImmutableMemtables)
	}
}

// readAll reads keys [0, n) through an iterator and checks their values (of size vsize).
func readAll(t *testing.T, ss engine.KVSession, n, vsize int) {
	t.Helper()
	it, err := ss.NewIterator()
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	i := 0
	for ok := it.SeekGE(nil); ok; ok = it.Next() {
		if !bytes.Equal(it.Key(), Key(i)) || !bytes.Equal(it.Value(), Value(i, vsize)) {
			t.Fatalf("key %d: %q = %q", i, it.Key(), it.Value())
		}
		i++
	}
	if i != n || it.Err() != nil {
		t.Fatalf("read %d of %d keys (%v)", i, n, it.Err())
	}
}

// monotonic checks that the cumulative counters did not go down from a to b.
func monotonic(t *testing.T, a, b engine.KVProps) {
	t.Helper()
	for _, c := range []struct {
		name string
		a, b int64
	}{
		{"stall_count", a.StallCount, b.StallCount},
		{"stall_micros", a.StallMicros, b.StallMicros},
		{"compaction_bytes_read", a.CompactionBytesRead, b.CompactionBytesRead},
		{"compaction_bytes_written", a.CompactionBytesWritten, b.CompactionBytesWritten},
		{"flush_bytes_written", a.FlushBytesWritten, b.FlushBytesWritten},
		{"compaction_cpu_micros", a.CompactionCPUMicros, b.CompactionCPUMicros},
		{"compaction_wall_micros", a.CompactionWallMicros, b.CompactionWallMicros},
	} {
		if (c.a == engine.Unknown) != (c.b == engine.Unknown) || c.b < c.a {
			t.Errorf("%s went from %d to %d", c.name, c.a, c.b)
		}
	}
}

// checkProps checks what holds for every reading: every figure ≥ 0 or Unknown, levels in
// order from 0.
func checkProps(t *testing.T, p engine.KVProps) {
	t.Helper()
	for name, v := range map[string]int64{
		"memtable_entries": p.MemtableEntries, "memtable_bytes": p.MemtableBytes,
		"immutable_memtables": p.ImmutableMemtables, "pending_compaction_bytes": p.PendingCompactionBytes,
		"running_flushes": p.RunningFlushes, "running_compactions": p.RunningCompactions,
		"stall_count": p.StallCount, "stall_micros": p.StallMicros,
		"compaction_bytes_read": p.CompactionBytesRead, "compaction_bytes_written": p.CompactionBytesWritten,
		"flush_bytes_written": p.FlushBytesWritten, "compaction_cpu_micros": p.CompactionCPUMicros,
		"compaction_wall_micros": p.CompactionWallMicros, "live_bytes": p.LiveBytes,
	} {
		if v < engine.Unknown {
			t.Errorf("%s = %d", name, v)
		}
	}
	if len(p.Levels) < 2 {
		t.Errorf("%d levels", len(p.Levels))
	}
	for i, l := range p.Levels {
		if l.Level != i || l.Files < 0 || l.Bytes < 0 || (l.Files == 0) != (l.Bytes == 0) {
			t.Errorf("level %d: %+v", i, l)
		}
	}
}

func (s suite) compactAll(t *testing.T) {
	kv := s.open(t, Small())
	ctx := context.Background()
	ss := session(t, kv)
	load(t, ss, 4000, 200)
	if err := kv.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, kv)
	// The deepest level in use before: CompactAll leaves every key there or deeper.
	deepest := 0
	for _, l := range props(t, kv).Levels {
		if l.Files > 0 {
			deepest = l.Level
		}
	}
	for i := 0; i < 4000; i += 7 { // overwrites, so that the levels overlap
		if err := ss.Put(Key(i), Value(i, 200)); err != nil {
			t.Fatal(err)
		}
	}
	if err := kv.CompactAll(ctx); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, kv)
	p := props(t, kv)
	checkProps(t, p)
	var nonEmpty []int
	for _, l := range p.Levels {
		if l.Files > 0 {
			nonEmpty = append(nonEmpty, l.Level)
		}
	}
	if len(nonEmpty) != 1 || nonEmpty[0] == 0 || nonEmpty[0] < deepest {
		t.Errorf("levels with files after CompactAll: %v, want one at L%d or below (%+v)", nonEmpty, max(deepest, 1), p.Levels)
	}
	readAll(t, ss, 4000, 200)
}

func (s suite) reopen(t *testing.T) {
	kv := s.open(t, Small())
	ctx := context.Background()
	ss, err := kv.NewKVSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	load(t, ss, 500, 50)
	_ = ss.Close()
	o := Small()
	o.DisableWAL, o.BloomBitsPerKey = true, 0
	if err := kv.Reopen(ctx, o); err != nil {
		t.Fatal(err)
	}
	if got := kv.Options(); got != o {
		t.Errorf("Options after Reopen = %+v, want %+v", got, o)
	}
	if info, err := kv.Info(ctx); err != nil || len(info.Settings) == 0 {
		t.Errorf("Info after Reopen: %+v, %v", info, err)
	}
	ss, err = kv.NewKVSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 500; i < 1000; i++ {
		if err := ss.Put(Key(i), Value(i, 50)); err != nil {
			t.Fatal(err)
		}
	}
	_ = ss.Close()
	// Written without the WAL: they survive a Flush and a Reopen.
	if err := kv.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := kv.Reopen(ctx, Small()); err != nil {
		t.Fatal(err)
	}
	if got := kv.Options(); got != Small() {
		t.Errorf("Options after the second Reopen = %+v", got)
	}
	readAll(t, session(t, kv), 1000, 50)
}

func (s suite) cancelled(t *testing.T) {
	kv := s.open(t, Small())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := kv.WaitForCompaction(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitForCompaction under a cancelled context: %v", err)
	}
	// A long wait is cut short by cancellation.
	ss := session(t, kv)
	load(t, ss, 2000, 200)
	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	time.Sleep(2 * time.Millisecond)
	if _, err := kv.WaitForCompaction(ctx); err == nil {
		t.Error("WaitForCompaction under an expired context succeeded")
	}
}
