package rocksdb

/*
#cgo noescape dbperf_iter_move
#cgo nocallback dbperf_iter_move
#include <stdlib.h>
#include "ops.h"
*/
import "C"

import (
	"fmt"

	"github.com/linxGnu/grocksdb"
)

// iterator is RocksDB's, driven through the C API directly: one cgo call per move, which
// also reads the key and value it lands on (ops.cc), and no allocation per move. Its Key
// and Value point into RocksDB's memory until the next move. It holds the handle's read
// lock from its creation to its Close (RocksDB's iterator pins the database's state).
type iterator struct {
	h     *handle
	c     *C.rocksdb_iterator_t
	k, v  []byte
	valid bool
}

// newIterator creates an iterator on h's open database; the caller holds h's read lock,
// which the iterator's Close releases.
func newIterator(h *handle, ro *grocksdb.ReadOptions) *iterator {
	return &iterator{h: h, c: C.rocksdb_create_iterator(cDB(h.db), cReadOptions(ro))}
}

const (
	moveSeek = iota
	moveSeekForPrev
	moveNext
	movePrev
)

func (i *iterator) move(what int, key []byte) bool {
	var k, v *C.char
	var kn, vn C.size_t
	i.valid = C.dbperf_iter_move(i.c, C.int(what), bytesPtr(key), C.size_t(len(key)), &k, &kn, &v, &vn) != 0
	if !i.valid {
		i.k, i.v = nil, nil
		return false
	}
	i.k = cBytes(k, kn)
	i.v = cBytes(v, vn)
	return true
}

func (i *iterator) SeekGE(key []byte) bool { return i.move(moveSeek, key) }
func (i *iterator) SeekLE(key []byte) bool { return i.move(moveSeekForPrev, key) }
func (i *iterator) Next() bool             { return i.move(moveNext, nil) }
func (i *iterator) Prev() bool             { return i.move(movePrev, nil) }
func (i *iterator) Valid() bool            { return i.valid }
func (i *iterator) Key() []byte            { return i.k }
func (i *iterator) Value() []byte          { return i.v }

func (i *iterator) Err() error {
	var cErr *C.char
	C.rocksdb_iter_get_error(i.c, &cErr)
	if cErr != nil {
		return fmt.Errorf("rocksdb: iterator: %w", cError(cErr))
	}
	return nil
}

func (i *iterator) Close() error {
	if i.c != nil {
		C.rocksdb_iter_destroy(i.c)
		i.c, i.k, i.v, i.valid = nil, nil, nil, false
		i.h.mu.RUnlock()
	}
	return nil
}
