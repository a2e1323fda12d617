package rocksdb

/*
#cgo CXXFLAGS: -std=c++17 -O2
#cgo LDFLAGS: -lrocksdb -lstdc++
#cgo noescape dbperf_get
#cgo nocallback dbperf_get
#cgo noescape dbperf_put
#cgo nocallback dbperf_put
#cgo nocallback dbperf_ops_release
#cgo noescape dbperf_multiget
#cgo nocallback dbperf_multiget
#include <stdlib.h>
#include "ops.h"
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/linxGnu/grocksdb"
)

// A session's Get and Put are one cgo call each into ops.cc, and allocate nothing.
// (DB::Put also builds a new WriteBatch for every key; dbperf_put refills one, as
// db_bench's writers do.)
//
// grocksdb (v1.7.14) and the C API under it have no Get a benchmark can use as db_bench
// does: rocksdb_get copies the value into a malloc'd buffer that grocksdb wraps in a Go
// allocation and frees in a second cgo call; rocksdb_get_pinned allocates a new
// PinnableSlice per call, which the caller copies out of before destroying it. db_bench
// reuses one PinnableSlice and never touches the value. dbperf_get does the same through
// RocksDB's C++ API: the value stays pinned in the block cache (or the memtable's copy)
// until the session's next Get releases it, so a Get reads no more of the value than the
// caller does. Measured in one process over a cached tree, alternating in 100 ms slices:
// 6.02 µs of CPU per Get through rocksdb_get_pinned with the copy, 5.70 pinned, 5.28 for
// the same Gets in a C++ loop (docs/dbbench.md, side by side with db_bench). No maintained Go
// binding offers it, so it is written here.
//
// The noescape and nocallback directives tell cgo that these functions keep no Go
// pointer and never call back into Go: without them each call moved its result variables
// to the heap (TestNoAllocations).
//
// ops.cc needs the C handles behind grocksdb's DB, ReadOptions and WriteOptions, which
// grocksdb keeps unexported as each struct's first field (`c *C.rocksdb_t` and so on in
// v1.7.14, the version go.mod pins to match Debian's librocksdb 7.8.3), and it reads the
// C++ objects at the start of those C handles. TestCHandles checks both against
// grocksdb's own calls, so a grocksdb or RocksDB that moves them fails the tests, not a
// benchmark.
func cDB(db *grocksdb.DB) *C.rocksdb_t { return *(**C.rocksdb_t)(unsafe.Pointer(db)) }

func cReadOptions(ro *grocksdb.ReadOptions) *C.rocksdb_readoptions_t {
	return *(**C.rocksdb_readoptions_t)(unsafe.Pointer(ro))
}

func cWriteOptions(wo *grocksdb.WriteOptions) *C.rocksdb_writeoptions_t {
	return *(**C.rocksdb_writeoptions_t)(unsafe.Pointer(wo))
}

// bytesPtr is b's first byte for C, nil when b is empty.
func bytesPtr(b []byte) *C.char {
	if len(b) == 0 {
		return nil
	}
	return (*C.char)(unsafe.Pointer(&b[0]))
}

// ops is a session's C++ state (ops.cc): the PinnableSlice its Gets reuse, which holds
// the last value read, and the WriteBatch its Puts reuse.
type ops struct{ c *C.dbperf_ops }

func newOps() ops { return ops{c: C.dbperf_ops_new()} }

// release unpins the value the last get returned (a no-op when there is none).
func (o ops) release() { C.dbperf_ops_release(o.c) }

func (o ops) free() { C.dbperf_ops_free(o.c) }

// cError turns an error RocksDB or ops.cc malloc'd into a Go error and frees it.
func cError(cErr *C.char) error {
	msg := C.GoString(cErr)
	C.free(unsafe.Pointer(cErr))
	return errors.New(msg)
}

// get reads key's value, releasing what o pinned before. The value is RocksDB's memory:
// valid until o's next get or release.
func get(db *grocksdb.DB, ro *grocksdb.ReadOptions, key []byte, o ops) (v []byte, found bool, err error) {
	var val *C.char
	var n C.size_t
	var cErr *C.char
	ok := C.dbperf_get(cDB(db), cReadOptions(ro), bytesPtr(key), C.size_t(len(key)), o.c, &val, &n, &cErr)
	if cErr != nil {
		return nil, false, cError(cErr)
	}
	if ok == 0 {
		return nil, false, nil
	}
	return cBytes(val, n), true, nil
}

// cBytes is C memory as a slice (not a copy); empty when n is 0.
func cBytes(p *C.char, n C.size_t) []byte {
	if n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n))
}

// multiKeys is a session's buffer for MultiGet: the keys packed one after the other and
// their lengths (Go memory without pointers, which cgo lets C read during the call).
type multiKeys struct {
	keys []byte
	lens []C.size_t
}

// multiGet reads keys with one MultiGet and returns how many were found and their
// values' total size.
func multiGet(db *grocksdb.DB, ro *grocksdb.ReadOptions, keys [][]byte, o ops, m *multiKeys) (found int, n int64, err error) {
	m.keys, m.lens = m.keys[:0], m.lens[:0]
	for _, k := range keys {
		m.keys = append(m.keys, k...)
		m.lens = append(m.lens, C.size_t(len(k)))
	}
	if len(keys) == 0 {
		return 0, 0, nil
	}
	var bytes C.size_t
	var cErr *C.char
	f := C.dbperf_multiget(cDB(db), cReadOptions(ro), bytesPtr(m.keys), &m.lens[0], C.size_t(len(keys)), o.c, &bytes, &cErr)
	if cErr != nil {
		return 0, 0, cError(cErr)
	}
	return int(f), int64(bytes), nil
}

// put writes key through o's batch with its perf context off, in one cgo call and
// without allocating (grocksdb's Put allocates its error variable, RocksDB's DB::Put a
// new batch, and turning the perf context off was a second cgo call).
func put(db *grocksdb.DB, wo *grocksdb.WriteOptions, key, value []byte, o ops) error {
	var cErr *C.char
	C.dbperf_put(cDB(db), cWriteOptions(wo), bytesPtr(key), C.size_t(len(key)), bytesPtr(value), C.size_t(len(value)), o.c, &cErr)
	if cErr != nil {
		return cError(cErr)
	}
	return nil
}
