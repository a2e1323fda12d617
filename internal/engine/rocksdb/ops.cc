// ops.cc: Get through RocksDB's C++ API, which its C API does not offer in the form a
// benchmark needs (see get.go), and Put in one call with the perf context off.
#include "ops.h"

#include <cstdlib>
#include <cstring>

#include "rocksdb/db.h"
#include "rocksdb/perf_level.h"

using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

// The C API's handles (rocksdb/c.cc of 7.8.3) begin with the C++ object they wrap:
// struct rocksdb_t { DB* rep; } and struct rocksdb_readoptions_t { ReadOptions rep; ... }.
// TestCHandles checks that a Get here reads what the C API's reads.
static DB* cxxDB(rocksdb_t* db) { return *reinterpret_cast<DB**>(db); }
static const ReadOptions& cxxReadOptions(const rocksdb_readoptions_t* ro) {
  return *reinterpret_cast<const ReadOptions*>(ro);
}

struct dbperf_pin {
  PinnableSlice value;
};

dbperf_pin* dbperf_pin_new(void) { return new dbperf_pin(); }
void dbperf_pin_release(dbperf_pin* pin) { pin->value.Reset(); }
void dbperf_pin_free(dbperf_pin* pin) { delete pin; }

int dbperf_get(rocksdb_t* db, const rocksdb_readoptions_t* ro, const char* key, size_t klen,
               dbperf_pin* pin, const char** val, size_t* vlen, char** errptr) {
  ROCKSDB_NAMESPACE::SetPerfLevel(ROCKSDB_NAMESPACE::kDisable);
  pin->value.Reset();
  DB* d = cxxDB(db);
  Status s = d->Get(cxxReadOptions(ro), d->DefaultColumnFamily(), Slice(key, klen), &pin->value);
  if (s.IsNotFound()) {
    return 0;
  }
  if (!s.ok()) {
    *errptr = strdup(s.ToString().c_str());
    return 0;
  }
  *val = pin->value.data();
  *vlen = pin->value.size();
  return 1;
}

void dbperf_put(rocksdb_t* db, const rocksdb_writeoptions_t* wo, const char* key, size_t klen,
                const char* val, size_t vlen, char** errptr) {
  ROCKSDB_NAMESPACE::SetPerfLevel(ROCKSDB_NAMESPACE::kDisable);
  rocksdb_put(db, wo, key, klen, val, vlen, errptr);
}
