package dbbench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	units "github.com/docker/go-units"
	"github.com/spf13/pflag"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

// scales are the suite's scale presets (docs/dbbench.md); the default, reference, is
// benchmark_compare.sh's own defaults (§4.1).
func scales() workload.Scales {
	return workload.Scales{Names: []string{"tiny", "small", "reference", "large"}, Default: "reference"}
}

// Sequences (--sequence).
const (
	seqCurrent = "current" // §4.1, benchmark_compare.sh
	seqLegacy  = "legacy"  // §4.5, all3.sh
	seqShape   = "shape"   // §4.2's experiment: reads at each LSM shape, with and without bloom filters
)

var sequences = []string{seqCurrent, seqLegacy, seqShape}

// Compression names engine.KVOptions accepts.
var compressions = []string{"none", "snappy", "lz4", "zstd"}

// Params are the db_bench-style suite's parameters. The cli registers their flags on
// `dbperf run dbbench`; Resolve applies the scale preset and the flags given, and
// Validate (called by Resolve and Plan) is the one place they are checked.
//
// Scale and ReportInterval are workload.ParamsBase's; its scales are its own (Scales).
type Params struct {
	workload.ParamsBase
	Sequence string
	// Num keys, KeySize and ValueSize bytes (db_bench --num, --key_size, --value_size).
	Num       int64
	KeySize   int
	ValueSize int
	// Threads run every multi-threaded step (NUM_THREADS); the *whilewriting steps add
	// one writer.
	Threads int
	// Duration of the timed read and read-write steps (DURATION_RO = DURATION_RW).
	Duration time.Duration
	// SettleTime is how long revrange (§4.1 row 2) runs, with the database open, so the
	// fill's compaction debt drains (the reference's 300 s).
	SettleTime time.Duration
	// WriteRateMB is the background writer's MB/s (2²⁰ bytes) in the *whilewriting steps
	// and the legacy sequence's rate-limited overwrites (MB_WRITE_PER_SEC).
	WriteRateMB float64
	// SeekNexts are the Next (or Prev) calls after each seek (NUM_NEXTS_PER_SEEK).
	SeekNexts int
	// MultireadBatch keys per MultiGet (--batch_size).
	MultireadBatch int
	// KV are the LSM options every step opens the engine with (fillseq_disable_wal adds
	// its own, §4.1 row 1).
	KV engine.KVOptions
}

var (
	_ workload.Params     = (*Params)(nil)
	_ workload.KVOptioner = (*Params)(nil)
)

// NewParams returns the parameters with no scale applied; Resolve (or Preset) fills them.
func (*Workload) NewParams() workload.Params { return &Params{} }

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// referenceKV are benchmark_compare.sh's LSM options (§4.1 defaults and "Common db_bench
// flags", leveled compaction).
func referenceKV() engine.KVOptions {
	return engine.KVOptions{
		Compression: "lz4", BottommostCompression: "disable", MinLevelToCompress: -1,
		WriteBufferSize: 32 * mib, MaxWriteBufferNum: 8, TargetFileSizeBase: 32 * mib,
		MaxBytesForLevelBase: 128 * mib, LevelMultiplier: 8, NumLevels: 8, DynamicLevelBytes: true,
		L0CompactionTrigger: 4, L0SlowdownTrigger: 20, L0StopTrigger: 30,
		MaxBackgroundJobs: 8, BlockCacheSize: 1 * gib, BlockSize: 8192, BloomBitsPerKey: 10,
		BytesPerSync: 1 * mib,
	}
}

// Preset returns the parameters of a scale preset.
func Preset(scale string) (*Params, error) {
	p := &Params{ParamsBase: workload.ParamsBase{Scale: scale}, Sequence: seqCurrent, KeySize: 20, ValueSize: 400, WriteRateMB: 2,
		SeekNexts: 10, MultireadBatch: 10, KV: referenceKV()}
	switch scale {
	case "tiny": // tests and CI: a whole sequence in seconds, still several levels deep
		p.Num, p.Threads, p.Duration, p.SettleTime = 20_000, 2, time.Second, time.Second
		p.KV.WriteBufferSize, p.KV.TargetFileSizeBase, p.KV.MaxBytesForLevelBase = 256*kib, 256*kib, 1*mib
		p.KV.MaxBackgroundJobs, p.KV.BlockCacheSize = 2, 8*mib
	case "small": // a few minutes on 2 cores
		p.Num, p.Threads, p.Duration, p.SettleTime = 200_000, 2, 10*time.Second, 10*time.Second
		p.KV.WriteBufferSize, p.KV.TargetFileSizeBase, p.KV.MaxBytesForLevelBase = 4*mib, 4*mib, 16*mib
		p.KV.MaxBackgroundJobs, p.KV.BlockCacheSize = 2, 64*mib
	case "reference": // benchmark_compare.sh's defaults (§4.1)
		p.Num, p.Threads, p.Duration, p.SettleTime = 1_000_000, 16, 65*time.Second, 300*time.Second
	case "large": // Mark's c8r32 profile (x.sh): 16/16/64 MB, 4 jobs, 20 GB cache; 40M keys (nk_mem)
		p.Num, p.Threads, p.Duration, p.SettleTime = 40_000_000, 8, 1800*time.Second, 300*time.Second
		p.KV.WriteBufferSize, p.KV.TargetFileSizeBase, p.KV.MaxBytesForLevelBase = 16*mib, 16*mib, 64*mib
		p.KV.MaxBackgroundJobs, p.KV.BlockCacheSize = 4, 20*gib
	default:
		return p, scales().Unknown(scale)
	}
	return p, nil
}

// AddFlags registers the suite's own flags.
func (p *Params) AddFlags(fl *workload.FlagSet) { p.bindFlags(p.BindFlags(fl)) }

// bindFlags registers the suite's flags on f, bound to p's parameters: the command's,
// and a key-value engine's profile's (applyProfile).
func (p *Params) bindFlags(f *workload.Flags) {
	o := &p.KV
	f.String(&p.Sequence, "sequence", seqCurrent, "step sequence: current (benchmark_compare.sh), legacy (all3.sh) or shape (reads at each LSM shape, with and without bloom filters)")
	f.Int64(&p.Num, "num", 0, "keys (db_bench --num; default: the scale's)")
	f.Int(&p.KeySize, "key-size", 20, "key bytes (legacy sequence: 8 unless given)")
	f.Int(&p.ValueSize, "value-size", 400, "value bytes (compressible to half their size)")
	f.Int(&p.Threads, "threads", 0, "threads of the multi-threaded steps; the *whilewriting steps add one writer (--clients N is --threads N; default: the scale's)")
	f.Seconds(&p.Duration, "duration", "seconds each timed read and read-write step runs (--time is the same; default: the scale's)")
	f.Seconds(&p.SettleTime, "settle-time", "seconds revrange runs after the fill so its compaction debt drains (default: the scale's, 300 at reference)")
	f.Float64(&p.WriteRateMB, "write-rate-mb", 2, "MB/s (2^20 bytes) of the background writer of the *whilewriting steps and legacy rate-limited overwrites")
	f.Int(&p.SeekNexts, "seek-nexts", 10, "Next (Prev) calls after each seek of fwdrange, revrange and the range steps")
	f.Int(&p.MultireadBatch, "multiread-batch", 10, "keys per MultiGet of multireadrandom")
	f.String(&o.Compression, "compression", "lz4", "compression of every level: "+strings.Join(compressions, ", "))
	f.String(&o.BottommostCompression, "bottommost-compression", "disable", "compression of the last level: as above, disable (none there either) or \"\" (as --compression)")
	f.Int(&o.MinLevelToCompress, "min-level-to-compress", -1, "levels above this one are not compressed (-1: every level)")
	f.Parsed(&o.WriteBufferSize, "write-buffer-size", "", "memtable size, e.g. 32MB or 256KiB (MB = 2^20; default: the scale's, 32MB at reference)", parseSize)
	f.Int(&o.MaxWriteBufferNum, "max-write-buffer-number", 8, "memtables at most, active and immutable")
	f.Parsed(&o.TargetFileSizeBase, "target-file-size-base", "", "SST file size of L1 (default: the scale's, 32MB at reference)", parseSize)
	f.Parsed(&o.MaxBytesForLevelBase, "max-bytes-for-level-base", "", "L1's target size (default: the scale's, 128MB at reference)", parseSize)
	f.Float64(&o.LevelMultiplier, "level-multiplier", 8, "size ratio of adjacent levels (fanout)")
	f.Int(&o.NumLevels, "num-levels", 8, "levels of the LSM tree")
	f.Int(&o.L0CompactionTrigger, "l0-compaction-trigger", 4, "L0 files that start a compaction")
	f.Int(&o.L0SlowdownTrigger, "l0-slowdown-trigger", 20, "L0 files that slow writes down")
	f.Int(&o.L0StopTrigger, "l0-stop-trigger", 30, "L0 files that stop writes")
	f.Int(&o.MaxBackgroundJobs, "max-background-jobs", 0, "flushes and compactions at once (default: the scale's, 8 at reference)")
	f.Parsed(&o.BlockCacheSize, "cache-size", "", "block cache size, e.g. 1GB (default: the scale's)", parseSize)
	f.Int(&o.BlockSize, "block-size", 8192, "SST data block bytes")
	f.Int(&o.BloomBitsPerKey, "bloom-bits", 10, "bloom filter bits per key (0: no filter)")
}

// parseSize parses a size flag's bytes, e.g. 32MB or 256KiB (MB = 2^20).
func parseSize(s string) (int64, error) {
	n, err := units.RAMInBytes(s)
	if err != nil {
		return 0, errors.New("not a size: give bytes or a number with a unit, e.g. 32MB or 256KiB (MB = 2^20)")
	}
	return n, nil
}

// Scales lists the presets; reference (benchmark_compare.sh's defaults) is the default.
func (*Params) Scales() ([]string, string) { return scales().List() }

// KVOptions are the LSM options the engine opens with (workload.KVOptioner).
func (p *Params) KVOptions() engine.KVOptions { return p.KV }

// Resolve applies the scale preset, then the key-value engine's profile (cfg.KVProfile),
// then --time, --clients and the flags the user set, then validates. --clients N means
// --threads N, and cfg.Clients becomes --threads.
func (p *Params) Resolve(cfg *config.Run, set func(string) bool) error {
	var pr workload.Problems
	pr.Join(workload.ApplyScale(p, cfg, Preset))
	pr.Join(p.applyProfile(cfg, set))
	threads, duration := p.Threads, p.Duration
	pr.Join(p.ApplyFlags(set))
	if p.Sequence == seqLegacy && !set("key-size") {
		p.KeySize = 8 // all3.sh's key_size
	}
	pr.Join(workload.Threads(set, cfg, &p.Threads, threads, func(n int) int { return n }))
	switch {
	case set("duration") && cfg.Time != 0:
		p.Duration = duration
		pr.Add("--duration and --time both given: --time is --duration for this workload; give one")
	case cfg.Time != 0:
		p.Duration = cfg.Time
	}
	pr.Join(p.Validate(cfg))
	if p.Threads >= 1 {
		cfg.Clients = p.Threads
	}
	return pr.Err()
}

// lsmFlags are the flags that set the engine's LSM options (engine.KVOptions): the ones a
// key-value engine's profile may hold.
var lsmFlags = []string{"compression", "bottommost-compression", "min-level-to-compress", "write-buffer-size",
	"max-write-buffer-number", "target-file-size-base", "max-bytes-for-level-base", "level-multiplier",
	"num-levels", "l0-compaction-trigger", "l0-slowdown-trigger", "l0-stop-trigger", "max-background-jobs",
	"cache-size", "block-size", "bloom-bits"}

// applyProfile applies a key-value engine's profile: "option = value" lines (# starts a
// comment) naming LSM flags (lsmFlags), parsed as those flags are. A flag given on the
// command line may not repeat an option of the profile: which one wins would be a guess.
func (p *Params) applyProfile(cfg *config.Run, set func(string) bool) error {
	if strings.TrimSpace(cfg.KVProfile) == "" {
		return nil
	}
	var pr workload.Problems
	name := cfg.Profile
	fs := pflag.NewFlagSet("profile "+name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	prof := workload.NewFlags(fs)
	p.bindFlags(prof)
	for n, line := range strings.Split(cfg.KVProfile, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch {
		case !ok || key == "":
			pr.Add("profile %s line %d: %q is not \"option = value\"", name, n+1, line)
			continue
		case !slices.Contains(lsmFlags, key):
			pr.Add("profile %s line %d: %q is not an LSM option; use one of %s", name, n+1, key, strings.Join(lsmFlags, ", "))
			continue
		case fs.Changed(key):
			pr.Add("profile %s line %d: %s is set twice", name, n+1, key)
			continue
		case set(key):
			pr.Add("--%s and profile %s's %s both given: drop one (or use another profile)", key, name, key)
			continue
		}
		if err := fs.Set(key, val); err != nil {
			pr.Add("profile %s line %d: %s = %q: %v", name, n+1, key, val, err)
		}
	}
	// The preset's value stays where a size does not parse, so the range checks do not
	// repeat the problem.
	pr.Join(prof.ApplyAs(fs.Changed, func(flag, value string, why error) error {
		return fmt.Errorf("profile %s: %s = %q: %w", name, flag, value, why)
	}))
	return pr.Err()
}

// maxNum keeps the key index within what KeySize bytes encode and what a permutation
// over 2^62 handles.
func maxNum(keySize int) int64 {
	if keySize >= 8 {
		return 1 << 62
	}
	return 1 << (8 * keySize)
}

// Validate checks every parameter against the shared configuration, every problem at
// once, one line each naming the flag. Resolve and Plan both call it.
func (p *Params) Validate(cfg *config.Run) error {
	var pr workload.Problems
	add := pr.Add
	if !slices.Contains(sequences, p.Sequence) {
		add("--sequence %q: use one of %s", p.Sequence, strings.Join(sequences, ", "))
	}
	if p.KeySize < 1 || p.KeySize > 1<<16 {
		add("--key-size must be within 1..65536 bytes, got %d", p.KeySize)
	} else if p.Num < 1 || p.Num > maxNum(p.KeySize) {
		add("--num must be within 1..%d (what --key-size %d encodes), got %d", maxNum(p.KeySize), p.KeySize, p.Num)
	}
	if p.ValueSize < 1 || p.ValueSize > 1<<20 {
		add("--value-size must be within 1..1048576 bytes, got %d", p.ValueSize)
	}
	if p.Threads < 1 {
		add("--threads must be at least 1, got %d", p.Threads)
	}
	if p.Duration <= 0 {
		add("--duration must be a positive number of seconds, got %g", p.Duration.Seconds())
	}
	if p.SettleTime <= 0 {
		add("--settle-time must be a positive number of seconds, got %g", p.SettleTime.Seconds())
	}
	if !(p.WriteRateMB > 0) || math.IsInf(p.WriteRateMB, 0) {
		add("--write-rate-mb must be a positive number of MB/s, got %g", p.WriteRateMB)
	}
	if p.SeekNexts < 0 {
		add("--seek-nexts must not be negative, got %d", p.SeekNexts)
	}
	if p.MultireadBatch < 1 {
		add("--multiread-batch must be at least 1, got %d", p.MultireadBatch)
	}
	o := p.KV
	if !slices.Contains(compressions, o.Compression) {
		add("--compression %q: use one of %s", o.Compression, strings.Join(compressions, ", "))
	}
	if o.BottommostCompression != "" && o.BottommostCompression != "disable" && !slices.Contains(compressions, o.BottommostCompression) {
		add("--bottommost-compression %q: use one of %s, disable, or \"\"", o.BottommostCompression, strings.Join(compressions, ", "))
	}
	if o.NumLevels < 2 || o.NumLevels > 20 {
		add("--num-levels must be within 2..20, got %d", o.NumLevels)
	}
	if o.MinLevelToCompress < -1 || o.MinLevelToCompress >= max(o.NumLevels, 2) {
		add("--min-level-to-compress must be within -1..%d (below --num-levels), got %d", max(o.NumLevels, 2)-1, o.MinLevelToCompress)
	}
	for _, s := range []struct {
		flag string
		v    int64
		min  int64
	}{
		{"--write-buffer-size", o.WriteBufferSize, 64 * kib}, {"--target-file-size-base", o.TargetFileSizeBase, 64 * kib},
		{"--max-bytes-for-level-base", o.MaxBytesForLevelBase, 64 * kib}, {"--cache-size", o.BlockCacheSize, 0},
	} {
		if s.v < s.min {
			add("%s must be at least %s, got %d bytes", s.flag, units.BytesSize(float64(s.min)), s.v)
		}
	}
	if o.MaxWriteBufferNum < 2 {
		add("--max-write-buffer-number must be at least 2, got %d", o.MaxWriteBufferNum)
	}
	if !(o.LevelMultiplier >= 2) || math.IsInf(o.LevelMultiplier, 0) {
		add("--level-multiplier must be at least 2, got %g", o.LevelMultiplier)
	}
	if o.L0CompactionTrigger < 1 || o.L0SlowdownTrigger < o.L0CompactionTrigger || o.L0StopTrigger < o.L0SlowdownTrigger {
		add("--l0-compaction-trigger, --l0-slowdown-trigger, --l0-stop-trigger must be 1 ≤ compaction ≤ slowdown ≤ stop, got %d, %d, %d",
			o.L0CompactionTrigger, o.L0SlowdownTrigger, o.L0StopTrigger)
	}
	if o.MaxBackgroundJobs < 1 {
		add("--max-background-jobs must be at least 1, got %d", o.MaxBackgroundJobs)
	}
	if o.BlockSize < 256 || o.BlockSize > 1<<22 {
		add("--block-size must be within 256..4194304 bytes, got %d", o.BlockSize)
	}
	if o.BloomBitsPerKey < 0 || o.BloomBitsPerKey > 64 {
		add("--bloom-bits must be within 0..64 (0: no bloom filter), got %d", o.BloomBitsPerKey)
	} else if o.BloomBitsPerKey == 0 && p.Sequence == seqShape {
		add("--bloom-bits 0 with --sequence shape: the shape sequence compares reads with and without bloom filters; give bits > 0")
	}
	if slices.Contains(sequences, p.Sequence) && p.Threads >= 1 && p.SeekNexts >= 0 {
		names := stepNames(specsOf(p))
		pr.Steps(cfg, names, "--sequence "+p.Sequence+" has")
		pr.NeedsData(cfg, names[0], "the keys the "+names[0]+" step writes", false)
	}
	return pr.Err()
}

// writeRate is the background writer's ops/s: --write-rate-mb MB/s over key + value bytes.
func (p *Params) writeRate() float64 {
	return p.WriteRateMB * float64(mib) / float64(p.KeySize+p.ValueSize)
}

// Stored are the resolved parameters stored with the run: the scale and every flag's
// (workload.Stored: the LSM options too), and the options no flag sets.
func (p *Params) Stored() map[string]any {
	return workload.Stored(p, map[string]any{
		"compression_ratio":   compressionRatio,
		"dynamic_level_bytes": p.KV.DynamicLevelBytes,
		"bytes_per_sync":      p.KV.BytesPerSync,
		"sync":                p.KV.Sync,
	})
}
