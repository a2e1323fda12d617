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
using ROCKSDB_NAMESPACE::WriteBatch;
using ROCKSDB_NAMESPACE::WriteOptions;

// The C API's handles (rocksdb/c.cc of 7.8.3) begin with the C++ object they wrap:
// struct rocksdb_t { DB* rep; }, struct rocksdb_readoptions_t { ReadOptions rep; ... } and
// struct rocksdb_writeoptions_t { WriteOptions rep; }. TestCHandles checks that a Get and
// a Put here read and write what the C API's do.
static DB* cxxDB(rocksdb_t* db) { return *reinterpret_cast<DB**>(db); }
static const ReadOptions& cxxReadOptions(const rocksdb_readoptions_t* ro) {
  return *reinterpret_cast<const ReadOptions*>(ro);
}
static const WriteOptions& cxxWriteOptions(const rocksdb_writeoptions_t* wo) {
  return *reinterpret_cast<const WriteOptions*>(wo);
}

struct dbperf_ops {
  PinnableSlice value;
  WriteBatch batch;
};

dbperf_ops* dbperf_ops_new(void) { return new dbperf_ops(); }
void dbperf_ops_release(dbperf_ops* ops) { ops->value.Reset(); }
void dbperf_ops_free(dbperf_ops* ops) { delete ops; }

static void setError(const Status& s, char** errptr) {
  if (!s.ok()) {
    *errptr = strdup(s.ToString().c_str());
  }
}

int dbperf_get(rocksdb_t* db, const rocksdb_readoptions_t* ro, const char* key, size_t klen,
               dbperf_ops* ops, const char** val, size_t* vlen, char** errptr) {
  ROCKSDB_NAMESPACE::SetPerfLevel(ROCKSDB_NAMESPACE::kDisable);
  ops->value.Reset();
  DB* d = cxxDB(db);
  Status s = d->Get(cxxReadOptions(ro), d->DefaultColumnFamily(), Slice(key, klen), &ops->value);
  if (s.IsNotFound()) {
    return 0;
  }
  if (!s.ok()) {
    setError(s, errptr);
    return 0;
  }
  *val = ops->value.data();
  *vlen = ops->value.size();
  return 1;
}

// DB::Put builds a new WriteBatch (a malloc'd buffer) for every key; db_bench's writers
// clear and refill one. This does the same.
void dbperf_put(rocksdb_t* db, const rocksdb_writeoptions_t* wo, const char* key, size_t klen,
                const char* val, size_t vlen, dbperf_ops* ops, char** errptr) {
  ROCKSDB_NAMESPACE::SetPerfLevel(ROCKSDB_NAMESPACE::kDisable);
  ops->batch.Clear();
  Status s = ops->batch.Put(Slice(key, klen), Slice(val, vlen));
  if (s.ok()) {
    s = cxxDB(db)->Write(cxxWriteOptions(wo), &ops->batch);
  }
  setError(s, errptr);
}
