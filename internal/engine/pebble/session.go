package pebble

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2"

	"github.com/dbperf/dbperf/internal/engine"
)

// session is one worker's view of the database: its write options, its pending batch
// (and the first error adding to it, which Commit returns) and the closer of the value its
// last Get returned, which keeps that value (Pebble's memory) valid until the session's
// next Get. The handle closes every session's held value before it closes the database:
// Pebble's Close refuses a database with a Get still open ("leaked iterators").
type session struct {
	h        *handle
	db       *pebble.DB
	wo       *pebble.WriteOptions
	batch    *pebble.Batch
	batchErr error
	held     io.Closer
}

var _ engine.KVSession = (*session)(nil)

// NewKVSession opens a worker's session on the database as it is now open (a Reopen
// needs new sessions).
func (h *handle) NewKVSession(ctx context.Context) (engine.KVSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pebble: session: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.db == nil {
		return nil, errors.New("pebble: the database is closed")
	}
	wo := pebble.NoSync
	if h.opts.Sync {
		wo = pebble.Sync
	}
	s := &session{h: h, db: h.db, wo: wo}
	h.sessions[s] = struct{}{}
	return s, nil
}

// Get returns Pebble's own slice of the value, without a copy, as RocksDB's engine returns
// its pinned value: it stays valid until the session's next Get (engine.KVSession), which
// first closes the closer that keeps it. A copy of every value (what this did before)
// would cost the Pebble side of an engine comparison what the RocksDB side does not pay.
// The read lock keeps Close and Reopen out while the held value changes hands.
func (s *session) Get(key []byte) ([]byte, bool, error) {
	s.h.mu.RLock()
	defer s.h.mu.RUnlock()
	if err := s.release(); err != nil {
		return nil, false, fmt.Errorf("pebble: get: %w", err)
	}
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pebble: get: %w", err)
	}
	s.held = closer
	return v, true, nil
}

// release closes the closer of the last value Get returned, if any.
func (s *session) release() error {
	if s.held == nil {
		return nil
	}
	err := s.held.Close()
	s.held = nil
	return err
}

// MultiGet is a loop of Gets: Pebble has no batched point lookup.
func (s *session) MultiGet(keys [][]byte) (int, int64, error) {
	found, n := 0, int64(0)
	for _, k := range keys {
		v, closer, err := s.db.Get(k)
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return found, n, fmt.Errorf("pebble: multiget: %w", err)
		}
		found++
		n += int64(len(v))
		if err := closer.Close(); err != nil {
			return found, n, fmt.Errorf("pebble: multiget: %w", err)
		}
	}
	return found, n, nil
}

// Put writes one key.
func (s *session) Put(key, value []byte) error {
	if err := s.db.Set(key, value, s.wo); err != nil {
		return fmt.Errorf("pebble: put: %w", err)
	}
	return nil
}

// Delete deletes one key.
func (s *session) Delete(key []byte) error {
	if err := s.db.Delete(key, s.wo); err != nil {
		return fmt.Errorf("pebble: delete: %w", err)
	}
	return nil
}

func (s *session) pending() *pebble.Batch {
	if s.batch == nil {
		s.batch = s.db.NewBatch()
	}
	return s.batch
}

// BatchPut adds a put to the pending batch (Pebble copies key and value).
func (s *session) BatchPut(key, value []byte) {
	if err := s.pending().Set(key, value, nil); err != nil && s.batchErr == nil {
		s.batchErr = err
	}
}

// BatchDelete adds a delete to the pending batch.
func (s *session) BatchDelete(key []byte) {
	if err := s.pending().Delete(key, nil); err != nil && s.batchErr == nil {
		s.batchErr = err
	}
}

// Commit writes the pending batch and empties it for reuse, also when it fails: a batch
// that could not be built whole is not written at all.
func (s *session) Commit() error {
	if s.batch == nil {
		return nil
	}
	defer s.batch.Reset()
	if err := s.batchErr; err != nil {
		s.batchErr = nil
		return fmt.Errorf("pebble: commit: building the batch: %w", err)
	}
	if s.batch.Empty() {
		return nil
	}
	if err := s.batch.Commit(s.wo); err != nil {
		return fmt.Errorf("pebble: commit: %w", err)
	}
	return nil
}

// NewIterator returns an iterator over every key.
func (s *session) NewIterator() (engine.KVIterator, error) {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return nil, fmt.Errorf("pebble: iterator: %w", err)
	}
	return &iterator{it: it}, nil
}

// Close releases the held value and the pending batch.
func (s *session) Close() error {
	s.h.mu.Lock()
	delete(s.h.sessions, s)
	err := s.release()
	s.h.mu.Unlock()
	if err != nil {
		return fmt.Errorf("pebble: close: %w", err)
	}
	if s.batch != nil {
		err := s.batch.Close()
		s.batch = nil
		if err != nil {
			return fmt.Errorf("pebble: close batch: %w", err)
		}
	}
	return nil
}

// iterator wraps Pebble's; succ is the buffer SeekLE builds the key's successor in, err
// the first error reading a value.
type iterator struct {
	it   *pebble.Iterator
	succ []byte
	err  error
}

// SeekGE positions at the first key ≥ key.
func (i *iterator) SeekGE(key []byte) bool { return i.it.SeekGE(key) }

// SeekLE positions at the last key ≤ key: Pebble's SeekLT of key's successor (key + 0x00).
func (i *iterator) SeekLE(key []byte) bool {
	i.succ = append(append(i.succ[:0], key...), 0)
	return i.it.SeekLT(i.succ)
}

// Next moves to the next key.
func (i *iterator) Next() bool { return i.it.Next() }

// Prev moves to the previous key.
func (i *iterator) Prev() bool { return i.it.Prev() }

// Valid says whether the iterator is at a key.
func (i *iterator) Valid() bool { return i.it.Valid() }

// Key is the current key, valid until the next move.
func (i *iterator) Key() []byte { return i.it.Key() }

// Value is the current value, valid until the next move; nil when it cannot be read, and
// Err then says why.
func (i *iterator) Value() []byte {
	v, err := i.it.ValueAndErr()
	if err != nil {
		if i.err == nil {
			i.err = err
		}
		return nil
	}
	return v
}

// Err is the first error reading a value, or the one that ended the iteration.
func (i *iterator) Err() error {
	if i.err != nil {
		return fmt.Errorf("pebble: iterator value: %w", i.err)
	}
	if err := i.it.Error(); err != nil {
		return fmt.Errorf("pebble: iterator: %w", err)
	}
	return nil
}

// Close releases the iterator.
func (i *iterator) Close() error {
	if err := i.it.Close(); err != nil {
		return fmt.Errorf("pebble: close iterator: %w", err)
	}
	return nil
}
