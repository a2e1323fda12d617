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

#ifdef __cplusplus
}
#endif

#endif
