package dbbench

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/workload"
)

// resolve parses args as `dbperf run dbbench` would (the suite's flags, and the shared
// --clients, --steps, --time, --scale into cfg) and resolves the parameters.
func resolve(t *testing.T, cfg *config.Run, args ...string) (*Params, error) {
	t.Helper()
	fs := pflag.NewFlagSet("dbbench", pflag.ContinueOnError)
	p := New().NewParams().(*Params)
	p.AddFlags(fs)
	fs.IntVar(&cfg.Clients, "clients", 1, "")
	fs.StringSliceVar(&cfg.Steps, "steps", nil, "")
	fs.StringVar(&cfg.Scale, "scale", "tiny", "")
	var secs float64
	fs.Float64Var(&secs, "time", 0, "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	cfg.Time = time.Duration(secs * float64(time.Second))
	return p, p.Resolve(cfg, fs.Changed)
}

func mustResolve(t *testing.T, args ...string) (*config.Run, *Params) {
	t.Helper()
	cfg := &config.Run{Seed: 7}
	p, err := resolve(t, cfg, args...)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, p
}

func planSteps(t *testing.T, args ...string) []workload.Step {
	t.Helper()
	cfg, p := mustResolve(t, args...)
	steps, err := New().Plan(cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

func names(steps []workload.Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Name())
	}
	return out
}

// currentOrder is §4.1's jobs, names verbatim, overwriteandwait's flush and wait after it.
var currentOrder = []string{
	"fillseq_disable_wal", "revrange", "readrandom", "fwdrange", "multireadrandom", "overwritesome", "flush_mt_l0",
	"revrangewhilewriting", "fwdrangewhilewriting", "readwhilewriting", "overwriteandwait", "overwriteandwait.wait",
}

var legacyOrder = []string{
	"fillrandom", "overwrite", "readseq.after-overwrite", "readrandom.after-overwrite", "seekrandom.nexts=1.after-overwrite",
	"readseq", "readrandom",
	"readseq.pre.seekrandom.nexts=0", "seekrandom.nexts=0", "readseq.pre.seekrandom.nexts=1", "seekrandom.nexts=1",
	"readseq.pre.seekrandom.nexts=10", "seekrandom.nexts=10", "readseq.pre.seekrandom.nexts=100", "seekrandom.nexts=100",
	"overwrite.ratelimited", "readwhilewriting",
	"overwrite.ratelimited.pre.seekrandomwhilewriting.nexts=0", "seekrandomwhilewriting.nexts=0",
	"overwrite.ratelimited.pre.seekrandomwhilewriting.nexts=1", "seekrandomwhilewriting.nexts=1",
	"overwrite.ratelimited.pre.seekrandomwhilewriting.nexts=10", "seekrandomwhilewriting.nexts=10",
	"overwrite.ratelimited.pre.seekrandomwhilewriting.nexts=100", "seekrandomwhilewriting.nexts=100",
}

func shapeOrder() []string {
	out := []string{"fillrandom"}
	for _, st := range []string{"pre_flush", "post_flush", "compact_l0", "compact_l1", "compact_all"} {
		out = append(out, st,
			"readrandom."+st+".bloom", "fwdrange."+st+".bloom", "readrandom."+st+".nobloom", "fwdrange."+st+".nobloom")
	}
	return out
}

func TestPlanNamesAndOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"current (§4.1), the default", nil, currentOrder},
		{"legacy (§4.5)", []string{"--sequence", "legacy"}, legacyOrder},
		{"shape (§4.2)", []string{"--sequence", "shape"}, shapeOrder()},
		{"--steps picks steps in the sequence's order", []string{"--steps", "readrandom,fillseq_disable_wal,flush_mt_l0"},
			[]string{"fillseq_disable_wal", "readrandom", "flush_mt_l0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := names(planSteps(t, tc.args...))
			if !slices.Equal(got, tc.want) {
				t.Errorf("steps:\n got %q\nwant %q", got, tc.want)
			}
			seen := map[string]bool{}
			for _, n := range got {
				if seen[n] {
					t.Errorf("step %q twice", n)
				}
				seen[n] = true
			}
		})
	}
	if got := New().Meta().Steps; !slices.Equal(got, currentOrder) {
		t.Errorf("Meta().Steps = %q", got)
	}
}

// Every step names a group of Meta.Groups, or none for the two steps the reference's
// summaries leave out; each spec has what its kind needs.
func TestPlanGroupsAndSpecs(t *testing.T) {
	groups := map[string]bool{"": true}
	for _, g := range New().Meta().Groups {
		groups[g.Name] = true
	}
	for _, seq := range sequences {
		for _, s := range planSteps(t, "--sequence", seq) {
			if !groups[s.Group()] {
				t.Errorf("%s %s: group %q not in Meta.Groups", seq, s.Name(), s.Group())
			}
			if s.Group() == "" && s.Name() != "revrange" && s.Name() != "overwritesome" {
				t.Errorf("%s %s: no group", seq, s.Name())
			}
		}
	}
	byName := map[string]stepSpec{}
	_, p := mustResolve(t, "--threads", "3", "--num", "3000")
	for _, s := range currentSpecs(p) {
		byName[s.name] = s
	}
	if s := byName["fillseq_disable_wal"]; !s.walOff || s.threads != 1 || s.op != opFill || s.random {
		t.Errorf("fillseq_disable_wal: %+v", s)
	}
	if s := byName["overwritesome"]; s.count != 100 || s.threads != 3 || s.dur != 0 { // NUM_KEYS/N/10 per thread
		t.Errorf("overwritesome: %+v", s)
	}
	if s := byName["revrange"]; !s.reverse || s.threads != 1 || s.dur != p.SettleTime || s.nexts != 10 {
		t.Errorf("revrange: %+v", s)
	}
	if s := byName["flush_mt_l0"]; !slices.Equal(s.parts, []part{partLevelStats, partFlush, partWait, partCompact0, partWait, partMemStats, partLevelStats}) {
		t.Errorf("flush_mt_l0 parts %v (§4.1 row 7)", s.parts)
	}
	if s := byName["overwriteandwait.wait"]; !slices.Equal(s.parts, []part{partFlush, partLevelStats, partWait}) {
		t.Errorf("overwriteandwait.wait parts %v (§4.1 row 11)", s.parts)
	}
	for _, n := range []string{"revrangewhilewriting", "fwdrangewhilewriting", "readwhilewriting"} {
		if s := byName[n]; !s.writer || s.dur != p.Duration || s.threads != 3 {
			t.Errorf("%s: %+v", n, s)
		}
	}
}

// baseOf returns a planned step's stepBase.
func baseOf(t *testing.T, s workload.Step) *stepBase {
	t.Helper()
	switch x := s.(type) {
	case *fillStep:
		return &x.stepBase
	case *readStep:
		return &x.stepBase
	case *writeStep:
		return &x.stepBase
	case *shapeStep:
		return &x.stepBase
	}
	t.Fatalf("%s: step of type %T", s.Name(), s)
	return nil
}

// A step's options: the run's, fillseq_disable_wal's (§4.1 row 1), or without bloom filters.
func TestStepOptions(t *testing.T) {
	_, p := mustResolve(t)
	for _, s := range planSteps(t) {
		o := baseOf(t, s).options()
		if s.Name() == "fillseq_disable_wal" {
			want := p.KV
			want.VectorMemtable, want.DisableWAL, want.MinLevelToCompress = true, true, 0
			if o != want {
				t.Errorf("fillseq_disable_wal options %+v", o)
			}
		} else if o != p.KV {
			t.Errorf("%s: options %+v, want the run's", s.Name(), o)
		}
	}
	for _, s := range planSteps(t, "--sequence", "shape", "--bloom-bits", "12") {
		o := baseOf(t, s).options()
		if want := map[bool]int{true: 0, false: 12}[strings.HasSuffix(s.Name(), ".nobloom")]; o.BloomBitsPerKey != want {
			t.Errorf("%s: %d bloom bits, want %d", s.Name(), o.BloomBitsPerKey, want)
		}
	}
}

func TestValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		cfg  config.Run
		want []string // one line each, in order
	}{
		{"unknown sequence", []string{"--sequence", "newest"}, config.Run{},
			[]string{`--sequence "newest": use one of current, legacy, shape`}},
		{"unknown step names the sequence's", []string{"--steps", "fillseq_disable_wal,readrandom.t2"}, config.Run{},
			[]string{`--steps: unknown step "readrandom.t2": --sequence current has fillseq_disable_wal,revrange,`}},
		{"steps without the fill on a fresh database", []string{"--steps", "readrandom"}, config.Run{},
			[]string{"--steps readrandom needs the keys the fillseq_disable_wal step writes: add fillseq_disable_wal to --steps, or pass --workdir DIR"}},
		{"a kept database may skip the fill", []string{"--steps", "readrandom"}, config.Run{WorkDir: "/kept"}, nil},
		{"threads and clients", []string{"--threads", "4", "--clients", "4"}, config.Run{},
			[]string{"--threads and --clients both given: --clients 4 is --threads 4; give one"}},
		{"duration and time", []string{"--duration", "4", "--time", "4"}, config.Run{},
			[]string{"--duration and --time both given: --time is --duration for this workload; give one"}},
		{"sizes", []string{"--write-buffer-size", "32XB", "--target-file-size-base", "1KiB", "--cache-size", "1GB"}, config.Run{},
			[]string{`--write-buffer-size "32XB": not a size: give bytes or a number with a unit, e.g. 32MB or 256KiB (MB = 2^20)`,
				"--target-file-size-base must be at least 64KiB, got 1024 bytes"}},
		{"numbers", []string{"--num", "0", "--value-size", "0", "--threads", "0", "--duration", "-1", "--write-rate-mb", "0",
			"--seek-nexts", "-1", "--multiread-batch", "0"}, config.Run{},
			[]string{"--num must be within 1..4611686018427387904 (what --key-size 20 encodes), got 0",
				"--value-size must be within 1..1048576 bytes, got 0",
				"--threads must be at least 1, got 0",
				"--duration must be a positive number of seconds, got -1",
				"--write-rate-mb must be a positive number of MB/s, got 0",
				"--seek-nexts must not be negative, got -1",
				"--multiread-batch must be at least 1, got 0"}},
		{"key size bounds num", []string{"--key-size", "2", "--num", "70000"}, config.Run{},
			[]string{"--num must be within 1..65536 (what --key-size 2 encodes), got 70000"}},
		{"LSM options", []string{"--compression", "lzma", "--bottommost-compression", "brotli", "--num-levels", "1",
			"--max-write-buffer-number", "1", "--level-multiplier", "1", "--l0-compaction-trigger", "8", "--l0-slowdown-trigger", "4",
			"--max-background-jobs", "0", "--block-size", "10", "--bloom-bits", "-1"}, config.Run{},
			[]string{`--compression "lzma": use one of none, snappy, lz4, zstd`,
				`--bottommost-compression "brotli": use one of none, snappy, lz4, zstd, disable, or ""`,
				"--num-levels must be within 2..20, got 1",
				"--max-write-buffer-number must be at least 2, got 1",
				"--level-multiplier must be at least 2, got 1",
				"--l0-compaction-trigger, --l0-slowdown-trigger, --l0-stop-trigger must be 1 ≤ compaction ≤ slowdown ≤ stop, got 8, 4, 30",
				"--max-background-jobs must be at least 1, got 0",
				"--block-size must be within 256..4194304 bytes, got 10",
				"--bloom-bits must be within 0..64 (0: no bloom filter), got -1"}},
		{"shape needs bloom filters", []string{"--sequence", "shape", "--bloom-bits", "0"}, config.Run{},
			[]string{"--bloom-bits 0 with --sequence shape: the shape sequence compares reads with and without bloom filters; give bits > 0"}},
		{"unknown scale", []string{"--scale", "huge"}, config.Run{},
			[]string{`--scale: unknown scale "huge": use one of tiny, small, reference, large`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			_, err := resolve(t, &cfg, tc.args...)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("%d lines, want %d:\n%v", len(lines), len(tc.want), err)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("line %d:\n got %s\nwant %s…", i+1, lines[i], w)
				}
			}
		})
	}
}

func TestResolve(t *testing.T) {
	cfg, p := mustResolve(t, "--scale", "reference")
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
	cfg, p = mustResolve(t, "--scale", "tiny", "--time", "3", "--clients", "4", "--write-buffer-size", "512KiB",
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
	_, p = mustResolve(t, "--sequence", "legacy")
	if p.KeySize != 8 {
		t.Errorf("legacy key size %d, want all3.sh's 8", p.KeySize)
	}
	_, p = mustResolve(t, "--sequence", "legacy", "--key-size", "16")
	if p.KeySize != 16 {
		t.Errorf("legacy with --key-size 16: %d", p.KeySize)
	}
	if got := p.Stored(); got["num"] != int64(20_000) || got["sequence"] != "legacy" || got["write_buffer_size"] != int64(256<<10) ||
		got["compression_ratio"] != 0.5 {
		t.Errorf("stored: %v", got)
	}
}

// The tiny preset still has several levels: its data (after compression) is many times
// L1's target.
func TestTinyHasLevels(t *testing.T) {
	_, p := mustResolve(t)
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
	cfg := &config.Run{Seed: 7, Profile: "mine", KVProfile: `# a comment
compression = zstd      # trailing comment
write-buffer-size = 2MB
bloom-bits=0

l0-compaction-trigger = 2
`}
	p, err := resolve(t, cfg, "--block-size", "4096")
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
		cfg := &config.Run{Seed: 7, Profile: "mine", KVProfile: c.profile}
		if _, err := resolve(t, cfg, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("profile %q %v: error %v, want one containing %q", c.profile, c.args, err, c.want)
		}
	}
}
