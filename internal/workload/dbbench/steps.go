package dbbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

var (
	_ workload.Step   = (*fillStep)(nil)
	_ workload.Step   = (*readStep)(nil)
	_ workload.Step   = (*writeStep)(nil)
	_ workload.Worker = (*filler)(nil)
	_ workload.Worker = (*getter)(nil)
	_ workload.Worker = (*multiGetter)(nil)
	_ workload.Worker = (*ranger)(nil)
	_ workload.Worker = (*scanner)(nil)
	_ workload.Worker = (*overwriter)(nil)
)

// kvBytes is the user data of one key: db_bench's bytes per key for MB/s.
func (p *plan) kvBytes() int64 { return int64(p.p.KeySize + p.p.ValueSize) }

// stream is a worker's random stream: step, role and worker number name it.
// The streams are kept across the step's Loads: a timed step run as slices
// (workload.Steady) continues each worker's stream instead of repeating it.
func (s *stepBase) stream(role string, i int) *rand.Rand {
	key := role + "/" + strconv.Itoa(i)
	if r, ok := s.streams[key]; ok {
		return r
	}
	if s.streams == nil {
		s.streams = map[string]*rand.Rand{}
	}
	r := workload.Stream(s.p.seed, Name, s.spec.name, role, strconv.Itoa(i))
	s.streams[key] = r
	return r
}

// session is what every worker has: its own KVSession and key buffer.
type session struct {
	kv  engine.KV
	s   engine.KVSession
	key []byte
}

func (w *session) open(ctx context.Context, keySize int) error {
	s, err := w.kv.NewKVSession(ctx)
	if err != nil {
		return fmt.Errorf("open a session: %w", err)
	}
	w.s, w.key = s, make([]byte, keySize)
	return nil
}

func (w *session) close() error {
	if w.s == nil {
		return nil
	}
	err := w.s.Close()
	w.s = nil
	return err
}

// opError wraps an engine error with the step and what failed; an operation the engine
// does not have becomes a skip (workload.Skip) with the engine's reason.
func opError(step, what string, err error) error {
	if errors.Is(err, engine.ErrUnsupported) {
		return workload.Skip(fmt.Sprintf("%s: %v", what, err))
	}
	return fmt.Errorf("dbbench %s: %s: %w", step, what, err)
}

// ---- fill (fillseq_disable_wal, fillrandom) -----------------------------------------

// fillStep writes every key once, in key order (fillseq) or in a seeded random
// permutation (fillrandom), one Put per op, on one thread as the reference does.
type fillStep struct {
	stepBase
}

// Load has one filler; the step ends when it has written --num keys.
func (s *fillStep) Load(_ context.Context, h engine.Handle) (workload.Load, error) {
	kv, err := engine.AsKV(h)
	if err != nil {
		return workload.Load{}, err
	}
	w := &filler{step: s.spec.name, session: session{kv: kv}, n: uint64(s.p.p.Num), keySize: s.p.p.KeySize, vals: s.p.values()}
	if s.spec.random {
		w.perm = newPermutation(w.n, s.stream("permutation", 0))
	}
	g := workload.Group{Label: labelPut, Role: roleWrite, Unit: workload.UnitOps, BytesPerOp: s.p.kvBytes(),
		UntilDone: true, Workers: []workload.Worker{w}}
	return workload.Load{Kind: kindLoad, Primary: labelPut, Groups: []workload.Group{g}}, nil
}

// Verify scans every key: --num keys, in order, and a sample of values as generated.
func (s *fillStep) Verify(ctx context.Context, h engine.Handle) (string, error) {
	kv, err := engine.AsKV(h)
	if err != nil {
		return "", err
	}
	return scanAudit(ctx, kv, s.p, s.spec.name)
}

// filler writes keys next..n-1 (of the permutation, when there is one).
type filler struct {
	session
	step    string
	keySize int
	n, next uint64
	perm    *permutation
	vals    *values
}

// Init opens the session.
func (w *filler) Init(ctx context.Context, _ engine.Session) error {
	if err := w.open(ctx, w.keySize); err != nil {
		return fmt.Errorf("dbbench %s: %w", w.step, err)
	}
	return nil
}

// Ready never waits.
func (w *filler) Ready(context.Context) error { return nil }

// Op puts the next key.
func (w *filler) Op(context.Context) (int64, error) {
	if w.next >= w.n {
		return 0, workload.ErrDone
	}
	i := w.next
	if w.perm != nil {
		i = w.perm.at(i)
	}
	putKey(w.key, i)
	if err := w.s.Put(w.key, w.vals.of(i)); err != nil {
		return 0, opError(w.step, "put", err)
	}
	w.next++
	return 1, nil
}

// Close closes the session.
func (w *filler) Close() error { return w.close() }

// ---- audits -----------------------------------------------------------------------

// auditSamples is how many values an audit compares with the generator's.
const auditSamples = 1000

// scanAudit reads every key with one iterator: exactly --num keys, key i at position i,
// and every (num/auditSamples)-th value equal to the generator's.
func scanAudit(ctx context.Context, kv engine.KV, p *plan, step string) (string, error) {
	s, err := kv.NewKVSession(ctx)
	if err != nil {
		return "", fmt.Errorf("dbbench %s audit: open a session: %w", step, err)
	}
	defer s.Close()
	it, err := s.NewIterator()
	if err != nil {
		return "", fmt.Errorf("dbbench %s audit: iterator: %w", step, err)
	}
	defer it.Close()
	vals, every := p.values(), max(uint64(p.p.Num)/auditSamples, 1)
	start := make([]byte, p.p.KeySize)
	putKey(start, 0)
	var n, checked uint64
	for ok := it.SeekGE(start); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != p.p.KeySize || keyIndex(k) != n {
			return "", fmt.Errorf("key %d of the scan is %x: want key index %d, %d bytes", n, k, n, p.p.KeySize)
		}
		if n%every == 0 {
			if !bytes.Equal(it.Value(), vals.of(n)) {
				return "", fmt.Errorf("key %d holds a value the generator did not make (%d bytes)", n, len(it.Value()))
			}
			checked++
		}
		n++
		if n%4096 == 0 && ctx.Err() != nil {
			return "", ctx.Err()
		}
	}
	if err := it.Err(); err != nil {
		return "", fmt.Errorf("dbbench %s audit: scan: %w", step, err)
	}
	if n != uint64(p.p.Num) {
		return "", fmt.Errorf("the scan found %d keys, want --num %d", n, p.p.Num)
	}
	return fmt.Sprintf("%d keys in key order, %d values as generated", n, checked), nil
}

// sampleAudit reads auditSamples seeded random keys: each exists with its value.
func sampleAudit(ctx context.Context, kv engine.KV, p *plan, step string) (string, error) {
	s, err := kv.NewKVSession(ctx)
	if err != nil {
		return "", fmt.Errorf("dbbench %s audit: open a session: %w", step, err)
	}
	defer s.Close()
	rng := workload.Stream(p.seed, Name, step, "audit")
	key, vals := make([]byte, p.p.KeySize), p.values()
	n := min(auditSamples, p.p.Num)
	for range n {
		i := rng.Uint64N(uint64(p.p.Num))
		putKey(key, i)
		v, found, err := s.Get(key)
		switch {
		case err != nil:
			return "", fmt.Errorf("dbbench %s audit: get key %d: %w", step, i, err)
		case !found:
			return "", fmt.Errorf("key %d is missing", i)
		case !bytes.Equal(v, vals.of(i)):
			return "", fmt.Errorf("key %d holds a value the generator did not make (%d bytes)", i, len(v))
		}
	}
	return fmt.Sprintf("%d random keys hold their values", n), nil
}

// ---- reads (readrandom, multireadrandom, fwdrange, revrange, seekrandom, readseq,
// and the *whilewriting steps' readers) ---------------------------------------------

// readCounts are what a reader found, for the audit: every key exists (the fill wrote
// them all, and overwrites only replace), so found = wanted and no key or value differs.
type readCounts struct {
	ops, wanted, found, bad int64
	checked                 int64 // values compared byte for byte with the generator's
}

func (c *readCounts) add(o readCounts) {
	c.ops += o.ops
	c.wanted += o.wanted
	c.found += o.found
	c.bad += o.bad
	c.checked += o.checked
}

// reader is a worker whose counts the audit reads.
type reader interface {
	workload.Worker
	counts() readCounts
}

// readStep runs --threads readers of one kind for the duration (readseq: until each has
// read every key), with one rate-limited background writer in the *whilewriting steps.
type readStep struct {
	stepBase
	readers []reader
	writer  *overwriter
}

// SteadyTime: a timed read step (workload.Steady); a read of every key (a count) is not.
func (s *readStep) SteadyTime() time.Duration { return s.spec.dur }

// newReader makes reader i of the step's kind.
func (s *readStep) newReader(kv engine.KV, role string, i int) reader {
	pp := &s.p.p
	base := session{kv: kv}
	rd := readerBase{session: base, step: s.spec.name, keySize: pp.KeySize, num: uint64(pp.Num), vals: s.p.values(),
		rng: s.stream(role, i)}
	switch s.spec.op {
	case opMultiGet:
		return &multiGetter{readerBase: rd, batch: pp.MultireadBatch}
	case opRange:
		return &ranger{readerBase: rd, reverse: s.spec.reverse, nexts: s.spec.nexts}
	case opReadSeq:
		return &scanner{readerBase: rd}
	}
	return &getter{readerBase: rd}
}

// label is the readers' op label and their keys per op.
func (s *readStep) label() (string, int64) {
	switch s.spec.op {
	case opMultiGet:
		return labelMultiGet, int64(s.p.p.MultireadBatch)
	case opRange:
		if s.spec.reverse {
			return labelSeekRev, int64(s.spec.nexts + 1)
		}
		return labelSeek, int64(s.spec.nexts + 1)
	case opReadSeq:
		return labelNext, 1
	}
	return labelGet, 1
}

// Load probes the operation once (an engine without it skips the step), then has
// --threads readers and, for *whilewriting, the background writer.
func (s *readStep) Load(ctx context.Context, h engine.Handle) (workload.Load, error) {
	kv, err := engine.AsKV(h)
	if err != nil {
		return workload.Load{}, err
	}
	if err := s.probe(ctx, kv); err != nil {
		return workload.Load{}, err
	}
	label, keys := s.label()
	g := workload.Group{Label: label, Role: roleRead, Unit: workload.UnitOps, BytesPerOp: keys * s.p.kvBytes()}
	s.readers = nil
	for i := 1; i <= s.spec.threads; i++ {
		r := s.newReader(kv, "reader", i)
		s.readers = append(s.readers, r)
		g.Workers = append(g.Workers, r)
	}
	l := workload.Load{Kind: kindRead, Primary: label, Groups: []workload.Group{g}, Duration: s.spec.dur}
	if s.spec.dur <= 0 {
		l.Groups[0].UntilDone = true
	}
	if s.spec.writer {
		s.writer = newOverwriter(&s.stepBase, kv, "writer", 1, 0)
		l.Kind = kindReadWrite
		l.Groups = append(l.Groups, workload.Group{Label: labelPut, Role: roleWrite, Unit: workload.UnitOps,
			BytesPerOp: s.p.kvBytes(), Rate: s.p.p.writeRate(), Background: true,
			Workers: []workload.Worker{s.writer}})
	}
	return l, nil
}

// probe runs one operation untimed: an operation the engine does not have skips the step.
func (s *readStep) probe(ctx context.Context, kv engine.KV) error {
	r := s.newReader(kv, "probe", 0)
	if err := r.Init(ctx, nil); err != nil {
		return err
	}
	_, err := r.Op(ctx)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	return err
}

// Verify: every key read was found, in order, with its value.
func (s *readStep) Verify(context.Context, engine.Handle) (string, error) {
	var c readCounts
	for _, r := range s.readers {
		c.add(r.counts())
	}
	label, _ := s.label()
	detail := fmt.Sprintf("%d %s ops found %d of %d keys", c.ops, label, c.found, c.wanted)
	if c.checked > 0 {
		detail += fmt.Sprintf(", %d values compared with the generator's", c.checked)
	}
	if s.writer != nil {
		detail += fmt.Sprintf(" while the writer put %d keys", s.writer.puts)
	}
	switch {
	case c.bad > 0:
		return "", fmt.Errorf("%s; %d keys or values differ from those written (out of order or not the generator's)", detail, c.bad)
	case c.found != c.wanted:
		return "", fmt.Errorf("%s: every key exists, so every one must be found", detail)
	}
	return detail, nil
}

// readerBase is what every reader has: its session, random stream and counts.
type readerBase struct {
	session
	step    string
	keySize int
	num     uint64
	vals    *values
	rng     *rand.Rand
	c       readCounts
}

func (w *readerBase) Init(ctx context.Context, _ engine.Session) error {
	if err := w.open(ctx, w.keySize); err != nil {
		return fmt.Errorf("dbbench %s: %w", w.step, err)
	}
	return nil
}

func (w *readerBase) Ready(context.Context) error { return nil }
func (w *readerBase) Close() error                { return w.close() }
func (w *readerBase) counts() readCounts          { return w.c }

// getter is readrandom's reader: Get of a uniform random key.
type getter struct{ readerBase }

// checkEvery: the getter compares every value's length, and every checkEvery-th value
// found byte for byte with the generator's. The comparison reads the value's bytes from
// the generator's 1 MB buffer at a random offset, mostly cache misses: about 0.19 µs of a
// 5 µs cached Get in every op, which db_bench does not pay (it checks nothing); one in 16
// still compares hundreds of thousands of values a step.
const checkEvery = 16

// Op gets one key; rows are the keys found.
func (w *getter) Op(context.Context) (int64, error) {
	i := w.rng.Uint64N(w.num)
	putKey(w.key, i)
	v, found, err := w.s.Get(w.key)
	if err != nil {
		return 0, opError(w.step, "get", err)
	}
	w.c.ops++
	w.c.wanted++
	if !found {
		return 0, nil
	}
	w.c.found++
	switch {
	case len(v) != w.vals.size:
		w.c.bad++
	case w.c.found%checkEvery == 0:
		w.c.checked++
		if !bytes.Equal(v, w.vals.of(i)) {
			w.c.bad++
		}
	}
	return 1, nil
}

// multiGetter is multireadrandom's reader (--multiread_batched): MultiGet of a batch of
// uniform random keys.
type multiGetter struct {
	readerBase
	batch int
	keys  [][]byte
}

// Op reads one batch; rows are the keys found.
func (w *multiGetter) Op(context.Context) (int64, error) {
	if w.keys == nil {
		buf := make([]byte, w.batch*w.keySize)
		w.keys = make([][]byte, w.batch)
		for j := range w.keys {
			w.keys[j] = buf[j*w.keySize : (j+1)*w.keySize : (j+1)*w.keySize]
		}
	}
	for _, k := range w.keys {
		putKey(k, w.rng.Uint64N(w.num))
	}
	found, vb, err := w.s.MultiGet(w.keys)
	if err != nil {
		return 0, opError(w.step, "multiget", err)
	}
	w.c.ops++
	w.c.wanted += int64(w.batch)
	w.c.found += int64(found)
	if vb != int64(found)*int64(len(w.vals.of(0))) {
		w.c.bad++
	}
	return int64(found), nil
}

// ranger is the range reader of fwdrange, revrange and seekrandom: a new iterator (as
// db_bench's seekrandom makes one per seek, so it sees the writer's keys), a seek to a
// uniform random key (SeekLE for reverse), then up to nexts Next (Prev) calls.
type ranger struct {
	readerBase
	reverse bool
	nexts   int
}

// Op does one seek and its nexts; rows are the keys read.
func (w *ranger) Op(context.Context) (int64, error) {
	i := w.rng.Uint64N(w.num)
	putKey(w.key, i)
	it, err := w.s.NewIterator()
	if err != nil {
		return 0, opError(w.step, "iterator", err)
	}
	want := uint64(w.nexts) + 1
	var ok bool
	if w.reverse {
		want = min(want, i+1)
		ok = it.SeekLE(w.key)
	} else {
		want = min(want, w.num-i)
		ok = it.SeekGE(w.key)
	}
	var rows int64
	for ok {
		k := it.Key()
		if keyIndex(k) != i || len(k) != w.keySize || !bytes.Equal(it.Value(), w.vals.of(i)) {
			w.c.bad++
		}
		w.c.checked++
		rows++
		if rows > int64(w.nexts) {
			break
		}
		if w.reverse {
			i--
			ok = it.Prev()
		} else {
			i++
			ok = it.Next()
		}
	}
	err = it.Err()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, opError(w.step, "seek", err)
	}
	w.c.ops++
	w.c.wanted += int64(want)
	w.c.found += rows
	return rows, nil
}

// scanner is readseq's reader: one iterator from the first key to the last, one key per op.
type scanner struct {
	readerBase
	it   engine.KVIterator
	next uint64
	done bool
}

// Op reads the next key; at the end it returns ErrDone.
func (w *scanner) Op(context.Context) (int64, error) {
	if w.done {
		return 0, workload.ErrDone
	}
	var ok bool
	if w.it == nil {
		it, err := w.s.NewIterator()
		if err != nil {
			return 0, opError(w.step, "iterator", err)
		}
		w.it = it
		putKey(w.key, 0)
		ok = it.SeekGE(w.key)
		w.c.wanted = int64(w.num)
	} else {
		ok = w.it.Next()
	}
	if !ok {
		w.done = true
		if err := w.it.Err(); err != nil {
			return 0, opError(w.step, "next", err)
		}
		return 0, workload.ErrDone
	}
	if k := w.it.Key(); keyIndex(k) != w.next || len(k) != w.keySize || !bytes.Equal(w.it.Value(), w.vals.of(w.next)) {
		w.c.bad++
	}
	w.c.checked++
	w.next++
	w.c.ops++
	w.c.found++
	return 1, nil
}

// Close closes the iterator and the session.
func (w *scanner) Close() error {
	var err error
	if w.it != nil {
		err = w.it.Close()
		w.it = nil
	}
	if cerr := w.close(); err == nil {
		err = cerr
	}
	return err
}

// ---- overwrites (overwrite, overwritesome, overwriteandwait, the writers) -------------

// writeStep runs --threads overwriters: a count each (overwritesome: --num/threads/10) or
// for the duration, rate-limited to --write-rate-mb over all of them when the spec says so.
type writeStep struct {
	stepBase
	writers []*overwriter
}

// newOverwriter makes overwriter i with a quota of count puts (0: none).
func newOverwriter(s *stepBase, kv engine.KV, role string, i int, count int64) *overwriter {
	return &overwriter{session: session{kv: kv}, step: s.spec.name, keySize: s.p.p.KeySize, num: uint64(s.p.p.Num),
		vals: s.p.values(), rng: s.stream(role, i), quota: count}
}

// SteadyTime: a timed overwrite (workload.Steady); a fill bounded by a key count is not.
func (s *writeStep) SteadyTime() time.Duration { return s.spec.dur }

// Load has the overwriters.
func (s *writeStep) Load(_ context.Context, h engine.Handle) (workload.Load, error) {
	kv, err := engine.AsKV(h)
	if err != nil {
		return workload.Load{}, err
	}
	g := workload.Group{Label: labelPut, Role: roleWrite, Unit: workload.UnitOps, BytesPerOp: s.p.kvBytes()}
	if s.spec.rate {
		g.Rate = s.p.p.writeRate() / float64(s.spec.threads)
	}
	s.writers = nil
	for i := 1; i <= s.spec.threads; i++ {
		w := newOverwriter(&s.stepBase, kv, "writer", i, s.spec.count)
		s.writers = append(s.writers, w)
		g.Workers = append(g.Workers, w)
	}
	l := workload.Load{Kind: kindWrite, Primary: labelPut, Groups: []workload.Group{g}, Duration: s.spec.dur}
	if s.spec.dur <= 0 {
		l.Groups[0].UntilDone = true
	}
	return l, nil
}

// Verify: the quota was written (overwritesome), and sampled keys hold their values.
func (s *writeStep) Verify(ctx context.Context, h engine.Handle) (string, error) {
	kv, err := engine.AsKV(h)
	if err != nil {
		return "", err
	}
	var puts int64
	for _, w := range s.writers {
		puts += w.puts
	}
	if want := s.spec.count * int64(s.spec.threads); want > 0 && puts != want {
		return "", fmt.Errorf("%d puts, want %d (%d threads × %d)", puts, want, s.spec.threads, s.spec.count)
	}
	detail, err := sampleAudit(ctx, kv, s.p, s.spec.name)
	if err != nil {
		return "", fmt.Errorf("after %d puts: %w", puts, err)
	}
	return fmt.Sprintf("%d puts; %s", puts, detail), nil
}

// overwriter puts uniform random keys (all exist: the key count never changes).
type overwriter struct {
	session
	step    string
	keySize int
	num     uint64
	vals    *values
	rng     *rand.Rand
	quota   int64
	puts    int64
}

// Init opens the session.
func (w *overwriter) Init(ctx context.Context, _ engine.Session) error {
	if err := w.open(ctx, w.keySize); err != nil {
		return fmt.Errorf("dbbench %s: %w", w.step, err)
	}
	return nil
}

// Ready never waits.
func (w *overwriter) Ready(context.Context) error { return nil }

// Op puts one key.
func (w *overwriter) Op(context.Context) (int64, error) {
	if w.quota > 0 && w.puts >= w.quota {
		return 0, workload.ErrDone
	}
	i := w.rng.Uint64N(w.num)
	putKey(w.key, i)
	if err := w.s.Put(w.key, w.vals.of(i)); err != nil {
		return 0, opError(w.step, "put", err)
	}
	w.puts++
	return 1, nil
}

// Close closes the session.
func (w *overwriter) Close() error { return w.close() }
