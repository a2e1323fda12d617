// ops.h: the point operations dbperf calls through cgo, one call each (ops.cc).
#ifndef DBPERF_ROCKSDB_OPS_H
#define DBPERF_ROCKSDB_OPS_H

#include <stddef.h>
#include "rocksdb/c.h"

#ifdef __cplusplus
extern "C" {
#endif

// A session's pinned value: a RocksDB PinnableSlice reused by every Get.
typedef struct dbperf_pin dbperf_pin;
dbperf_pin* dbperf_pin_new(void);
void dbperf_pin_release(dbperf_pin* pin);
void dbperf_pin_free(dbperf_pin* pin);

// dbperf_get releases the pin's previous value, then reads key into it with the perf
// context off: 1 and the value (*val, *vlen: RocksDB's memory, valid until the pin is
// released) when found, 0 when not, 0 and *errptr (malloc'd) on an error.
int dbperf_get(rocksdb_t* db, const rocksdb_readoptions_t* ro, const char* key, size_t klen,
               dbperf_pin* pin, const char** val, size_t* vlen, char** errptr);

// dbperf_put is rocksdb_put with the perf context off first.
void dbperf_put(rocksdb_t* db, const rocksdb_writeoptions_t* wo, const char* key, size_t klen,
                const char* val, size_t vlen, char** errptr);

#ifdef __cplusplus
}
#endif

#endif
