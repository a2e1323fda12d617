package dbbench

import (
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/workload/workloadtest"
)

func TestResolve(t *testing.T) {
	cfg, p := workloadtest.MustResolve[*Params](t, New(), "--scale", "reference")
	o := p.KV
	// benchmark_compare.sh's defaults (§4.1).
	if p.Num != 1_000_000 || p.Threads != 16 || p.Duration != 65*time.Second || p.KeySize != 20 || p.ValueSize != 400 ||
		p.WriteRateMB != 2 || p.SeekNexts != 10 || p.MultireadBatch != 10 || cfg.Clients != 16 {
		t.Errorf("reference: %+v", p)
	}
	if o.Compression != "lz4" || o.BottommostCompression != "disable" || o.MinLevelToCompress != -1 ||
		o.WriteBufferSize != 32<<20 || o.TargetFileSizeBase != 32<<20 || o.MaxBytesForLevelBase != 128<<20 ||
		o.LevelMultiplier != 8 || o.NumLevels != 8 || o.L0CompactionTrigger != 4 || o.L0SlowdownTrigger != 20 ||
		o.L0StopTrigger != 30 || o.MaxBackgroundJobs != 8 || o.BlockSize != 8192 || o.BloomBitsPerKey != 10 ||
		o.MaxWriteBufferNum != 8 || !o.DynamicLevelBytes || o.BytesPerSync != 1<<20 {
		t.Errorf("reference LSM options: %+v", o)
	}
	if p.KVOptions() != o {
		t.Error("KVOptions() differs from the params' options")
	}
	cfg, p = workloadtest.MustResolve[*Params](t, New(), "--scale", "tiny", "--time", "3", "--clients", "4", "--write-buffer-size", "512KiB",
		"--max-bytes-for-level-base", "2MB", "--cache-size", "1073741824", "--compression", "zstd", "--bloom-bits", "0")
	if p.Duration != 3*time.Second || p.Threads != 4 || cfg.Clients != 4 || p.KV.WriteBufferSize != 512<<10 ||
		p.KV.MaxBytesForLevelBase != 2<<20 || p.KV.BlockCacheSize != 1<<30 || p.KV.Compression != "zstd" ||
		p.KV.BloomBitsPerKey != 0 || p.KV.TargetFileSizeBase != 256<<10 || p.ReportInterval() != time.Second {
		t.Errorf("tiny with flags: %+v", p)
	}
	// The writer's rate: 2 MB/s over 420-byte keys and values.
	if r := p.writeRate(); r < 4993 || r > 4994 {
		t.Errorf("write rate %g ops/s, want 2·2^20/420", r)
	}
	_, p = workloadtest.MustResolve[*Params](t, New(), "--sequence", "legacy")
	if p.KeySize != 8 {
		t.Errorf("legacy key size %d, want all3.sh's 8", p.KeySize)
	}
	_, p = workloadtest.MustResolve[*Params](t, New(), "--sequence", "legacy", "--key-size", "16")
	if p.KeySize != 16 {
		t.Errorf("legacy with --key-size 16: %d", p.KeySize)
	}
	if got := p.Stored(); got["num"] != int64(20_000) || got["sequence"] != "legacy" || got["write_buffer_size"] != int64(256<<10) ||
		got["compression_ratio"] != 0.5 {
		t.Errorf("stored: %v", got)
	}
}

func TestValidation(t *testing.T) {
	workloadtest.Validation[*Params](t, New(), []workloadtest.Case{
		{Name: "unknown sequence", Args: []string{"--sequence", "newest"},
			Want: []string{`--sequence "newest": use one of current, legacy, shape`}},
		{Name: "unknown step names the sequence's", Args: []string{"--steps", "fillseq_disable_wal,readrandom.t2"},
			Want: []string{`--steps: unknown step "readrandom.t2": --sequence current has fillseq_disable_wal,revrange,`}},
		{Name: "steps without the fill on a fresh database", Args: []string{"--steps", "readrandom"},
			Want: []string{"--steps readrandom needs the keys the fillseq_disable_wal step writes: add fillseq_disable_wal to --steps, or pass --workdir DIR"}},
		{Name: "a kept database may skip the fill", Args: []string{"--steps", "readrandom"}, Cfg: config.Run{WorkDir: "/kept"}},
		{Name: "threads and clients", Args: []string{"--threads", "4", "--clients", "4"},
			Want: []string{"--threads and --clients both given: --clients 4 is --threads 4; give one"}},
		{Name: "duration and time", Args: []string{"--duration", "4", "--time", "4"},
			Want: []string{"--duration and --time both given: --time is --duration for this workload; give one"}},
		{Name: "sizes", Args: []string{"--write-buffer-size", "32XB", "--target-file-size-base", "1KiB", "--cache-size", "1GB"},
			Want: []string{`--write-buffer-size "32XB": not a size: give bytes or a number with a unit, e.g. 32MB or 256KiB (MB = 2^20)`,
				"--target-file-size-base must be at least 64KiB, got 1024 bytes"}},
		{Name: "numbers", Args: []string{"--num", "0", "--value-size", "0", "--threads", "0", "--duration", "-1", "--write-rate-mb", "0",
			"--seek-nexts", "-1", "--multiread-batch", "0"},
			Want: []string{"--num must be within 1..4611686018427387904 (what --key-size 20 encodes), got 0",
				"--value-size must be within 1..1048576 bytes, got 0",
				"--threads must be at least 1, got 0",
				"--duration must be a positive number of seconds, got -1",
				"--write-rate-mb must be a positive number of MB/s, got 0",
				"--seek-nexts must not be negative, got -1",
				"--multiread-batch must be at least 1, got 0"}},
		{Name: "key size bounds num", Args: []string{"--key-size", "2", "--num", "70000"},
			Want: []string{"--num must be within 1..65536 (what --key-size 2 encodes), got 70000"}},
		{Name: "LSM options", Args: []string{"--compression", "lzma", "--bottommost-compression", "brotli", "--num-levels", "1",
			"--max-write-buffer-number", "1", "--level-multiplier", "1", "--l0-compaction-trigger", "8", "--l0-slowdown-trigger", "4",
			"--max-background-jobs", "0", "--block-size", "10", "--bloom-bits", "-1"},
			Want: []string{`--compression "lzma": use one of none, snappy, lz4, zstd`,
				`--bottommost-compression "brotli": use one of none, snappy, lz4, zstd, disable, or ""`,
				"--num-levels must be within 2..20, got 1",
				"--max-write-buffer-number must be at least 2, got 1",
				"--level-multiplier must be at least 2, got 1",
				"--l0-compaction-trigger, --l0-slowdown-trigger, --l0-stop-trigger must be 1 ≤ compaction ≤ slowdown ≤ stop, got 8, 4, 30",
				"--max-background-jobs must be at least 1, got 0",
				"--block-size must be within 256..4194304 bytes, got 10",
				"--bloom-bits must be within 0..64 (0: no bloom filter), got -1"}},
		{Name: "shape needs bloom filters", Args: []string{"--sequence", "shape", "--bloom-bits", "0"},
			Want: []string{"--bloom-bits 0 with --sequence shape: the shape sequence compares reads with and without bloom filters; give bits > 0"}},
		{Name: "unknown scale", Args: []string{"--scale", "huge"},
			Want: []string{`--scale: unknown scale "huge": use one of tiny, small, reference, large`}},
	})
}

// The tiny preset still has several levels: its data (after compression) is many times
// L1's target.
func TestTinyHasLevels(t *testing.T) {
	_, p := workloadtest.MustResolve[*Params](t, New())
	data := p.Num * int64(p.KeySize+p.ValueSize) / 2
	if data < 3*p.KV.MaxBytesForLevelBase || p.KV.WriteBufferSize > p.KV.MaxBytesForLevelBase/2 {
		t.Errorf("tiny: %d bytes of data over L1 %d, write buffer %d", data, p.KV.MaxBytesForLevelBase, p.KV.WriteBufferSize)
	}
}

// TestProfile: a key-value engine's profile sets LSM options over the scale's; a flag may
// not repeat one; anything else in it is refused with its line.
func TestProfile(t *testing.T) {
	tiny, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Run{Scale: "tiny", Seed: 7, Profile: "mine", KVProfile: `# a comment
compression = zstd      # trailing comment
write-buffer-size = 2MB
bloom-bits=0

l0-compaction-trigger = 2
`}
	p, err := workloadtest.Resolve[*Params](t, New(), cfg, "--block-size", "4096")
	if err != nil {
		t.Fatal(err)
	}
	if p.KV.Compression != "zstd" || p.KV.WriteBufferSize != 2<<20 || p.KV.BloomBitsPerKey != 0 || p.KV.L0CompactionTrigger != 2 {
		t.Errorf("options after the profile: %+v", p.KV)
	}
	if p.KV.BlockSize != 4096 || p.KV.TargetFileSizeBase != tiny.KV.TargetFileSizeBase {
		t.Errorf("the flag or the scale's values were lost: block size %d, target file size %d (tiny's %d)",
			p.KV.BlockSize, p.KV.TargetFileSizeBase, tiny.KV.TargetFileSizeBase)
	}
	if p.Stored()["compression"] != "zstd" {
		t.Errorf("stored compression = %v, want the profile's zstd", p.Stored()["compression"])
	}

	for _, c := range []struct {
		profile string
		args    []string
		want    string
	}{
		{"compression = zstd", []string{"--compression", "lz4"}, "--compression and profile mine's compression both given"},
		{"num = 5", nil, `line 1: "num" is not an LSM option`},
		{"just words", nil, `line 1: "just words" is not "option = value"`},
		{"# x\nblock-size = big", nil, `line 2: block-size = "big"`},
		{"cache-size = lots", nil, `profile mine: cache-size = "lots": not a size`},
		{"bloom-bits = 1\nbloom-bits = 2", nil, "line 2: bloom-bits is set twice"},
		{"compression = brotli", nil, "compression"}, // Validate names the unknown compression
	} {
		cfg := &config.Run{Scale: "tiny", Seed: 7, Profile: "mine", KVProfile: c.profile}
		if _, err := workloadtest.Resolve[*Params](t, New(), cfg, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("profile %q %v: error %v, want one containing %q", c.profile, c.args, err, c.want)
		}
	}
}
