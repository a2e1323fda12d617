// ops.h: the point operations dbperf calls through cgo, one call each (ops.cc).
#ifndef DBPERF_ROCKSDB_OPS_H
#define DBPERF_ROCKSDB_OPS_H

#include <stddef.h>
#include "rocksdb/c.h"

#ifdef __cplusplus
extern "C" {
#endif

// A session's C++ state: the PinnableSlice every Get reuses and the WriteBatch every
// Put reuses, as db_bench's reader and writer threads do.
typedef struct dbperf_ops dbperf_ops;
dbperf_ops* dbperf_ops_new(void);
void dbperf_ops_release(dbperf_ops* ops);  // unpins the last Get's value
void dbperf_ops_free(dbperf_ops* ops);

// dbperf_get releases the previous value, then reads key with the perf context off: 1
// and the value (*val, *vlen: RocksDB's memory, valid until the next release) when
// found, 0 when not, 0 and *errptr (malloc'd) on an error.
int dbperf_get(rocksdb_t* db, const rocksdb_readoptions_t* ro, const char* key, size_t klen,
               dbperf_ops* ops, const char** val, size_t* vlen, char** errptr);

// dbperf_put writes key through the reused batch with the perf context off.
void dbperf_put(rocksdb_t* db, const rocksdb_writeoptions_t* wo, const char* key, size_t klen,
                const char* val, size_t vlen, dbperf_ops* ops, char** errptr);

// dbperf_multiget reads n keys (packed one after the other in keys, klens[i] bytes each)
// with one MultiGet of the perf context off, into PinnableSlices the session reuses, and
// returns how many were found and (*bytes) their values' total size; 0 and *errptr
// (malloc'd) on an error other than a missing key.
int dbperf_multiget(rocksdb_t* db, const rocksdb_readoptions_t* ro, const char* keys,
                    const size_t* klens, size_t n, dbperf_ops* ops, size_t* bytes, char** errptr);

// dbperf_iter_move moves it (what: 0 seek, 1 seek for prev, 2 next, 3 prev; a seek with
// the perf context off first) and returns whether it is valid, with the key and value it
// is then on (RocksDB's memory, valid until the next move).
int dbperf_iter_move(rocksdb_iterator_t* it, int what, const char* key, size_t klen,
                     const char** k, size_t* klen_out, const char** v, size_t* vlen_out);

#ifdef __cplusplus
}
#endif

#endif
