// ops.cc: Get through RocksDB's C++ API, which its C API does not offer in the form a
// benchmark needs (see get.go), and Put in one call with the perf context off.
#include "ops.h"

#include <cstdlib>
#include <cstring>
#include <vector>

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
  // MultiGet's keys, values and statuses, reused batch after batch.
  std::vector<Slice> keys;
  std::vector<PinnableSlice> values;
  std::vector<Status> statuses;
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

// db_bench's multireadrandom calls this MultiGet with PinnableSlices it reuses; grocksdb's
// MultiGet allocates C arrays, a copy of every value and a Go Slice for each.
int dbperf_multiget(rocksdb_t* db, const rocksdb_readoptions_t* ro, const char* keys,
                    const size_t* klens, size_t n, dbperf_ops* ops, size_t* bytes, char** errptr) {
  ROCKSDB_NAMESPACE::SetPerfLevel(ROCKSDB_NAMESPACE::kDisable);
  ops->keys.resize(n);
  ops->values.resize(n);
  ops->statuses.resize(n);
  const char* p = keys;
  for (size_t i = 0; i < n; i++) {
    ops->keys[i] = Slice(p, klens[i]);
    p += klens[i];
    ops->values[i].Reset();
  }
  DB* d = cxxDB(db);
  d->MultiGet(cxxReadOptions(ro), d->DefaultColumnFamily(), n, ops->keys.data(), ops->values.data(),
              ops->statuses.data(), false);
  int found = 0;
  size_t total = 0;
  Status bad;
  for (size_t i = 0; i < n; i++) {
    if (ops->statuses[i].ok()) {
      found++;
      total += ops->values[i].size();
    } else if (!ops->statuses[i].IsNotFound() && bad.ok()) {
      bad = ops->statuses[i];
    }
    ops->values[i].Reset();
  }
  if (!bad.ok()) {
    setError(bad, errptr);
    return 0;
  }
  *bytes = total;
  return found;
}

// One cgo call per iterator move: grocksdb makes one for the move, one for Valid and one
// each for Key and Value, and allocates a Slice for each of those two.
int dbperf_iter_move(rocksdb_iterator_t* it, int what, const char* key, size_t klen,
                     const char** k, size_t* klen_out, const char** v, size_t* vlen_out) {
  switch (what) {
    case 0:
      ROCKSDB_NAMESPACE::SetPerfLevel(ROCKSDB_NAMESPACE::kDisable);
      rocksdb_iter_seek(it, key, klen);
      break;
    case 1:
      ROCKSDB_NAMESPACE::SetPerfLevel(ROCKSDB_NAMESPACE::kDisable);
      rocksdb_iter_seek_for_prev(it, key, klen);
      break;
    case 2:
      rocksdb_iter_next(it);
      break;
    default:
      rocksdb_iter_prev(it);
  }
  if (!rocksdb_iter_valid(it)) {
    return 0;
  }
  *k = rocksdb_iter_key(it, klen_out);
  *v = rocksdb_iter_value(it, vlen_out);
  return 1;
}
