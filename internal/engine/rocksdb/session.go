package rocksdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/linxGnu/grocksdb"

	"github.com/dbperf/dbperf/internal/engine"
)

// session is one worker's view: its read and write options, its pending write batch and
// its C++ state (ops: the value its last Get pinned, the batch its Puts reuse). It holds the handle's read lock only during a call, so a
// Reopen waits for calls in flight, not for sessions; the handle releases every session's
// pinned value before it closes the database (closeLocked).
type session struct {
	h     *handle
	ro    *grocksdb.ReadOptions
	wo    *grocksdb.WriteOptions
	batch *grocksdb.WriteBatch
	ops   ops
	multi multiKeys
}

var _ engine.KVSession = (*session)(nil)

// NewKVSession opens a worker's session with the write options in force (WAL, sync).
func (h *handle) NewKVSession(ctx context.Context) (engine.KVSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("rocksdb: session: %w", err)
	}
	h.mu.RLock()
	o := h.opts
	closed := h.db == nil
	h.mu.RUnlock()
	if closed {
		return nil, errors.New("rocksdb: the database is closed")
	}
	s := &session{h: h, ro: grocksdb.NewDefaultReadOptions(), wo: grocksdb.NewDefaultWriteOptions(), batch: grocksdb.NewWriteBatch(), ops: newOps()}
	s.wo.DisableWAL(o.DisableWAL)
	s.wo.SetSync(o.Sync)
	h.mu.Lock()
	h.sessions[s] = struct{}{}
	h.mu.Unlock()
	return s, nil
}

// noPerfContext turns off RocksDB's perf context on the calling OS thread before an
// operation. RocksDB counts every key comparison, block read and cache hit into a
// thread-local perf context unless the thread's perf level is kDisable, and a thread
// starts at kEnableCount; db_bench sets kDisable (--perf_level) on its threads. A
// goroutine may run on any of the Go runtime's threads, so it is set before every
// point operation and every seek: Get, Put, MultiGet and seeks do it inside their own
// cgo call (ops.cc), Delete and Commit with this one (about 40 ns). Measured on
// readrandom over a cached tree, 5.5 µs of CPU per Get with the counts, 5.0 without.
func noPerfContext() { grocksdb.SetPerfLevel(grocksdb.KDisable) }

// Get reads key's value in one cgo call (get.go). The value is RocksDB's pinned memory,
// valid until the session's next call (engine.KVSession) or a Reopen or Close.
func (s *session) Get(key []byte) (v []byte, found bool, err error) {
	s.h.mu.RLock()
	defer s.h.mu.RUnlock()
	if s.h.db == nil {
		return nil, false, errors.New("rocksdb: the database is closed")
	}
	v, found, err = get(s.h.db, s.ro, key, s.ops)
	if err != nil {
		return nil, false, fmt.Errorf("rocksdb: get: %w", err)
	}
	return v, found, nil
}

// MultiGet reads keys with one RocksDB MultiGet in one cgo call (get.go).
func (s *session) MultiGet(keys [][]byte) (found int, n int64, err error) {
	s.h.mu.RLock()
	defer s.h.mu.RUnlock()
	if s.h.db == nil {
		return 0, 0, errors.New("rocksdb: the database is closed")
	}
	found, n, err = multiGet(s.h.db, s.ro, keys, s.ops, &s.multi)
	if err != nil {
		return 0, 0, fmt.Errorf("rocksdb: multiget: %w", err)
	}
	return found, n, nil
}

// Put writes one key in one cgo call (get.go).
func (s *session) Put(key, value []byte) error {
	s.h.mu.RLock()
	defer s.h.mu.RUnlock()
	if s.h.db == nil {
		return errors.New("rocksdb: the database is closed")
	}
	if err := put(s.h.db, s.wo, key, value, s.ops); err != nil {
		return fmt.Errorf("rocksdb: put: %w", err)
	}
	return nil
}

// Delete deletes one key.
func (s *session) Delete(key []byte) error {
	noPerfContext()
	return s.h.locked(func(db *grocksdb.DB) error {
		if err := db.Delete(s.wo, key); err != nil {
			return fmt.Errorf("rocksdb: delete: %w", err)
		}
		return nil
	})
}

// BatchPut adds a put to the pending batch (RocksDB copies key and value).
func (s *session) BatchPut(key, value []byte) { s.batch.Put(key, value) }

// BatchDelete adds a delete to the pending batch.
func (s *session) BatchDelete(key []byte) { s.batch.Delete(key) }

// Commit writes the pending batch and clears it for reuse.
func (s *session) Commit() error {
	if s.batch.Count() == 0 {
		return nil
	}
	noPerfContext()
	err := s.h.locked(func(db *grocksdb.DB) error {
		if err := db.Write(s.wo, s.batch); err != nil {
			return fmt.Errorf("rocksdb: commit: %w", err)
		}
		return nil
	})
	s.batch.Clear()
	return err
}

// NewIterator returns an iterator over every key. It keeps the handle's read lock until
// it is closed (RocksDB's iterator pins the database's state).
func (s *session) NewIterator() (engine.KVIterator, error) {
	s.h.mu.RLock()
	if s.h.db == nil {
		s.h.mu.RUnlock()
		return nil, errors.New("rocksdb: the database is closed")
	}
	return newIterator(s.h, s.ro), nil
}

// Close releases the session's pinned value and frees its options and batch.
func (s *session) Close() error {
	if s.batch != nil {
		s.h.mu.Lock()
		delete(s.h.sessions, s)
		s.ops.release()
		s.h.mu.Unlock()
		s.ops.free()
		s.batch.Destroy()
		s.ro.Destroy()
		s.wo.Destroy()
		s.batch = nil
	}
	return nil
}
