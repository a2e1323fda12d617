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

// Scale presets (docs/dbbench.md).
var scales = []string{"tiny", "small", "reference", "large"}

// defaultScale is benchmark_compare.sh's own defaults (§4.1).
const defaultScale = "reference"

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
type Params struct {
	Scale    string
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

	flags paramFlags
}

// paramFlags are the values of the workload's own flags, applied by Resolve when given.
type paramFlags struct {
	sequence                           string
	num                                int64
	keySize, valueSize, threads        int
	duration, settle, writeRate        float64
	seekNexts, multireadBatch          int
	compression, bottommost            string
	minLevelToCompress                 int
	writeBuffer, targetFile, levelBase string
	maxWriteBuffers                    int
	levelMultiplier                    float64
	numLevels                          int
	l0Compaction, l0Slowdown, l0Stop   int
	maxBackgroundJobs                  int
	cacheSize                          string
	blockSize, bloomBits               int
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
	p := &Params{Scale: scale, Sequence: seqCurrent, KeySize: 20, ValueSize: 400, WriteRateMB: 2,
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
		return p, fmt.Errorf("--scale: unknown scale %q: use one of %s", scale, strings.Join(scales, ", "))
	}
	return p, nil
}

// AddFlags registers the suite's own flags.
func (p *Params) AddFlags(fl *pflag.FlagSet) {
	f := &p.flags
	fl.StringVar(&f.sequence, "sequence", seqCurrent, "step sequence: current (benchmark_compare.sh), legacy (all3.sh) or shape (reads at each LSM shape, with and without bloom filters)")
	fl.Int64Var(&f.num, "num", 0, "keys (db_bench --num; default: the scale's)")
	fl.IntVar(&f.keySize, "key-size", 20, "key bytes (legacy sequence: 8 unless given)")
	fl.IntVar(&f.valueSize, "value-size", 400, "value bytes (compressible to half their size)")
	fl.IntVar(&f.threads, "threads", 0, "threads of the multi-threaded steps; the *whilewriting steps add one writer (--clients N is --threads N; default: the scale's)")
	fl.Float64Var(&f.duration, "duration", 0, "seconds each timed read and read-write step runs (--time is the same; default: the scale's)")
	fl.Float64Var(&f.settle, "settle-time", 0, "seconds revrange runs after the fill so its compaction debt drains (default: the scale's, 300 at reference)")
	fl.Float64Var(&f.writeRate, "write-rate-mb", 2, "MB/s (2^20 bytes) of the background writer of the *whilewriting steps and legacy rate-limited overwrites")
	fl.IntVar(&f.seekNexts, "seek-nexts", 10, "Next (Prev) calls after each seek of fwdrange, revrange and the range steps")
	fl.IntVar(&f.multireadBatch, "multiread-batch", 10, "keys per MultiGet of multireadrandom")
	fl.StringVar(&f.compression, "compression", "lz4", "compression of every level: "+strings.Join(compressions, ", "))
	fl.StringVar(&f.bottommost, "bottommost-compression", "disable", "compression of the last level: as above, disable (none there either) or \"\" (as --compression)")
	fl.IntVar(&f.minLevelToCompress, "min-level-to-compress", -1, "levels above this one are not compressed (-1: every level)")
	fl.StringVar(&f.writeBuffer, "write-buffer-size", "", "memtable size, e.g. 32MB or 256KiB (MB = 2^20; default: the scale's, 32MB at reference)")
	fl.IntVar(&f.maxWriteBuffers, "max-write-buffer-number", 8, "memtables at most, active and immutable")
	fl.StringVar(&f.targetFile, "target-file-size-base", "", "SST file size of L1 (default: the scale's, 32MB at reference)")
	fl.StringVar(&f.levelBase, "max-bytes-for-level-base", "", "L1's target size (default: the scale's, 128MB at reference)")
	fl.Float64Var(&f.levelMultiplier, "level-multiplier", 8, "size ratio of adjacent levels (fanout)")
	fl.IntVar(&f.numLevels, "num-levels", 8, "levels of the LSM tree")
	fl.IntVar(&f.l0Compaction, "l0-compaction-trigger", 4, "L0 files that start a compaction")
	fl.IntVar(&f.l0Slowdown, "l0-slowdown-trigger", 20, "L0 files that slow writes down")
	fl.IntVar(&f.l0Stop, "l0-stop-trigger", 30, "L0 files that stop writes")
	fl.IntVar(&f.maxBackgroundJobs, "max-background-jobs", 0, "flushes and compactions at once (default: the scale's, 8 at reference)")
	fl.StringVar(&f.cacheSize, "cache-size", "", "block cache size, e.g. 1GB (default: the scale's)")
	fl.IntVar(&f.blockSize, "block-size", 8192, "SST data block bytes")
	fl.IntVar(&f.bloomBits, "bloom-bits", 10, "bloom filter bits per key (0: no filter)")
}

// Scales lists the presets; reference (benchmark_compare.sh's defaults) is the default.
func (*Params) Scales() ([]string, string) { return slices.Clone(scales), defaultScale }

// ReportInterval is 1 s for tiny and small scales and 5 s otherwise.
func (p *Params) ReportInterval() time.Duration {
	if p.Scale == "tiny" || p.Scale == "small" {
		return time.Second
	}
	return 5 * time.Second
}

// KVOptions are the LSM options the engine opens with (workload.KVOptioner).
func (p *Params) KVOptions() engine.KVOptions { return p.KV }

// Resolve applies the scale preset, then the key-value engine's profile (cfg.KVProfile),
// then --time, --clients and the flags the user set, then validates. --clients N means
// --threads N, and cfg.Clients becomes --threads.
func (p *Params) Resolve(cfg *config.Run, set func(string) bool) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	scale := cfg.Scale
	if scale == "" {
		scale = defaultScale
	}
	flags := p.flags
	preset, err := Preset(scale)
	if err != nil {
		errs = append(errs, err)
		preset, _ = Preset(defaultScale) // go on, so the other checks report only real problems
	}
	*p = *preset
	p.flags = flags
	if err := p.applyProfile(cfg, set); err != nil {
		errs = append(errs, err)
	}
	if set("sequence") {
		p.Sequence = flags.sequence
	}
	if p.Sequence == seqLegacy {
		p.KeySize = 8 // all3.sh's key_size
	}
	ints := []struct {
		flag string
		v    int
		dst  *int
	}{
		{"key-size", flags.keySize, &p.KeySize}, {"value-size", flags.valueSize, &p.ValueSize},
		{"seek-nexts", flags.seekNexts, &p.SeekNexts}, {"multiread-batch", flags.multireadBatch, &p.MultireadBatch},
	}
	for _, d := range ints {
		if set(d.flag) {
			*d.dst = d.v
		}
	}
	p.applyLSM(flags, set, add, "--%s %q")
	if set("num") {
		p.Num = flags.num
	}
	switch {
	case set("threads") && set("clients"):
		add("--threads and --clients both given: --clients %d is --threads %d; give one", cfg.Clients, cfg.Clients)
	case set("threads"):
		p.Threads = flags.threads
	case set("clients"):
		p.Threads = cfg.Clients
	}
	switch {
	case set("duration") && cfg.Time != 0:
		add("--duration and --time both given: --time is --duration for this workload; give one")
	case set("duration"):
		p.Duration = seconds(flags.duration)
	case cfg.Time != 0:
		p.Duration = cfg.Time
	}
	if set("settle-time") {
		p.SettleTime = seconds(flags.settle)
	}
	if set("write-rate-mb") {
		p.WriteRateMB = flags.writeRate
	}
	if err := p.Validate(cfg); err != nil {
		errs = append(errs, err)
	}
	if p.Threads >= 1 {
		cfg.Clients = p.Threads
	}
	return errors.Join(errs...)
}

// lsmFlags are the flags that set the engine's LSM options (engine.KVOptions): the ones a
// key-value engine's profile may hold.
var lsmFlags = []string{"compression", "bottommost-compression", "min-level-to-compress", "write-buffer-size",
	"max-write-buffer-number", "target-file-size-base", "max-bytes-for-level-base", "level-multiplier",
	"num-levels", "l0-compaction-trigger", "l0-slowdown-trigger", "l0-stop-trigger", "max-background-jobs",
	"cache-size", "block-size", "bloom-bits"}

// applyLSM sets the LSM options whose flags set says were given. badSize formats an
// unparsable size from its flag name and text.
func (p *Params) applyLSM(f paramFlags, set func(string) bool, add func(string, ...any), badSize string) {
	ints := []struct {
		flag string
		v    int
		dst  *int
	}{
		{"min-level-to-compress", f.minLevelToCompress, &p.KV.MinLevelToCompress},
		{"max-write-buffer-number", f.maxWriteBuffers, &p.KV.MaxWriteBufferNum},
		{"num-levels", f.numLevels, &p.KV.NumLevels},
		{"l0-compaction-trigger", f.l0Compaction, &p.KV.L0CompactionTrigger},
		{"l0-slowdown-trigger", f.l0Slowdown, &p.KV.L0SlowdownTrigger},
		{"l0-stop-trigger", f.l0Stop, &p.KV.L0StopTrigger},
		{"max-background-jobs", f.maxBackgroundJobs, &p.KV.MaxBackgroundJobs},
		{"block-size", f.blockSize, &p.KV.BlockSize},
		{"bloom-bits", f.bloomBits, &p.KV.BloomBitsPerKey},
	}
	for _, d := range ints {
		if set(d.flag) {
			*d.dst = d.v
		}
	}
	if set("compression") {
		p.KV.Compression = f.compression
	}
	if set("bottommost-compression") {
		p.KV.BottommostCompression = f.bottommost
	}
	if set("level-multiplier") {
		p.KV.LevelMultiplier = f.levelMultiplier
	}
	for _, sz := range []struct {
		flag, v string
		dst     *int64
	}{
		{"write-buffer-size", f.writeBuffer, &p.KV.WriteBufferSize},
		{"target-file-size-base", f.targetFile, &p.KV.TargetFileSizeBase},
		{"max-bytes-for-level-base", f.levelBase, &p.KV.MaxBytesForLevelBase},
		{"cache-size", f.cacheSize, &p.KV.BlockCacheSize},
	} {
		if !set(sz.flag) {
			continue
		}
		n, err := units.RAMInBytes(sz.v)
		if err != nil {
			// The preset's value stays, so the range checks do not repeat the problem.
			add(badSize+": not a size: give bytes or a number with a unit, e.g. 32MB or 256KiB (MB = 2^20)", sz.flag, sz.v)
			continue
		}
		*sz.dst = n
	}
}

// applyProfile applies a key-value engine's profile: "option = value" lines (# starts a
// comment) naming LSM flags (lsmFlags), parsed as those flags are. A flag given on the
// command line may not repeat an option of the profile: which one wins would be a guess.
func (p *Params) applyProfile(cfg *config.Run, set func(string) bool) error {
	if strings.TrimSpace(cfg.KVProfile) == "" {
		return nil
	}
	var errs []error
	name := cfg.Profile
	var scratch Params
	fs := pflag.NewFlagSet("profile "+name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	scratch.AddFlags(fs)
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
			errs = append(errs, fmt.Errorf("profile %s line %d: %q is not \"option = value\"", name, n+1, line))
			continue
		case !slices.Contains(lsmFlags, key):
			errs = append(errs, fmt.Errorf("profile %s line %d: %q is not an LSM option; use one of %s", name, n+1, key, strings.Join(lsmFlags, ", ")))
			continue
		case fs.Changed(key):
			errs = append(errs, fmt.Errorf("profile %s line %d: %s is set twice", name, n+1, key))
			continue
		case set(key):
			errs = append(errs, fmt.Errorf("--%s and profile %s's %s both given: drop one (or use another profile)", key, name, key))
			continue
		}
		if err := fs.Set(key, val); err != nil {
			errs = append(errs, fmt.Errorf("profile %s line %d: %s = %q: %v", name, n+1, key, val, err))
		}
	}
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	p.applyLSM(scratch.flags, fs.Changed, add, "profile "+name+": %s = %q")
	return errors.Join(errs...)
}

// seconds converts a flag's seconds; a positive value never rounds to "none".
func seconds(s float64) time.Duration {
	d := time.Duration(s * float64(time.Second))
	if s > 0 && d == 0 {
		d = 1
	}
	if s < 0 && d == 0 {
		d = -1
	}
	return d
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
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
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
		for i, s := range cfg.Steps {
			switch {
			case !slices.Contains(names, s):
				add("--steps: unknown step %q: --sequence %s has %s", s, p.Sequence, strings.Join(names, ","))
			case slices.Index(cfg.Steps, s) < i:
				add("--steps: step %q is listed twice", s)
			}
		}
		if len(cfg.Steps) > 0 && !slices.Contains(cfg.Steps, names[0]) && cfg.WorkDir == "" {
			add("--steps %s needs the keys the %s step writes: add %s to --steps, or pass --workdir DIR holding a database kept with --keep",
				strings.Join(cfg.Steps, ","), names[0], names[0])
		}
	}
	return errors.Join(errs...)
}

// writeRate is the background writer's ops/s: --write-rate-mb MB/s over key + value bytes.
func (p *Params) writeRate() float64 {
	return p.WriteRateMB * float64(mib) / float64(p.KeySize+p.ValueSize)
}

// Stored are the resolved parameters stored with the run.
func (p *Params) Stored() map[string]any {
	o := p.KV
	return map[string]any{
		"scale":                    p.Scale,
		"sequence":                 p.Sequence,
		"num":                      p.Num,
		"key_size":                 p.KeySize,
		"value_size":               p.ValueSize,
		"threads":                  p.Threads,
		"duration_sec":             p.Duration.Seconds(),
		"settle_time_sec":          p.SettleTime.Seconds(),
		"write_rate_mb":            p.WriteRateMB,
		"seek_nexts":               p.SeekNexts,
		"multiread_batch":          p.MultireadBatch,
		"compression_ratio":        compressionRatio,
		"compression":              o.Compression,
		"bottommost_compression":   o.BottommostCompression,
		"min_level_to_compress":    o.MinLevelToCompress,
		"write_buffer_size":        o.WriteBufferSize,
		"max_write_buffer_number":  o.MaxWriteBufferNum,
		"target_file_size_base":    o.TargetFileSizeBase,
		"max_bytes_for_level_base": o.MaxBytesForLevelBase,
		"level_multiplier":         o.LevelMultiplier,
		"num_levels":               o.NumLevels,
		"dynamic_level_bytes":      o.DynamicLevelBytes,
		"l0_compaction_trigger":    o.L0CompactionTrigger,
		"l0_slowdown_trigger":      o.L0SlowdownTrigger,
		"l0_stop_trigger":          o.L0StopTrigger,
		"max_background_jobs":      o.MaxBackgroundJobs,
		"cache_size":               o.BlockCacheSize,
		"block_size":               o.BlockSize,
		"bloom_bits":               o.BloomBitsPerKey,
		"bytes_per_sync":           o.BytesPerSync,
		"sync":                     o.Sync,
	}
}
