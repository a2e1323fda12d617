// Package pebble is dbperf's embedded Pebble engine (github.com/cockroachdb/pebble/v2, pure
// Go), a key-value engine (engine.KV) for the db_bench-style workload. It sits beside the
// rocksdb engine so one workload compares two LSM implementations. Where Pebble has no
// equivalent of a RocksDB option or figure, the engine says so in its settings (options)
// or reports the figure as engine.Unknown (properties), never a made-up value.
//
// Options are mapped from engine.KVOptions; what Pebble lacks is noted in its settings
// (no LZ4, so MinLZ; no slowdown trigger; no vector memtable). Properties come from
// DB.Metrics and a write-stall listener. compact0 and compact1 are DB.Compact of the
// level's key range. A Get returns Pebble's own value; its closer is held until the
// session's next Get, and closed by the handle before a close or a reopen (Pebble refuses
// to close over an open Get).
package pebble

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable/block"

	"github.com/dbperf/dbperf/internal/engine"
)

// modulePath is the Go module whose version Info reports.
const modulePath = "github.com/cockroachdb/pebble/v2"

// goModVersion is modulePath's version in go.mod, reported when the binary carries no
// module information (test binaries do not list their dependencies); a test keeps it
// equal to go.mod's.
const goModVersion = "v2.1.7"

// Engine opens Pebble databases.
type Engine struct{}

// New returns the Pebble engine.
func New() *Engine { return &Engine{} }

// Meta names the engine: embedded, key-value.
func (*Engine) Meta() engine.Meta {
	return engine.Meta{Name: "pebble", Kind: engine.KindKV, Embedded: true}
}

// Open opens (or creates) the database in t.Dir/db with the options t.KV.
func (*Engine) Open(ctx context.Context, t engine.Target) (engine.Handle, error) {
	if t.Dir == "" {
		return nil, errors.New("pebble: no directory for the database")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pebble: open: %w", err)
	}
	h := &handle{dir: filepath.Join(t.Dir, "db"), sessions: map[*session]struct{}{}}
	if err := h.open(t.KV); err != nil {
		return nil, err
	}
	return h, nil
}

// handle is an open Pebble database. mu guards db and the options against Reopen; the
// operations themselves run without it (Pebble's DB is safe for concurrent use).
type handle struct {
	dir string

	mu    sync.RWMutex
	db    *pebble.DB
	opts  engine.KVOptions
	notes []string // what of opts Pebble could not do, and what it did instead
	popts *pebble.Options

	// Write stalls reported by Pebble's event listener since the database was (re)opened,
	// like the counters of Pebble's metrics.
	stallCount   atomic.Int64
	stallMicros  atomic.Int64
	stallBeginNs atomic.Int64 // start of the stall in progress (0: none)

	// sessions are the open sessions, whose held values are released before the database
	// is closed (closeLocked).
	sessions map[*session]struct{}
}

var _ engine.KV = (*handle)(nil)

// compression maps dbperf's compression names onto Pebble's profiles. Pebble has no LZ4:
// lz4 (db_bench's default) becomes MinLZ, the fastest LZ-class compressor Pebble has, and
// the settings say so.
func compression(name string) (*block.CompressionProfile, string, error) {
	switch strings.ToLower(name) {
	case "", "snappy":
		return block.SnappyCompression, "", nil
	case "none", "disable", "no":
		return block.NoCompression, "", nil
	case "zstd":
		return block.ZstdCompression, "", nil
	case "lz4", "lz4hc":
		return block.MinLZCompression, name + ": Pebble has no LZ4, MinLZ (its fastest LZ compressor) is used", nil
	case "minlz":
		return block.MinLZCompression, "", nil
	}
	return nil, "", fmt.Errorf("pebble: unknown compression %q (none, snappy, lz4, zstd, minlz)", name)
}

// options renders o as Pebble options, with notes for what Pebble cannot do as asked.
func (h *handle) options(o engine.KVOptions) (*pebble.Options, []string, error) {
	var notes []string
	po := &pebble.Options{}
	if o.WriteBufferSize > 0 {
		po.MemTableSize = uint64(o.WriteBufferSize)
	}
	if o.MaxWriteBufferNum > 0 {
		po.MemTableStopWritesThreshold = max(o.MaxWriteBufferNum, 2)
		if o.MaxWriteBufferNum < 2 {
			notes = append(notes, fmt.Sprintf("max_write_buffer_number=%d: Pebble needs at least 2 memtables, 2 is used", o.MaxWriteBufferNum))
		}
	}
	if o.L0CompactionTrigger > 0 {
		po.L0CompactionThreshold = o.L0CompactionTrigger
	}
	if o.L0StopTrigger > 0 {
		po.L0StopWritesThreshold = o.L0StopTrigger
	}
	if o.L0SlowdownTrigger > 0 {
		notes = append(notes, fmt.Sprintf("l0_slowdown_trigger=%d: Pebble has no slowdown trigger (it only stops writes)", o.L0SlowdownTrigger))
	}
	if o.MaxBytesForLevelBase > 0 {
		po.LBaseMaxBytes = o.MaxBytesForLevelBase
	}
	if o.LevelMultiplier > 0 {
		po.Experimental.LevelMultiplier = int(o.LevelMultiplier + 0.5)
		if float64(po.Experimental.LevelMultiplier) != o.LevelMultiplier {
			notes = append(notes, fmt.Sprintf("level_multiplier=%g: Pebble takes whole numbers, %d is used", o.LevelMultiplier, po.Experimental.LevelMultiplier))
		}
	}
	if o.NumLevels > 0 && o.NumLevels != len(po.Levels) {
		notes = append(notes, fmt.Sprintf("num_levels=%d: Pebble always has %d levels", o.NumLevels, len(po.Levels)))
	}
	if o.DynamicLevelBytes {
		notes = append(notes, "level_compaction_dynamic_level_bytes: Pebble always sizes levels from the bottom (as RocksDB's dynamic level bytes)")
	}
	if o.MaxBackgroundJobs > 0 {
		n := max(o.MaxBackgroundJobs-1, 1) // one of RocksDB's jobs is the flush
		po.CompactionConcurrencyRange = func() (int, int) { return 1, n }
	}
	if o.BlockCacheSize > 0 {
		po.CacheSize = o.BlockCacheSize
	}
	if o.BytesPerSync > 0 {
		po.BytesPerSync = int(o.BytesPerSync)
	}
	po.DisableWAL = o.DisableWAL
	if o.VectorMemtable {
		notes = append(notes, "memtablerep=vector: Pebble has only its skiplist memtable")
	}
	top, note, err := compression(o.Compression)
	if err != nil {
		return nil, nil, err
	}
	if note != "" {
		notes = append(notes, "compression="+note)
	}
	bottom := top
	switch strings.ToLower(o.BottommostCompression) {
	case "":
	case "disable":
		// RocksDB's "disable": the bottommost level is compressed as the others.
	default:
		if bottom, note, err = compression(o.BottommostCompression); err != nil {
			return nil, nil, err
		}
		if note != "" {
			notes = append(notes, "bottommost_compression="+note)
		}
	}
	last := len(po.Levels) - 1
	for i := range po.Levels {
		l := &po.Levels[i]
		prof := top
		if i == last {
			prof = bottom
		}
		if o.MinLevelToCompress > 0 && i < o.MinLevelToCompress {
			prof = block.NoCompression
		}
		l.Compression = func() *block.CompressionProfile { return prof }
		if o.BlockSize > 0 {
			l.BlockSize = o.BlockSize
		}
		if o.BloomBitsPerKey > 0 {
			l.FilterPolicy = bloom.FilterPolicy(o.BloomBitsPerKey)
		}
		if o.TargetFileSizeBase > 0 {
			// Every level's files of the base size: db_bench's
			// target_file_size_multiplier is 1 (Pebble's default doubles per level).
			po.TargetFileSizes[i] = o.TargetFileSizeBase
		}
	}
	po.EventListener = &pebble.EventListener{
		WriteStallBegin: func(pebble.WriteStallBeginInfo) {
			h.stallCount.Add(1)
			h.stallBeginNs.Store(time.Now().UnixNano())
		},
		WriteStallEnd: func() {
			if b := h.stallBeginNs.Swap(0); b > 0 {
				h.stallMicros.Add((time.Now().UnixNano() - b) / 1e3)
			}
		},
	}
	po.Logger = quietLogger{}
	po.EnsureDefaults()
	if po.L0StopWritesThreshold < po.L0CompactionThreshold {
		notes = append(notes, fmt.Sprintf("l0_stop_writes_trigger=%d: Pebble stops writes no earlier than its L0 compaction trigger, %d is used",
			po.L0StopWritesThreshold, po.L0CompactionThreshold))
		po.L0StopWritesThreshold = po.L0CompactionThreshold
	}
	return po, notes, nil
}

// open opens the database with o; mu must be held (or the handle unshared).
func (h *handle) open(o engine.KVOptions) error {
	po, notes, err := h.options(o)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		return fmt.Errorf("pebble: %w", err)
	}
	h.stallCount.Store(0)
	h.stallMicros.Store(0)
	h.stallBeginNs.Store(0)
	db, err := pebble.Open(h.dir, po)
	if err != nil {
		return fmt.Errorf("pebble: open %s: %w", h.dir, err)
	}
	h.db, h.opts, h.notes, h.popts = db, o, notes, po
	return nil
}

// quietLogger keeps Pebble's informational log lines off dbperf's output; errors still
// reach the operation that failed.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}

// current is the open database.
func (h *handle) current() (*pebble.DB, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.db == nil {
		return nil, errors.New("pebble: the database is closed")
	}
	return h.db, nil
}

// version is the Pebble module's version as built into this binary, or go.mod's.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == modulePath {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return goModVersion
}

// Info is the module's version and the effective options (Pebble's own INI rendering of
// every option), plus the notes on asked options Pebble does not have.
func (h *handle) Info(context.Context) (engine.Info, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.db == nil {
		return engine.Info{}, errors.New("pebble: the database is closed")
	}
	s := map[string]string{}
	section := ""
	for _, line := range strings.Split(h.popts.String(), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
		default:
			if k, v, ok := strings.Cut(line, "="); ok {
				s[section+"."+strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	// Pebble's INI text names the level multiplier only when it is not the default.
	s["Options.level_multiplier"] = fmt.Sprint(h.popts.Experimental.LevelMultiplier)
	fmv := h.db.FormatMajorVersion()
	s["format_major_version"] = fmt.Sprint(uint64(fmv))
	if len(h.notes) > 0 {
		s["dbperf.options_not_applied"] = strings.Join(h.notes, "\n")
	}
	if h.opts.DisableWAL {
		s["dbperf.disable_wal"] = "for the whole open database (Pebble has no per-write WAL option)"
	}
	s["dbperf.multiget"] = "a loop of Gets (Pebble has no batched point lookup)"
	s["dbperf.compact_level"] = "DB.Compact of the level's key range, through every level below it (Pebble has no CompactFiles)"
	s["dbperf.unknown_properties"] = "memtable_entries, compaction_cpu_micros (Pebble does not measure them)"
	return engine.Info{
		Version:  fmt.Sprintf("pebble/v2 %s (format major version %d)", version(), uint64(fmv)),
		Settings: s, DataDir: h.dir,
	}, nil
}

// Size is the bytes of the database directory's files.
func (h *handle) Size(context.Context) (int64, error) {
	n, err := engine.DirBytes(h.dir)
	if err != nil {
		return 0, fmt.Errorf("pebble: size of %s: %w", h.dir, err)
	}
	return n, nil
}

// Close closes the database.
func (h *handle) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.db == nil {
		return nil
	}
	if err := h.closeLocked(); err != nil {
		return fmt.Errorf("pebble: close: %w", err)
	}
	return nil
}

// closeLocked closes the database after the values sessions still hold; mu must be held
// for writing.
func (h *handle) closeLocked() error {
	var err error
	for s := range h.sessions {
		if s.db == h.db {
			err = errors.Join(err, s.release())
		}
	}
	err = errors.Join(err, h.db.Close())
	h.db = nil
	return err
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
		return fmt.Errorf("pebble: reopen: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.db != nil {
		if err := h.closeLocked(); err != nil {
			return fmt.Errorf("pebble: reopen: close: %w", err)
		}
	}
	return h.open(o)
}

// Flush writes the memtables to L0 and waits.
func (h *handle) Flush(ctx context.Context) error {
	db, err := h.current()
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pebble: flush: %w", err)
	}
	if err := db.Flush(); err != nil {
		return fmt.Errorf("pebble: flush: %w", err)
	}
	return nil
}

// waitPoll is how often WaitForCompaction reads the metrics.
const waitPoll = 100 * time.Millisecond

// WaitForCompaction polls the metrics until no flush or compaction runs, no memtable
// waits for a flush and Pebble's compaction picker has no compaction waiting for a slot
// (DB.GetWaitingCompaction, what its scheduler asks), twice in a row (§4.2; Pebble has no
// wait-for-compact, so this loop is written by hand). Pebble's scheduler runs a waiting
// compaction within 100 ms when a slot is free, so a tree with nothing in progress or
// waiting twice, waitPoll apart, is one Pebble leaves as it is. Neither its estimated
// compaction debt nor a level's score ≥ 1 is waited on: both can stay up in a tree Pebble
// starts no compaction for (seen: L0 of 40 files in few sublevels, a score ≥ 1 for
// minutes).
func (h *handle) WaitForCompaction(ctx context.Context) (string, error) {
	db, err := h.current()
	if err != nil {
		return "", err
	}
	start := time.Now()
	polls, quiet := 0, 0
	for {
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("pebble: wait for compaction: %w", err)
		}
		m := db.Metrics()
		polls++
		waiting, _ := db.GetWaitingCompaction()
		if m.Flush.NumInProgress == 0 && m.Compact.NumInProgress == 0 && m.MemTable.Count <= 1 && !waiting {
			quiet++
			if quiet == 2 {
				return fmt.Sprintf("idle after %.1fs (%d polls of the metrics every %v: no flush or compaction running, no memtable waiting, no compaction picked and waiting, twice)",
					time.Since(start).Seconds(), polls, waitPoll), nil
			}
		} else {
			quiet = 0
		}
		t := time.NewTimer(waitPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("pebble: wait for compaction: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// keyRange is the smallest and largest user key of the tables of a level, or of every
// level when level is -1 (Pebble's default comparer orders keys as bytes).
func (h *handle) keyRange(db *pebble.DB, level int) (lo, hi []byte, files int, err error) {
	tables, err := db.SSTables()
	if err != nil {
		return nil, nil, 0, fmt.Errorf("pebble: list tables: %w", err)
	}
	if level < -1 || level >= len(tables) {
		return nil, nil, 0, fmt.Errorf("pebble: no level %d", level)
	}
	var all []pebble.SSTableInfo
	if level == -1 {
		for _, l := range tables {
			all = append(all, l...)
		}
	} else {
		all = tables[level]
	}
	for _, t := range all {
		s, l := t.Smallest.UserKey, t.Largest.UserKey
		if lo == nil || string(s) < string(lo) {
			lo = append([]byte(nil), s...)
		}
		if hi == nil || string(l) > string(hi) {
			hi = append([]byte(nil), l...)
		}
		files++
	}
	return lo, hi, files, nil
}

// CompactLevel compacts the key range of level's files. Pebble has no CompactFiles: its
// manual compaction (DB.Compact) compacts a key range through every level that overlaps
// it, so the level's files move to the bottom of the tree, not only to the next level;
// detail says so.
func (h *handle) CompactLevel(ctx context.Context, level int) (string, error) {
	db, err := h.current()
	if err != nil {
		return "", err
	}
	lo, hi, files, err := h.keyRange(db, level)
	if err != nil {
		return "", err
	}
	if files == 0 {
		return fmt.Sprintf("L%d has no files", level), nil
	}
	// Compact's end is exclusive: the successor of the largest key.
	end := append(hi, 0)
	if err := db.Compact(ctx, lo, end, true); err != nil {
		return "", fmt.Errorf("pebble: compact L%d: %w", level, err)
	}
	return fmt.Sprintf("DB.Compact of the key range of L%d's %d files, through every level below it that overlaps (Pebble has no CompactFiles); levels now %s",
		level, files, shape(db.Metrics())), nil
}

// shape renders the files of each non-empty level: "L0 0, L5 3, L6 12 files".
func shape(m *pebble.Metrics) string {
	var b strings.Builder
	for i := range m.Levels {
		if n := m.Levels[i].TablesCount; n > 0 || i == 0 {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "L%d %d", i, n)
		}
	}
	b.WriteString(" files")
	return b.String()
}

// CompactAll compacts every key, from the empty key to past the largest one in a table
// or a memtable, down to the deepest level in use (DB.Compact compacts level by level
// down to it), tombstones included.
func (h *handle) CompactAll(ctx context.Context) error {
	db, err := h.current()
	if err != nil {
		return err
	}
	_, hi, _, err := h.keyRange(db, -1)
	if err != nil {
		return err
	}
	// The memtables' live keys may lie past every table's: the iterator's last key covers
	// them (Compact first flushes the memtables that overlap its range).
	it, err := db.NewIter(nil)
	if err != nil {
		return fmt.Errorf("pebble: compact all: %w", err)
	}
	if it.Last() && (hi == nil || string(it.Key()) > string(hi)) {
		hi = append(hi[:0], it.Key()...)
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("pebble: compact all: %w", err)
	}
	if hi == nil {
		return nil // an empty database
	}
	if err := db.Compact(ctx, nil, append(hi, 0), true); err != nil {
		return fmt.Errorf("pebble: compact all: %w", err)
	}
	return nil
}

// Properties reads Pebble's metrics. Pebble does not count the entries of its memtables
// nor the CPU time of compactions: those are engine.Unknown. MemtableBytes is the bytes
// allocated by the memtables not yet flushed (Pebble allocates a memtable's arena whole,
// so an empty memtable is not 0 bytes); ImmutableMemtables are the memtables queued for
// a flush.
func (h *handle) Properties(ctx context.Context) (engine.KVProps, error) {
	db, err := h.current()
	if err != nil {
		return engine.KVProps{}, err
	}
	if err := ctx.Err(); err != nil {
		return engine.KVProps{}, fmt.Errorf("pebble: properties: %w", err)
	}
	m := db.Metrics()
	p := engine.KVProps{
		MemtableEntries:        engine.Unknown,
		MemtableBytes:          int64(m.MemTable.Size),
		ImmutableMemtables:     max(m.MemTable.Count-1, 0),
		PendingCompactionBytes: int64(m.Compact.EstimatedDebt),
		RunningFlushes:         m.Flush.NumInProgress,
		RunningCompactions:     m.Compact.NumInProgress,
		StallCount:             h.stallCount.Load(),
		StallMicros:            h.stallMicros.Load(),
		CompactionCPUMicros:    engine.Unknown,
		CompactionWallMicros:   m.Compact.Duration.Microseconds(),
	}
	p.FlushPending = p.ImmutableMemtables > 0
	// A compaction is pending when Pebble's picker has one waiting for a slot (a level's
	// score ≥ 1 is not: Pebble may leave such a level as it is).
	p.CompactionPending, _ = db.GetWaitingCompaction()
	if b := h.stallBeginNs.Load(); b > 0 {
		p.StallMicros += (time.Now().UnixNano() - b) / 1e3 // the stall in progress
	}
	for i := range m.Levels {
		l := &m.Levels[i]
		p.Levels = append(p.Levels, engine.KVLevel{Level: i, Files: l.TablesCount, Bytes: l.TablesSize})
		p.LiveBytes += l.TablesSize
		p.CompactionBytesRead += int64(l.TableBytesRead)
		p.CompactionBytesWritten += int64(l.TableBytesCompacted)
		p.FlushBytesWritten += int64(l.TableBytesFlushed)
	}
	return p, nil
}
