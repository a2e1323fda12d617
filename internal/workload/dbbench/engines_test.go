package dbbench_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/workload"
	"github.com/dbperf/dbperf/internal/workload/dbbench"
	"github.com/dbperf/dbperf/internal/workload/workloadtest"
)

// These tests run whole tiny sequences through the runner on real engines: every sequence
// on Pebble (pure Go, fast), with operations refused as an engine without them would
// (refusingKV), and the current sequence on every key-value engine of the catalog.

type quiet struct{}

func (quiet) StepStarted(string, workload.Load) {}
func (quiet) Interval(string, metrics.Interval) {}

// runSequence runs every step of the plan on kv and checks what §4.1 promises: every
// step ok (or skipped with a reason), the fill wrote --num keys, after flush_mt_l0 (and
// every other flush) the memtable is empty and after compact0 L0 has no file.
func runSequence(t *testing.T, kv engine.KV, cfg *config.Run, p *dbbench.Params) map[string]metrics.StepResult {
	t.Helper()
	steps, err := dbbench.New().Plan(cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := &runner.Runner{Handle: kv, Interval: time.Second}
	out := map[string]metrics.StepResult{}
	for _, s := range steps {
		res := r.Run(ctx, s, quiet{})
		out[s.Name()] = res
		switch {
		case res.Status == metrics.StatusSkipped && strings.TrimSpace(res.Error) != "":
			t.Logf("%s: skipped: %s", s.Name(), res.Error)
			continue
		case res.Status != metrics.StatusOK:
			t.Fatalf("%s: %s: %s (audit %s)", s.Name(), res.Status, res.Error, res.Audit.Detail)
		}
		t.Logf("%s: %.2fs, audit: %s; note: %s", s.Name(), res.Seconds, res.Audit.Detail, strings.ReplaceAll(res.Note, "\n", " | "))
		pr, err := kv.Properties(ctx)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasPrefix(s.Name(), "fill"):
			if n := label(res, "put").Events; n != p.Num {
				t.Errorf("%s put %d keys, want --num %d", s.Name(), n, p.Num)
			}
		case s.Name() == "flush_mt_l0" || s.Name() == "post_flush" || s.Name() == "compact_l0":
			if pr.MemtableEntries > 0 {
				t.Errorf("%s: memtable holds %d entries after flush", s.Name(), pr.MemtableEntries)
			}
			if s.Name() != "post_flush" && !strings.Contains(res.Note, "compact0: skipped") && pr.Levels[0].Files != 0 {
				t.Errorf("%s: L0 holds %d files after compact0", s.Name(), pr.Levels[0].Files)
			}
		}
	}
	return out
}

func label(res metrics.StepResult, name string) metrics.LabelStats {
	for _, l := range res.Labels {
		if l.Label == name {
			return l
		}
	}
	return metrics.LabelStats{}
}

func TestSequencesOnPebble(t *testing.T) {
	for _, seq := range []string{"current", "legacy", "shape"} {
		t.Run(seq, func(t *testing.T) {
			t.Parallel() // each sequence its own engine; asserts what is stored, not rates
			cfg, p := workloadtest.MustResolve[*dbbench.Params](t, dbbench.New(), "--sequence", seq, "--duration", "0.2", "--settle-time", "0.2", "--num", "5000")
			kv := openPebble(t, p.KVOptions())
			res := runSequence(t, kv, cfg, p)
			if seq == "current" {
				if kv.reopens != 2 {
					t.Errorf("%d reopens, want 2 (fillseq_disable_wal's options, then the run's)", kv.reopens)
				}
				if rw := res["readwhilewriting"]; label(rw, "put").Events == 0 || label(rw, "get").Events == 0 {
					t.Errorf("readwhilewriting: %+v", rw.Labels)
				}
				if l := label(res["overwritesome"], "put"); l.Events != 2*(5000/2/10) {
					t.Errorf("overwritesome put %d keys", l.Events)
				}
			}
		})
	}
}

// An operation the engine does not have: a read step is skipped with the engine's reason;
// a shape command is noted as skipped, and the shape sequence skips the reads of a shape
// it could not make.
func TestUnsupported(t *testing.T) {
	t.Parallel()
	cfg, p := workloadtest.MustResolve[*dbbench.Params](t, dbbench.New(), "--sequence", "shape", "--duration", "0.1", "--num", "3000")
	kv := openPebble(t, p.KVOptions())
	kv.unsupported["flush"] = true
	res := runSequence(t, kv, cfg, p)
	if r := res["post_flush"]; r.Status != metrics.StatusOK || !strings.Contains(r.Note, "flush: skipped: refusing: flush: not supported") {
		t.Errorf("post_flush: %s, note %q", r.Status, r.Note)
	}
	if r := res["readrandom.post_flush.bloom"]; r.Status != metrics.StatusSkipped || !strings.Contains(r.Error, "the post_flush shape was not made") {
		t.Errorf("readrandom.post_flush.bloom: %s %q", r.Status, r.Error)
	}
	if r := res["readrandom.compact_all.bloom"]; r.Status != metrics.StatusOK {
		t.Errorf("readrandom.compact_all.bloom: %s %q", r.Status, r.Error)
	}

	cfg, p = workloadtest.MustResolve[*dbbench.Params](t, dbbench.New(), "--duration", "0.1", "--settle-time", "0.1", "--num", "3000")
	kv = openPebble(t, p.KVOptions())
	kv.unsupported["multiget"] = true
	kv.unsupported["compact0"] = true
	res = runSequence(t, kv, cfg, p)
	if r := res["multireadrandom"]; r.Status != metrics.StatusSkipped || !strings.Contains(r.Error, "multiget: refusing: multiget: not supported by this engine") {
		t.Errorf("multireadrandom: %s %q", r.Status, r.Error)
	}
	if r := res["flush_mt_l0"]; r.Status != metrics.StatusOK || !strings.Contains(r.Audit.Detail, "compact0 skipped") {
		t.Errorf("flush_mt_l0: %s %q", r.Status, r.Audit.Detail)
	}
}

// TestTinyCurrentOnEngines runs the whole tiny current sequence on every key-value engine
// of the catalog.
func TestTinyCurrentOnEngines(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real engines")
	}
	ran := 0
	for _, eng := range catalog.Engines(catalog.EngineOptions{}) {
		if eng.Meta().Kind != engine.KindKV {
			continue
		}
		ran++
		t.Run(eng.Meta().Name, func(t *testing.T) {
			t.Parallel() // the engines side by side: asserts what is stored, not rates
			cfg, p := workloadtest.MustResolve[*dbbench.Params](t, dbbench.New())
			dir := t.TempDir()
			h, err := eng.Open(context.Background(), engine.Target{Dir: dir, KV: p.KVOptions()})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			kv, err := engine.AsKV(h)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			runSequence(t, kv, cfg, p)
			t.Logf("%s: tiny current sequence in %v", eng.Meta().Name, time.Since(start))
		})
	}
	if ran == 0 {
		if os.Getenv("CI") != "" {
			t.Log("no key-value engine in the catalog yet")
		}
		t.Skip("no key-value engine in the catalog yet")
	}
}

// TestReadsCatchChangedValues: readrandom's audit compares values with the generator's
// (every 16th byte for byte, every one's length), so a tree whose values were all
// replaced by others of the same length fails it, and the untouched tree passes.
func TestReadsCatchChangedValues(t *testing.T) {
	cfg, p := workloadtest.MustResolve[*dbbench.Params](t, dbbench.New(), "--duration", "0.3", "--num", "3000")
	cfg.Steps = []string{"fillseq_disable_wal", "readrandom"}
	steps, err := dbbench.New().Plan(cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 {
		t.Fatalf("%d steps planned, want 2", len(steps))
	}
	ctx := context.Background()
	kv := openPebble(t, p.KVOptions())
	r := &runner.Runner{Handle: kv, Interval: time.Second}
	for _, s := range steps {
		if res := r.Run(ctx, s, quiet{}); res.Status != metrics.StatusOK {
			t.Fatalf("%s: %s: %s", s.Name(), res.Status, res.Error)
		} else if s.Name() == "readrandom" && !strings.Contains(res.Audit.Detail, "values compared with the generator's") {
			t.Fatalf("readrandom's audit compared no value: %q", res.Audit.Detail)
		}
	}

	s, err := kv.NewKVSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it, err := s.NewIterator()
	if err != nil {
		t.Fatal(err)
	}
	var keys, vals [][]byte
	for ok := it.SeekGE(nil); ok; ok = it.Next() {
		keys = append(keys, bytes.Clone(it.Key()))
		vals = append(vals, bytes.Repeat([]byte{'x'}, len(it.Value())))
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3000 {
		t.Fatalf("%d keys after the fill, want 3000", len(keys))
	}
	for i := range keys {
		if err := s.Put(keys[i], vals[i]); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Close()
	res := r.Run(ctx, steps[1], quiet{})
	if res.Status == metrics.StatusOK || !strings.Contains(res.Error, "differ from those written") {
		t.Errorf("readrandom over changed values: %s, %q; want its audit to fail", res.Status, res.Error)
	}
}
