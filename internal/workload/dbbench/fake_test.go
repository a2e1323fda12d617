package dbbench_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/dbperf/dbperf/internal/engine"
)

// fakeKV is an in-memory engine.KV for the suite's own tests: a map with a sorted key
// list, a pretend memtable (entries since the last flush) and a pretend tree of file
// counts that flush and compaction move down, so the workload's steps, audits and shape
// checks run without a real engine. unsupported names the operations it refuses.
type fakeKV struct {
	mu      sync.RWMutex
	data    map[string][]byte
	sorted  []string
	pending []string // keys not in sorted yet
	opts    engine.KVOptions
	mem     int64
	levels  [7]int64
	reopens int

	unsupported map[string]bool
}

var _ engine.KV = (*fakeKV)(nil)

func newFakeKV(o engine.KVOptions) *fakeKV {
	return &fakeKV{data: map[string][]byte{}, opts: o, unsupported: map[string]bool{}}
}

func (f *fakeKV) Info(context.Context) (engine.Info, error) { return engine.Info{Version: "fake"}, nil }
func (f *fakeKV) Size(context.Context) (int64, error)       { return 0, nil }
func (f *fakeKV) Close() error                              { return nil }
func (f *fakeKV) NewKVSession(context.Context) (engine.KVSession, error) {
	return &fakeSession{f: f}, nil
}

func (f *fakeKV) Reopen(_ context.Context, o engine.KVOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opts = o
	f.reopens++
	return nil
}

func (f *fakeKV) Options() engine.KVOptions {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.opts
}

func (f *fakeKV) refuse(what string) error {
	if f.unsupported[what] {
		return engine.Unsupported("fake", what, "the fake refuses it")
	}
	return nil
}

func (f *fakeKV) Flush(context.Context) error {
	if err := f.refuse("flush"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mem > 0 {
		f.levels[0]++
		f.mem = 0
	}
	return nil
}

func (f *fakeKV) WaitForCompaction(context.Context) (string, error) { return "nothing pending", nil }

func (f *fakeKV) CompactLevel(_ context.Context, level int) (string, error) {
	if err := f.refuse(fmt.Sprintf("compact%d", level)); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.levels[level]
	f.levels[level] = 0
	f.levels[min(level+1, len(f.levels)-1)] += n
	return fmt.Sprintf("%d files from L%d", n, level), nil
}

func (f *fakeKV) CompactAll(context.Context) error {
	if err := f.refuse("compactall"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var n int64
	for i := range f.levels {
		n += f.levels[i]
		f.levels[i] = 0
	}
	f.levels[len(f.levels)-1] = n
	return nil
}

func (f *fakeKV) Properties(context.Context) (engine.KVProps, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	p := engine.KVProps{MemtableEntries: f.mem, MemtableBytes: f.mem * 420, ImmutableMemtables: 0, LiveBytes: engine.Unknown}
	for i, n := range f.levels {
		p.Levels = append(p.Levels, engine.KVLevel{Level: i, Files: n, Bytes: n << 20})
	}
	return p, nil
}

// put stores a copy; every 1000 memtable entries make an L0 file, and 2 of those move
// to the last level.
func (f *fakeKV) put(k, v []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.data[string(k)]; !ok {
		f.pending = append(f.pending, string(k))
	}
	f.data[string(k)] = slices.Clone(v)
	if f.mem++; f.mem >= 1000 {
		f.levels[0]++
		f.mem = 0
	}
	if f.levels[0] >= 2 { // a "background compaction" into the last level
		f.levels[len(f.levels)-1] += f.levels[0]
		f.levels[0] = 0
	}
}

// keys returns the sorted keys now (a snapshot never changed afterwards).
func (f *fakeKV) keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.pending) > 0 {
		s := append(slices.Clone(f.sorted), f.pending...)
		sort.Strings(s)
		f.sorted, f.pending = s, nil
	}
	return f.sorted
}

func (f *fakeKV) get(k []byte) ([]byte, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	v, ok := f.data[string(k)]
	return v, ok
}

type fakeSession struct {
	f     *fakeKV
	batch [][2][]byte
}

func (s *fakeSession) Get(k []byte) ([]byte, bool, error) {
	v, ok := s.f.get(k)
	return v, ok, nil
}

func (s *fakeSession) MultiGet(keys [][]byte) (int, int64, error) {
	if err := s.f.refuse("multiget"); err != nil {
		return 0, 0, err
	}
	n, b := 0, int64(0)
	for _, k := range keys {
		if v, ok := s.f.get(k); ok {
			n++
			b += int64(len(v))
		}
	}
	return n, b, nil
}

func (s *fakeSession) Put(k, v []byte) error { s.f.put(k, v); return nil }
func (s *fakeSession) Delete([]byte) error   { return engine.Unsupported("fake", "delete", "not needed") }
func (s *fakeSession) BatchPut(k, v []byte) {
	s.batch = append(s.batch, [2][]byte{slices.Clone(k), slices.Clone(v)})
}
func (s *fakeSession) BatchDelete([]byte) {}
func (s *fakeSession) Commit() error {
	for _, kv := range s.batch {
		s.f.put(kv[0], kv[1])
	}
	s.batch = s.batch[:0]
	return nil
}
func (s *fakeSession) NewIterator() (engine.KVIterator, error) {
	return &fakeIter{f: s.f, keys: s.f.keys(), pos: -1}, nil
}
func (s *fakeSession) Close() error { return nil }

type fakeIter struct {
	f    *fakeKV
	keys []string
	pos  int
}

func (it *fakeIter) SeekGE(k []byte) bool {
	it.pos = sort.SearchStrings(it.keys, string(k))
	return it.Valid()
}

func (it *fakeIter) SeekLE(k []byte) bool {
	i := sort.SearchStrings(it.keys, string(k))
	if i < len(it.keys) && it.keys[i] == string(k) {
		it.pos = i
	} else {
		it.pos = i - 1
	}
	return it.Valid()
}

func (it *fakeIter) Next() bool    { it.pos++; return it.Valid() }
func (it *fakeIter) Prev() bool    { it.pos--; return it.Valid() }
func (it *fakeIter) Valid() bool   { return it.pos >= 0 && it.pos < len(it.keys) }
func (it *fakeIter) Key() []byte   { return []byte(it.keys[it.pos]) }
func (it *fakeIter) Value() []byte { v, _ := it.f.get([]byte(it.keys[it.pos])); return v }
func (it *fakeIter) Err() error    { return nil }
func (it *fakeIter) Close() error  { return nil }
