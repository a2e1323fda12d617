package engine

import (
	"context"
	"errors"
	"fmt"
)

// KV is an open key-value database: an embedded LSM engine (RocksDB, Pebble) that the
// db_bench-style workload drives. It is safe for concurrent use; the per-worker state
// (buffers, the pending batch, iterators) lives in the KVSession each worker opens.
// Engine.Open returns a KV for engines of KindKV; Target.KV carries its options.
//
// The LSM-shape operations (Flush, WaitForCompaction, CompactLevel, CompactAll) are what
// db_bench's patched shape-control commands do (reference §4.2). An engine that cannot do
// one returns an error wrapping ErrUnsupported that says why, and the step records that it
// was skipped with the reason; it never pretends.
type KV interface {
	Handle
	// NewKVSession opens one worker's session.
	NewKVSession(ctx context.Context) (KVSession, error)
	// Reopen closes the database and opens it again with options o (every session must be
	// closed): db_bench runs every job as a new process with that job's options (the
	// vector memtable and no WAL for fillseq_disable_wal, a skip list after), so a step
	// whose options differ from the last one's reopens. Options() are those in force.
	Reopen(ctx context.Context, o KVOptions) error
	Options() KVOptions
	// Flush writes the memtables (active and immutable) to L0 files and returns when the
	// flush is done (RocksDB Flush with wait=true).
	Flush(ctx context.Context) error
	// WaitForCompaction returns when no flush or compaction is pending or running (the
	// engine's wait-for-compact, or polling its properties until all are zero, twice).
	// detail says how it waited.
	WaitForCompaction(ctx context.Context) (detail string, err error)
	// CompactLevel compacts every file of level into the next non-empty level below it
	// (the last level when none is), as db_bench's compact0 (level 0) and compact1 (the
	// first non-empty level > 0) do with CompactFiles: output files of
	// TargetFileSizeBase, compressed as that level is configured. detail says which files
	// went where. An empty level is not an error.
	CompactLevel(ctx context.Context, level int) (detail string, err error)
	// CompactAll compacts the whole key range down to the last level.
	CompactAll(ctx context.Context) error
	// Properties reads the engine's counters and the LSM tree's shape now. Figures the
	// engine does not expose are Unknown (-1), never 0.
	Properties(ctx context.Context) (KVProps, error)
}

// ErrUnsupported is wrapped by errors of operations an engine does not have.
var ErrUnsupported = errors.New("not supported by this engine")

// Unsupported returns an error wrapping ErrUnsupported: "<engine>: <what>: not supported
// by this engine (<why>)".
func Unsupported(engine, what, why string) error {
	return fmt.Errorf("%s: %s: %w (%s)", engine, what, ErrUnsupported, why)
}

// AsKV returns h as a KV, or an error naming the engine kind a KV workload needs.
func AsKV(h Handle) (KV, error) {
	kv, ok := h.(KV)
	if !ok {
		return nil, fmt.Errorf("this workload needs a key-value engine (rocksdb, pebble), not %T", h)
	}
	return kv, nil
}

// AsSQL returns h as a SQL handle, or an error naming the engine kind a SQL workload needs.
func AsSQL(h Handle) (SQL, error) {
	s, ok := h.(SQL)
	if !ok {
		return nil, fmt.Errorf("this workload needs a SQL engine (sqlite, postgres, mariadb), not %T", h)
	}
	return s, nil
}

// KVSession is one worker's view of a KV. It is not safe for concurrent use. Byte slices
// passed in are read only during the call; slices returned stay valid until the session's
// next call.
type KVSession interface {
	// Get reads key's value; found is false when the key does not exist.
	Get(key []byte) (value []byte, found bool, err error)
	// MultiGet reads keys in one call (RocksDB MultiGet; a loop of Gets where the
	// engine has none) and returns how many were found and their values' total size.
	MultiGet(keys [][]byte) (found int, valueBytes int64, err error)
	// Put writes one key.
	Put(key, value []byte) error
	// Delete deletes one key.
	Delete(key []byte) error
	// BatchPut and BatchDelete add to the session's pending write batch; Commit writes it
	// atomically and empties it.
	BatchPut(key, value []byte)
	BatchDelete(key []byte)
	Commit() error
	// NewIterator returns an iterator over the whole key space. Close it before the
	// session closes.
	NewIterator() (KVIterator, error)
	Close() error
}

// KVIterator walks keys in order. Key and Value are valid until the next move.
type KVIterator interface {
	// SeekGE positions at the first key ≥ key; SeekLE at the last key ≤ key (RocksDB
	// SeekForPrev).
	SeekGE(key []byte) bool
	SeekLE(key []byte) bool
	Next() bool
	Prev() bool
	Valid() bool
	Key() []byte
	Value() []byte
	Err() error
	Close() error
}

// Unknown marks a KVProps figure the engine does not expose.
const Unknown = -1

// KVLevel is one level of the LSM tree.
type KVLevel struct {
	Level int   `json:"level"`
	Files int64 `json:"files"`
	Bytes int64 `json:"bytes"`
}

// KVProps are a KV engine's counters and its LSM tree's shape at one moment. Counters are
// cumulative since the database was opened; a figure the engine does not expose is
// Unknown (-1).
type KVProps struct {
	// Memtables.
	MemtableEntries    int64 `json:"memtable_entries"`
	MemtableBytes      int64 `json:"memtable_bytes"`
	ImmutableMemtables int64 `json:"immutable_memtables"`
	// Levels lists every level 0..the engine's last, empty ones included.
	Levels []KVLevel `json:"levels"`
	// Background work now.
	PendingCompactionBytes int64 `json:"pending_compaction_bytes"`
	FlushPending           bool  `json:"flush_pending"`
	CompactionPending      bool  `json:"compaction_pending"`
	RunningFlushes         int64 `json:"running_flushes"`
	RunningCompactions     int64 `json:"running_compactions"`
	// Write stalls: how many writes were stalled or stopped, and for how long in total.
	StallCount  int64 `json:"stall_count"`
	StallMicros int64 `json:"stall_micros"`
	// Bytes the compactions read and wrote, and the flushes wrote.
	CompactionBytesRead    int64 `json:"compaction_bytes_read"`
	CompactionBytesWritten int64 `json:"compaction_bytes_written"`
	FlushBytesWritten      int64 `json:"flush_bytes_written"`
	// CPU time the compactions used, and their wall time (RocksDB's compaction stats).
	CompactionCPUMicros  int64 `json:"compaction_cpu_micros"`
	CompactionWallMicros int64 `json:"compaction_wall_micros"`
	// LiveBytes is the size of the live SST files (db_bench lsm_sz).
	LiveBytes int64 `json:"live_bytes"`
}

// KVOptions open a KV engine: db_bench's LSM options (reference §4.1 "Common db_bench
// flags"). Zero values mean the engine's default. Sizes are bytes.
type KVOptions struct {
	// Compression of every level ("none", "snappy", "lz4", "zstd"); BottommostCompression
	// of the last level ("" = as Compression, "disable" = none there either).
	Compression           string
	BottommostCompression string
	// MinLevelToCompress: levels above it are not compressed (-1: every level).
	MinLevelToCompress int
	WriteBufferSize    int64
	MaxWriteBufferNum  int
	TargetFileSizeBase int64
	// MaxBytesForLevelBase is L1's target size; LevelMultiplier the fanout.
	MaxBytesForLevelBase int64
	LevelMultiplier      float64
	NumLevels            int
	// DynamicLevelBytes: level_compaction_dynamic_level_bytes.
	DynamicLevelBytes bool
	// L0 triggers: compaction, slowdown, stop (file counts).
	L0CompactionTrigger int
	L0SlowdownTrigger   int
	L0StopTrigger       int
	MaxBackgroundJobs   int
	BlockCacheSize      int64
	BlockSize           int
	// BloomBitsPerKey: 0 = no bloom filter.
	BloomBitsPerKey int
	BytesPerSync    int64
	// VectorMemtable uses RocksDB's vector memtable (fillseq_disable_wal); an engine
	// without one keeps its own and says so in Info's settings.
	VectorMemtable bool
	// DisableWAL: writes skip the write-ahead log (db_bench --disable_wal; RocksDB per
	// write, Pebble for the whole open database).
	DisableWAL bool
	// Sync: every write waits for its WAL record to reach the disk (the reference runs
	// --sync=0).
	Sync bool
}
