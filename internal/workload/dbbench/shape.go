package dbbench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	units "github.com/docker/go-units"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

var (
	_ workload.Step   = (*shapeStep)(nil)
	_ workload.Noter  = (*shapeStep)(nil)
	_ workload.Worker = (*shaper)(nil)
)

// shapeStep runs LSM-shape commands (§4.2) one after the other: flush_mt_l0's
// levelstats, flush, waitforcompaction, compact0, waitforcompaction, memstats,
// levelstats (§4.1 row 7), overwriteandwait's flush, levelstats, waitforcompaction (row
// 11), and the shape sequence's state changes. Each command is one timed op of its own
// label (one group of one worker each, each waiting for the one before), so the runner
// times every command; the step's note says what each did, levels and memtables
// included. A command the engine does not have is noted as skipped with the engine's
// reason and the rest go on; the shape sequence then skips the reads of a shape it could
// not make.
type shapeStep struct {
	stepBase

	mu    sync.Mutex
	notes []string
	// skipped: commands the engine does not have (part → reason).
	skipped map[part]string
}

// Load has one worker per command, chained.
func (s *shapeStep) Load(_ context.Context, h engine.Handle) (workload.Load, error) {
	kv, err := engine.AsKV(h)
	if err != nil {
		return workload.Load{}, err
	}
	s.mu.Lock()
	s.notes, s.skipped = nil, map[part]string{}
	s.mu.Unlock()
	var groups []workload.Group
	var prev chan struct{}
	primary := ""
	for _, pt := range s.spec.parts {
		done := make(chan struct{})
		w := &shaper{s: s, kv: kv, part: pt, after: prev, done: done}
		prev = done
		groups = append(groups, workload.Group{Label: string(pt), Role: roleShape, Unit: workload.UnitOps,
			UntilDone: true, Workers: []workload.Worker{w}})
		if primary == "" && pt != partLevelStats && pt != partMemStats {
			primary = string(pt)
		}
	}
	if primary == "" {
		primary = string(s.spec.parts[0])
	}
	return workload.Load{Kind: kindShape, Primary: primary, Groups: groups}, nil
}

// Verify checks the shape the commands left: no memtable entries after a flush, no L0
// file after compact0 (nothing writes during the step).
func (s *shapeStep) Verify(ctx context.Context, h engine.Handle) (string, error) {
	kv, err := engine.AsKV(h)
	if err != nil {
		return "", err
	}
	pr, err := kv.Properties(ctx)
	if err != nil {
		return "", fmt.Errorf("dbbench %s audit: properties: %w", s.spec.name, err)
	}
	s.mu.Lock()
	skipped := s.skipped
	s.mu.Unlock()
	var checks []string
	var errs []error
	if s.has(partFlush) && skipped[partFlush] == "" {
		switch {
		case pr.MemtableEntries == engine.Unknown:
			checks = append(checks, "memtable entries unknown")
		case pr.MemtableEntries > 0 || pr.ImmutableMemtables > 0:
			errs = append(errs, fmt.Errorf("after flush the memtables hold %d entries (%d immutable memtables)", pr.MemtableEntries, pr.ImmutableMemtables))
		default:
			checks = append(checks, "memtable empty after flush")
		}
	}
	if s.has(partCompact0) && skipped[partCompact0] == "" {
		if n := levelFiles(pr, 0); n > 0 {
			errs = append(errs, fmt.Errorf("after compact0 L0 holds %d files", n))
		} else {
			checks = append(checks, "L0 empty after compact0")
		}
	}
	for _, pt := range s.spec.parts {
		if why := skipped[pt]; why != "" {
			checks = append(checks, fmt.Sprintf("%s skipped: %s", pt, why))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	return strings.Join(checks, "; "), nil
}

// Note says what each command did, in order.
func (s *shapeStep) Note() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.notes, "\n")
}

func (s *shapeStep) has(pt part) bool {
	for _, x := range s.spec.parts {
		if x == pt {
			return true
		}
	}
	return false
}

func (s *shapeStep) note(pt part, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, fmt.Sprintf("%s: %s", pt, text))
}

func (s *shapeStep) skip(pt part, why string) {
	s.mu.Lock()
	s.skipped[pt] = why
	s.mu.Unlock()
	s.note(pt, "skipped: "+why)
	if s.spec.state != "" {
		s.p.setUnreached(s.spec.state, fmt.Sprintf("%s: %s", pt, why))
	}
}

// shaper runs one command once, after the one before it is done.
type shaper struct {
	s     *shapeStep
	kv    engine.KV
	part  part
	after <-chan struct{}
	done  chan struct{}
	ran   bool
}

// Init needs no session: the commands are the database's.
func (w *shaper) Init(context.Context, engine.Session) error { return nil }

// Ready waits for the command before this one.
func (w *shaper) Ready(ctx context.Context) error {
	if w.after == nil || w.ran {
		return nil
	}
	select {
	case <-w.after:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Op runs the command; then ErrDone. An unsupported command is noted and not timed.
func (w *shaper) Op(ctx context.Context) (int64, error) {
	if w.ran {
		return 0, workload.ErrDone
	}
	w.ran = true
	defer close(w.done)
	text, err := w.run(ctx)
	if errors.Is(err, engine.ErrUnsupported) {
		w.s.skip(w.part, err.Error())
		return 0, workload.ErrDone
	}
	if err != nil {
		return 0, fmt.Errorf("dbbench %s: %s: %w", w.s.spec.name, w.part, err)
	}
	w.s.note(w.part, text)
	return 0, nil
}

// Close has nothing to release.
func (w *shaper) Close() error { return nil }

// run does the command and says what it did.
func (w *shaper) run(ctx context.Context) (string, error) {
	switch w.part {
	case partFlush:
		if err := w.kv.Flush(ctx); err != nil {
			return "", err
		}
		return "memtables flushed", nil
	case partWait:
		return w.kv.WaitForCompaction(ctx)
	case partCompact0:
		return w.kv.CompactLevel(ctx, 0)
	case partCompact1:
		pr, err := w.kv.Properties(ctx)
		if err != nil {
			return "", err
		}
		l, ok := compact1Level(pr)
		if !ok {
			return "nothing to do: fewer than two non-empty levels below L0", nil
		}
		detail, err := w.kv.CompactLevel(ctx, l)
		return fmt.Sprintf("L%d: %s", l, detail), err
	case partCompactAll:
		if err := w.kv.CompactAll(ctx); err != nil {
			return "", err
		}
		return "whole key range compacted", nil
	case partLevelStats:
		pr, err := w.kv.Properties(ctx)
		if err != nil {
			return "", err
		}
		return levelStats(pr), nil
	case partMemStats:
		pr, err := w.kv.Properties(ctx)
		if err != nil {
			return "", err
		}
		return memStats(pr), nil
	}
	return "", fmt.Errorf("unknown command %q", w.part)
}

// compact1Level is compact1's level (§4.2): the first non-empty level > 0, when a
// non-empty level lies below it to compact into.
func compact1Level(pr engine.KVProps) (int, bool) {
	var nonEmpty []int
	for _, l := range pr.Levels {
		if l.Level > 0 && l.Files > 0 {
			nonEmpty = append(nonEmpty, l.Level)
		}
	}
	if len(nonEmpty) < 2 {
		return 0, false
	}
	return nonEmpty[0], true
}

// levelFiles is level l's file count (0 when the engine lists no such level).
func levelFiles(pr engine.KVProps, l int) int64 {
	for _, x := range pr.Levels {
		if x.Level == l {
			return x.Files
		}
	}
	return 0
}

// levelStats renders the tree: "L0 2 files 1.2MiB, L3 …; live 4.5MiB" (empty levels left out).
func levelStats(pr engine.KVProps) string {
	var b strings.Builder
	for _, l := range pr.Levels {
		if l.Files == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "L%d %d files %s", l.Level, l.Files, size(l.Bytes))
	}
	if b.Len() == 0 {
		b.WriteString("no SST files")
	}
	fmt.Fprintf(&b, "; live %s; pending compaction %s", size(pr.LiveBytes), size(pr.PendingCompactionBytes))
	return b.String()
}

// memStats renders the memtables.
func memStats(pr engine.KVProps) string {
	return fmt.Sprintf("memtable %s entries %s, %s immutable", count(pr.MemtableEntries), size(pr.MemtableBytes), count(pr.ImmutableMemtables))
}

func size(n int64) string {
	if n == engine.Unknown {
		return "unknown"
	}
	return units.BytesSize(float64(n))
}

func count(n int64) string {
	if n == engine.Unknown {
		return "unknown"
	}
	return fmt.Sprint(n)
}
