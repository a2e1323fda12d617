package rocksdb

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/linxGnu/grocksdb"

	"github.com/dbperf/dbperf/internal/engine"
)

// counters are RocksDB's cumulative figures that restart with every open: the statistics
// tickers and the stall counts of the column family's stats.
type counters struct {
	compactRead, compactWrite, flushWrite int64
	stallMicros, stallCount               int64
	compCPUMicros, compWallMicros         int64
}

func (c counters) add(o counters) counters {
	return counters{
		compactRead: c.compactRead + o.compactRead, compactWrite: c.compactWrite + o.compactWrite,
		flushWrite: c.flushWrite + o.flushWrite, stallMicros: c.stallMicros + o.stallMicros,
		stallCount: c.stallCount + o.stallCount, compCPUMicros: c.compCPUMicros + o.compCPUMicros,
		compWallMicros: c.compWallMicros + o.compWallMicros,
	}
}

// readCounters reads the open database's counters.
func readCounters(db *grocksdb.DB, o *grocksdb.Options) counters {
	st := parseStatistics(o.GetStatisticsString())
	return counters{
		compactRead:    st["rocksdb.compact.read.bytes"].count,
		compactWrite:   st["rocksdb.compact.write.bytes"].count,
		flushWrite:     st["rocksdb.flush.write.bytes"].count,
		stallMicros:    st["rocksdb.stall.micros"].count,
		compCPUMicros:  st["rocksdb.compaction.times.cpu_micros"].sum,
		compWallMicros: st["rocksdb.compaction.times.micros"].sum,
		stallCount:     parseStallCount(db.GetProperty("rocksdb.cfstats")),
	}
}

// stat is one line of RocksDB's statistics text: a ticker's COUNT, or a histogram's COUNT
// and SUM.
type stat struct{ count, sum int64 }

// parseStatistics reads Statistics::ToString's text, one ticker or histogram a line:
// "rocksdb.compact.read.bytes COUNT : 1234" and
// "rocksdb.compaction.times.micros P50 : 1.0 … COUNT : 3 SUM : 4567". Written by hand:
// RocksDB's C API (7.8) returns the statistics only as this text.
func parseStatistics(text string) map[string]stat {
	out := map[string]stat{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		var s stat
		for i := 1; i+2 < len(f); i++ {
			if f[i+1] != ":" {
				continue
			}
			v, err := strconv.ParseFloat(f[i+2], 64)
			if err != nil {
				continue
			}
			switch f[i] {
			case "COUNT":
				s.count = int64(v)
			case "SUM":
				s.sum = int64(v)
			}
		}
		out[f[0]] = s
	}
	return out
}

// parseStallCount sums the write stall counts of the column family's stats text,
// "Stalls(count): 0 level0_slowdown, 0 level0_slowdown_with_compaction, 0
// level0_numfiles, …, interval 0 total count": every cause once (the *_with_compaction
// counts are subsets of the one before). Written by hand: the C API has no map property.
func parseStallCount(text string) int64 {
	_, rest, ok := strings.Cut(text, "Stalls(count):")
	if !ok {
		return engine.Unknown
	}
	rest, _, _ = strings.Cut(rest, "\n")
	rest, _, _ = strings.Cut(rest, "interval")
	var n int64
	for _, part := range strings.Split(rest, ",") {
		f := strings.Fields(part)
		if len(f) < 2 || strings.Contains(part, "with_compaction") {
			continue
		}
		if v, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			n += v
		}
	}
	return n
}

// intProp reads an integer property, Unknown when RocksDB has none of that name.
func intProp(db *grocksdb.DB, name string) int64 {
	v, ok := db.GetIntProperty(name)
	if !ok {
		return engine.Unknown
	}
	return int64(v)
}

// Properties reads RocksDB's properties, its statistics and the live files' levels.
func (h *handle) Properties(ctx context.Context) (engine.KVProps, error) {
	if err := ctx.Err(); err != nil {
		return engine.KVProps{}, fmt.Errorf("rocksdb: properties: %w", err)
	}
	var p engine.KVProps
	err := h.locked(func(db *grocksdb.DB) error {
		active := intProp(db, "rocksdb.num-entries-active-mem-table")
		imm := intProp(db, "rocksdb.num-entries-imm-mem-tables")
		p.MemtableEntries = engine.Unknown
		if active >= 0 && imm >= 0 {
			p.MemtableEntries = active + imm
		}
		p.MemtableBytes = intProp(db, "rocksdb.cur-size-all-mem-tables")
		p.ImmutableMemtables = intProp(db, "rocksdb.num-immutable-mem-table")
		p.PendingCompactionBytes = intProp(db, "rocksdb.estimate-pending-compaction-bytes")
		p.FlushPending = intProp(db, "rocksdb.mem-table-flush-pending") > 0
		p.CompactionPending = intProp(db, "rocksdb.compaction-pending") > 0
		p.RunningFlushes = intProp(db, "rocksdb.num-running-flushes")
		p.RunningCompactions = intProp(db, "rocksdb.num-running-compactions")
		p.LiveBytes = intProp(db, "rocksdb.live-sst-files-size")
		p.Levels = make([]engine.KVLevel, h.numLevels())
		for i := range p.Levels {
			p.Levels[i].Level = i
		}
		for _, f := range db.GetLiveFilesMetaData() {
			if f.Level >= 0 && f.Level < len(p.Levels) {
				p.Levels[f.Level].Files++
				p.Levels[f.Level].Bytes += f.Size
			}
		}
		c := h.base.add(readCounters(db, h.ro))
		p.CompactionBytesRead, p.CompactionBytesWritten, p.FlushBytesWritten = c.compactRead, c.compactWrite, c.flushWrite
		p.StallMicros, p.StallCount = c.stallMicros, c.stallCount
		p.CompactionCPUMicros, p.CompactionWallMicros = c.compCPUMicros, c.compWallMicros
		return nil
	})
	return p, err
}
