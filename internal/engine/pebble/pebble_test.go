package pebble

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/kvtest"
)

// TestOptionsReachPebble: every KVOptions field is in force in the open database (Pebble's
// own rendering of its options, which Info reports) or named in the notes.
func TestOptionsReachPebble(t *testing.T) {
	o := engine.KVOptions{
		Compression: "lz4", BottommostCompression: "zstd", MinLevelToCompress: 2,
		WriteBufferSize: 1 << 20, MaxWriteBufferNum: 3, TargetFileSizeBase: 128 << 10,
		MaxBytesForLevelBase: 512 << 10, LevelMultiplier: 8, NumLevels: 8,
		DynamicLevelBytes: true, L0CompactionTrigger: 3, L0SlowdownTrigger: 10, L0StopTrigger: 15,
		MaxBackgroundJobs: 3, BlockCacheSize: 16 << 20, BlockSize: 8192, BloomBitsPerKey: 12,
		BytesPerSync: 1 << 20, VectorMemtable: true, DisableWAL: true, Sync: true,
	}
	kv := open(t, o)
	info, err := kv.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^pebble/v2 v2\.\d+\.\d+ \(format major version \d+\)$`).MatchString(info.Version) {
		t.Errorf("version %q", info.Version)
	}
	want := map[string]string{
		"Options.mem_table_size":                  "1048576",
		"Options.mem_table_stop_writes_threshold": "3",
		"Options.l0_compaction_threshold":         "3",
		"Options.l0_stop_writes_threshold":        "15",
		"Options.lbase_max_bytes":                 "524288",
		"Options.level_multiplier":                "8",
		"Options.max_concurrent_compactions":      "2",
		"Options.cache_size":                      "16777216",
		"Options.bytes_per_sync":                  "1048576",
		"Options.disable_wal":                     "true",
		`Level "0".compression`:                   block0(),
		`Level "1".compression`:                   block0(),
		`Level "2".compression`:                   "MinLZ",
		`Level "5".compression`:                   "MinLZ",
		`Level "6".compression`:                   "ZSTD",
		`Level "3".block_size`:                    "8192",
		`Level "3".filter_policy`:                 "rocksdb.BuiltinBloomFilter",
		`Level "0".target_file_size`:              "131072",
		`Level "6".target_file_size`:              "131072",
	}
	for k, v := range want {
		if got, ok := info.Settings[k]; !ok || !strings.EqualFold(got, v) {
			t.Errorf("setting %s = %q (present %v), want %q", k, got, ok, v)
		}
	}
	notes := info.Settings["dbperf.options_not_applied"]
	for _, w := range []string{"l0_slowdown_trigger=10", "memtablerep=vector", "compression=lz4", "num_levels=8", "dynamic_level_bytes"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
	if info.Settings["dbperf.disable_wal"] == "" {
		t.Error("no note that the WAL is off for the whole database")
	}
	s, err := kv.NewKVSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.(*session).wo != pebble.Sync {
		t.Error("Sync: the session's writes do not sync")
	}
}

// block0 is the name Pebble gives an uncompressed level.
func block0() string { return "NoCompression" }

// TestCompressionReachesTables: the tables a flush writes are compressed as asked.
func TestCompressionReachesTables(t *testing.T) {
	for _, c := range []struct {
		name  string
		count func(m *pebble.Metrics) int64
	}{
		{"none", func(m *pebble.Metrics) int64 { return m.Table.CompressedCountNone }},
		{"zstd", func(m *pebble.Metrics) int64 { return m.Table.CompressedCountZstd }},
		{"snappy", func(m *pebble.Metrics) int64 { return m.Table.CompressedCountSnappy }},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := kvtest.Small()
			o.Compression = c.name
			kv := open(t, o)
			s, err := kv.NewKVSession(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for i := range 500 {
				s.BatchPut(kvtest.Key(i), kvtest.Value(i, 200))
			}
			if err := s.Commit(); err != nil {
				t.Fatal(err)
			}
			_ = s.Close()
			if err := kv.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			m := kv.(*handle).db.Metrics()
			if n := c.count(m); n == 0 {
				t.Errorf("no table compressed with %s: %+v", c.name, m.Table)
			}
		})
	}
}

// TestOptionsPebbleRefuses: options Pebble would reject are raised to its minimum and
// noted.
func TestOptionsPebbleRefuses(t *testing.T) {
	o := kvtest.Small()
	o.MaxWriteBufferNum, o.L0CompactionTrigger, o.L0StopTrigger = 1, 8, 2
	kv := open(t, o)
	info, err := kv.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Settings["Options.mem_table_stop_writes_threshold"] != "2" || info.Settings["Options.l0_stop_writes_threshold"] != "8" {
		t.Errorf("settings: memtables %s, L0 stop %s", info.Settings["Options.mem_table_stop_writes_threshold"], info.Settings["Options.l0_stop_writes_threshold"])
	}
	notes := info.Settings["dbperf.options_not_applied"]
	if !strings.Contains(notes, "max_write_buffer_number=1") || !strings.Contains(notes, "l0_stop_writes_trigger=2") {
		t.Errorf("notes:\n%s", notes)
	}
	if _, err := New().Open(context.Background(), engine.Target{Dir: t.TempDir(), KV: engine.KVOptions{Compression: "lzma"}}); err == nil {
		t.Error("an unknown compression was accepted")
	}
}

// TestStallListener: the counters follow the listener's callbacks, a stall in progress
// counts in Properties, and a handle's counters are its own.
func TestStallListener(t *testing.T) {
	h := open(t, kvtest.Small()).(*handle)
	other := open(t, kvtest.Small()).(*handle)
	l := h.popts.EventListener
	l.WriteStallBegin(pebble.WriteStallBeginInfo{Reason: "test"})
	time.Sleep(20 * time.Millisecond)
	p, err := h.Properties(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.StallCount != 1 || p.StallMicros < 20_000 {
		t.Errorf("during a stall: count %d, µs %d", p.StallCount, p.StallMicros)
	}
	l.WriteStallEnd()
	l.WriteStallBegin(pebble.WriteStallBeginInfo{Reason: "test"})
	l.WriteStallEnd()
	p, err = h.Properties(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.StallCount != 2 || p.StallMicros < 20_000 || p.StallMicros > 10_000_000 {
		t.Errorf("after two stalls: count %d, µs %d", p.StallCount, p.StallMicros)
	}
	if q, _ := other.Properties(context.Background()); q.StallCount != 0 || q.StallMicros != 0 {
		t.Errorf("another handle counts %d stalls", q.StallCount)
	}
}

// TestStallsCounted: writes faster than two tiny memtables and an L0 limit of 2 allow
// stall, and Properties counts them.
func TestStallsCounted(t *testing.T) {
	o := kvtest.Small()
	o.MaxWriteBufferNum, o.L0CompactionTrigger, o.L0StopTrigger, o.MaxBackgroundJobs = 2, 1, 2, 2
	kv := open(t, o)
	s, err := kv.NewKVSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	deadline := time.Now().Add(10 * time.Second)
	var p engine.KVProps
	for i := 0; time.Now().Before(deadline); i++ {
		for j := range 1000 {
			k := i*1000 + j
			s.BatchPut(kvtest.Key(k), kvtest.Value(k, 1000))
		}
		if err := s.Commit(); err != nil {
			t.Fatal(err)
		}
		if p, err = kv.Properties(context.Background()); err != nil {
			t.Fatal(err)
		}
		if p.StallCount > 0 {
			t.Logf("%d stalls, %d µs after %d MB", p.StallCount, p.StallMicros, i+1)
			return
		}
	}
	t.Errorf("no stall in 10 s: %+v", p)
}

// TestGoModVersion: the version reported without module information is go.mod's.
func TestGoModVersion(t *testing.T) {
	b, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if want := "\t" + modulePath + " " + goModVersion + "\n"; !strings.Contains(string(b), want) {
		t.Errorf("go.mod does not require %s %s: update goModVersion", modulePath, goModVersion)
	}
}

// TestHeldValueAcrossReopen: a session's Get keeps Pebble's value open until its next Get
// (no copy), and the handle closes that value before it closes the database, so a Reopen
// and a Close with a value still held succeed instead of failing on a leaked iterator.
func TestHeldValueAcrossReopen(t *testing.T) {
	ctx := context.Background()
	kv, err := New().Open(ctx, engine.Target{Dir: t.TempDir(), KV: kvtest.Small()})
	if err != nil {
		t.Fatal(err)
	}
	h := kv.(*handle)
	s, err := h.NewKVSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := s.Put(kvtest.Key(i), kvtest.Value(i, 400)); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	v, found, err := s.Get(kvtest.Key(3))
	if err != nil || !found || !bytes.Equal(v, kvtest.Value(3, 400)) {
		t.Fatalf("Get = %d bytes, found %v, %v", len(v), found, err)
	}
	if err := h.Reopen(ctx, h.Options()); err != nil {
		t.Fatalf("Reopen with a value held: %v", err)
	}
	s2, err := h.NewKVSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, found, err := s2.Get(kvtest.Key(4)); err != nil || !found {
		t.Fatalf("Get after the reopen = found %v, %v", found, err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("Close with a value held: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
}
