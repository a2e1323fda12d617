// Package rocksdb is dbperf's embedded RocksDB engine (github.com/linxGnu/grocksdb over
// Debian's librocksdb 7.8.3), a key-value engine (engine.KV) for the db_bench-style
// workload. Options come from engine.KVOptions as db_bench's flags set them (reference
// §4.1); properties are RocksDB's own (GetProperty) and its statistics tickers, enabled
// so that compaction and flush bytes are exact (the compaction stats' text prints GB with
// one decimal). db_bench's CompactFiles-based compact0/compact1 are not in RocksDB's C
// API: CompactLevel compacts the level's key range with CompactRange and says so.
//
// grocksdb is v1.7.14, over cgo. The statistics' text is parsed by hand, since the C API
// has no map properties; they give the exact compaction and flush bytes and the stall
// µs. compact0 and compact1 compact the level's key range to a target level. A session's
// Get, Put, MultiGet and every iterator move are one cgo call each into ops.cc and
// iter.go, and allocate nothing: RocksDB's C++ API is used where its C API copies. The Get
// pins its value in a PinnableSlice the session reuses, as db_bench does, and the handle
// releases every session's pin before it closes the database.
package rocksdb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/linxGnu/grocksdb"

	"github.com/dbperf/dbperf/internal/engine"
)

// Engine opens RocksDB databases.
type Engine struct{}

// New returns the RocksDB engine.
func New() *Engine { return &Engine{} }

// Meta names the engine: embedded, key-value.
func (*Engine) Meta() engine.Meta {
	return engine.Meta{Name: "rocksdb", Kind: engine.KindKV, Embedded: true}
}

// Open opens (or creates) the database in t.Dir/db with the options t.KV.
func (*Engine) Open(ctx context.Context, t engine.Target) (engine.Handle, error) {
	if t.Dir == "" {
		return nil, errors.New("rocksdb: no directory for the database")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("rocksdb: open: %w", err)
	}
	h := &handle{dir: filepath.Join(t.Dir, "db"), sessions: map[*session]struct{}{}}
	if err := h.open(t.KV); err != nil {
		return nil, err
	}
	return h, nil
}

// handle is an open RocksDB database. mu guards db, its options and the C objects that
// live as long as it, against Reopen and Close; operations run under the read lock.
type handle struct {
	dir string

	mu    sync.RWMutex
	db    *grocksdb.DB
	ro    *grocksdb.Options
	cache *grocksdb.Cache
	bbto  *grocksdb.BlockBasedTableOptions
	bloom bool
	opts  engine.KVOptions
	// base: the counters of the databases closed by Reopen, so Properties' cumulative
	// figures keep growing across reopens (statistics restart with every open).
	base counters
	// sessions are the open sessions, whose pinned values are released before the
	// database (and its block cache) is closed.
	sessions map[*session]struct{}
}

var _ engine.KV = (*handle)(nil)

// compression maps dbperf's names onto RocksDB's.
func compression(name string) (grocksdb.CompressionType, error) {
	switch strings.ToLower(name) {
	case "", "snappy":
		return grocksdb.SnappyCompression, nil
	case "none", "no", "disable":
		return grocksdb.NoCompression, nil
	case "lz4":
		return grocksdb.LZ4Compression, nil
	case "lz4hc":
		return grocksdb.LZ4HCCompression, nil
	case "zstd":
		return grocksdb.ZSTDCompression, nil
	}
	return 0, fmt.Errorf("rocksdb: unknown compression %q (none, snappy, lz4, lz4hc, zstd)", name)
}

// options renders o as RocksDB options, as db_bench sets them from its flags.
func (h *handle) options(o engine.KVOptions) (*grocksdb.Options, error) {
	po := grocksdb.NewDefaultOptions()
	po.SetCreateIfMissing(true)
	po.SetMaxOpenFiles(-1) // db_bench --open_files=-1
	po.EnableStatistics()
	if o.WriteBufferSize > 0 {
		po.SetWriteBufferSize(uint64(o.WriteBufferSize))
	}
	if o.MaxWriteBufferNum > 0 {
		po.SetMaxWriteBufferNumber(o.MaxWriteBufferNum)
	}
	if o.TargetFileSizeBase > 0 {
		po.SetTargetFileSizeBase(uint64(o.TargetFileSizeBase))
	}
	if o.MaxBytesForLevelBase > 0 {
		po.SetMaxBytesForLevelBase(uint64(o.MaxBytesForLevelBase))
	}
	if o.LevelMultiplier > 0 {
		po.SetMaxBytesForLevelMultiplier(o.LevelMultiplier)
	}
	numLevels := 7
	if o.NumLevels > 0 {
		numLevels = o.NumLevels
		po.SetNumLevels(o.NumLevels)
	}
	po.SetLevelCompactionDynamicLevelBytes(o.DynamicLevelBytes)
	if o.L0CompactionTrigger > 0 {
		po.SetLevel0FileNumCompactionTrigger(o.L0CompactionTrigger)
	}
	if o.L0SlowdownTrigger > 0 {
		po.SetLevel0SlowdownWritesTrigger(o.L0SlowdownTrigger)
	}
	if o.L0StopTrigger > 0 {
		po.SetLevel0StopWritesTrigger(o.L0StopTrigger)
	}
	if o.MaxBackgroundJobs > 0 {
		po.SetMaxBackgroundJobs(o.MaxBackgroundJobs)
	}
	if o.BytesPerSync > 0 {
		po.SetBytesPerSync(uint64(o.BytesPerSync))
	}
	if o.VectorMemtable {
		po.SetMemtableVectorRep()
		po.SetAllowConcurrentMemtableWrites(false) // the vector memtable has none
	}
	top, err := compression(o.Compression)
	if err != nil {
		return nil, err
	}
	per := make([]grocksdb.CompressionType, numLevels)
	for i := range per {
		per[i] = top
		if o.MinLevelToCompress > 0 && i < o.MinLevelToCompress {
			per[i] = grocksdb.NoCompression
		}
	}
	po.SetCompression(top)
	po.SetCompressionPerLevel(per)
	switch b := strings.ToLower(o.BottommostCompression); b {
	case "", "disable":
		// disable: the bottommost level is compressed as the others (db_bench's
		// --bottommost_compression=disable leaves RocksDB's option unset).
	default:
		bc, err := compression(b)
		if err != nil {
			return nil, err
		}
		po.SetBottommostCompression(bc)
	}
	h.bbto = grocksdb.NewDefaultBlockBasedTableOptions()
	if o.BlockSize > 0 {
		h.bbto.SetBlockSize(o.BlockSize)
	}
	if o.BlockCacheSize > 0 {
		h.cache = grocksdb.NewLRUCache(uint64(o.BlockCacheSize))
		h.bbto.SetBlockCache(h.cache)
	}
	h.bloom = o.BloomBitsPerKey > 0
	if h.bloom {
		h.bbto.SetFilterPolicy(grocksdb.NewBloomFilter(float64(o.BloomBitsPerKey)))
	}
	po.SetBlockBasedTableFactory(h.bbto)
	return po, nil
}

// open opens the database with o; mu must be held (or the handle unshared).
func (h *handle) open(o engine.KVOptions) error {
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		return fmt.Errorf("rocksdb: %w", err)
	}
	po, err := h.options(o)
	if err != nil {
		return err
	}
	db, err := grocksdb.OpenDb(po, h.dir)
	if err != nil {
		h.destroyOptions(po)
		return fmt.Errorf("rocksdb: open %s: %w", h.dir, err)
	}
	h.db, h.ro, h.opts = db, po, o
	return nil
}

func (h *handle) destroyOptions(po *grocksdb.Options) {
	po.Destroy()
	if h.bbto != nil {
		h.bbto.Destroy()
		h.bbto = nil
	}
	if h.cache != nil {
		h.cache.Destroy()
		h.cache = nil
	}
}

// closeLocked closes the database; mu must be held for writing.
func (h *handle) closeLocked() {
	if h.db == nil {
		return
	}
	h.base = h.base.add(readCounters(h.db, h.ro))
	for s := range h.sessions {
		s.ops.release()
	}
	h.db.Close()
	h.db = nil
	h.destroyOptions(h.ro)
	h.ro = nil
}

// Close closes the database.
func (h *handle) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closeLocked()
	return nil
}

// Options are the options in force.
func (h *handle) Options() engine.KVOptions {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.opts
}

// Reopen closes the database and opens it with o.
func (h *handle) Reopen(ctx context.Context, o engine.KVOptions) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("rocksdb: reopen: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closeLocked()
	return h.open(o)
}

// locked runs f with the open database under the read lock.
func (h *handle) locked(f func(db *grocksdb.DB) error) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.db == nil {
		return errors.New("rocksdb: the database is closed")
	}
	return f(h.db)
}

// Info is RocksDB's version (from the LOG file's first lines) and the effective options
// (the OPTIONS file RocksDB writes at every open).
func (h *handle) Info(context.Context) (engine.Info, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.db == nil {
		return engine.Info{}, errors.New("rocksdb: the database is closed")
	}
	info := engine.Info{Version: "unknown", Settings: map[string]string{}, DataDir: h.dir}
	if b, err := os.ReadFile(filepath.Join(h.dir, "LOG")); err == nil {
		for _, line := range strings.SplitN(string(b), "\n", 20) {
			if _, v, ok := strings.Cut(line, "RocksDB version: "); ok {
				info.Version = strings.TrimSpace(v)
				break
			}
		}
	}
	opts, _ := filepath.Glob(filepath.Join(h.dir, "OPTIONS-*"))
	if len(opts) > 0 {
		b, err := os.ReadFile(opts[len(opts)-1])
		if err != nil {
			return info, fmt.Errorf("rocksdb: read %s: %w", opts[len(opts)-1], err)
		}
		section := ""
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			switch {
			case line == "" || strings.HasPrefix(line, "#"):
			case strings.HasPrefix(line, "["):
				section = strings.Trim(line, "[]")
				section = strings.ReplaceAll(section, `"`, "")
			default:
				if k, v, ok := strings.Cut(line, "="); ok {
					info.Settings[section+"."+strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
		}
	}
	info.Settings["dbperf.statistics"] = "enabled (exact compaction and flush bytes; db_bench --statistics=1)"
	return info, nil
}

// Size is the bytes of the database directory's files.
func (h *handle) Size(context.Context) (int64, error) {
	n, err := engine.DirBytes(h.dir)
	if err != nil {
		return 0, fmt.Errorf("rocksdb: size of %s: %w", h.dir, err)
	}
	return n, nil
}

// Flush writes the memtables to L0 and waits.
func (h *handle) Flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("rocksdb: flush: %w", err)
	}
	return h.locked(func(db *grocksdb.DB) error {
		fo := grocksdb.NewDefaultFlushOptions()
		defer fo.Destroy()
		fo.SetWait(true)
		if err := db.Flush(fo); err != nil {
			return fmt.Errorf("rocksdb: flush: %w", err)
		}
		return nil
	})
}

// waitPoll is how often WaitForCompaction reads the properties.
const waitPoll = 100 * time.Millisecond

// WaitForCompaction polls mem-table-flush-pending, num-running-flushes,
// compaction-pending and num-running-compactions until all are 0, twice in a row, as
// db_bench's waitforcompaction does (§4.2; RocksDB 7.8 has no WaitForCompact).
func (h *handle) WaitForCompaction(ctx context.Context) (string, error) {
	start := time.Now()
	polls, quiet := 0, 0
	for {
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("rocksdb: wait for compaction: %w", err)
		}
		busy := false
		err := h.locked(func(db *grocksdb.DB) error {
			for _, p := range []string{"rocksdb.mem-table-flush-pending", "rocksdb.num-running-flushes",
				"rocksdb.compaction-pending", "rocksdb.num-running-compactions"} {
				if v, ok := db.GetIntProperty(p); !ok {
					return fmt.Errorf("rocksdb: property %s is not available", p)
				} else if v > 0 {
					busy = true
				}
			}
			return nil
		})
		if err != nil {
			return "", err
		}
		polls++
		if busy {
			quiet = 0
		} else if quiet++; quiet == 2 {
			return fmt.Sprintf("idle after %.1fs (%d polls every %v of the flush and compaction pending and running properties, all 0 twice)",
				time.Since(start).Seconds(), polls, waitPoll), nil
		}
		t := time.NewTimer(waitPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("rocksdb: wait for compaction: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// CompactLevel compacts the key range of level's files into the next non-empty level
// below it (the last level when none is): CompactRange over that range with that target
// level. db_bench's compact0/compact1 use CompactFiles, which RocksDB's C API (and so
// grocksdb) does not offer; CompactRange also rewrites the overlapping files of the
// levels in between, which are empty or hold that range only. detail says what it did.
func (h *handle) CompactLevel(ctx context.Context, level int) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("rocksdb: compact L%d: %w", level, err)
	}
	var detail string
	err := h.locked(func(db *grocksdb.DB) error {
		files := db.GetLiveFilesMetaData()
		var lo, hi []byte
		n, last := 0, h.numLevels()-1
		target := -1
		for _, f := range files {
			switch {
			case f.Level == level:
				n++
				if lo == nil || string(f.SmallestKey) < string(lo) {
					lo = f.SmallestKey
				}
				if hi == nil || string(f.LargestKey) > string(hi) {
					hi = f.LargestKey
				}
			case f.Level > level && (target < 0 || f.Level < target):
				target = f.Level
			}
		}
		if n == 0 {
			detail = fmt.Sprintf("L%d has no files", level)
			return nil
		}
		if target < 0 {
			target = last
		}
		opt := grocksdb.NewCompactRangeOptions()
		defer opt.Destroy()
		opt.SetChangeLevel(true)
		opt.SetTargetLevel(int32(target))
		db.CompactRangeOpt(grocksdb.Range{Start: lo, Limit: append(append([]byte(nil), hi...), 0)}, opt)
		detail = fmt.Sprintf("compacted the key range of L%d's %d files into L%d (CompactRange to a target level; RocksDB's C API has no CompactFiles)", level, n, target)
		return nil
	})
	return detail, err
}

// numLevels is the number of levels the database was opened with.
func (h *handle) numLevels() int {
	if h.opts.NumLevels > 0 {
		return h.opts.NumLevels
	}
	return 7
}

// CompactAll compacts the whole key range, the bottommost level included.
func (h *handle) CompactAll(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("rocksdb: compact all: %w", err)
	}
	return h.locked(func(db *grocksdb.DB) error {
		opt := grocksdb.NewCompactRangeOptions()
		defer opt.Destroy()
		opt.SetBottommostLevelCompaction(grocksdb.KForce)
		db.CompactRangeOpt(grocksdb.Range{}, opt)
		return nil
	})
}
