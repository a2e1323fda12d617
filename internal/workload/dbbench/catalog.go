package dbbench

import (
	"fmt"
	"time"
)

// op is what a step's workers do (one Go type each, in steps.go and shape.go).
type op int

const (
	opFill      op = iota // fillseq, fillrandom: every key once (fill)
	opGet                 // readrandom: Get of uniform random keys (getter)
	opMultiGet            // multireadrandom: MultiGet of a batch (multiGetter)
	opRange               // fwdrange, revrange, seekrandom: seek then nexts (ranger)
	opReadSeq             // readseq: every key in order with one iterator (scanner)
	opOverwrite           // overwrite*: Put of uniform random keys (overwriter)
	opShape               // LSM-shape commands (§4.2; shapeStep)
)

// Step groups (workload.Meta.Groups), in report order.
const (
	groupLoad  = "load"
	groupRead  = "read"
	groupRange = "range"
	groupWrite = "write"
	groupRW    = "rw"
	groupShape = "shape"
	// groupNone: revrange (row 2, the settle pause) and overwritesome (row 6) are
	// excluded from the reference's summaries (§4.1, format_dbb_benchmark.sh §4.4).
	groupNone = ""
)

// part is one LSM-shape command (§4.2) of a shape step.
type part string

const (
	partFlush      part = "flush"
	partWait       part = "waitforcompaction"
	partCompact0   part = "compact0"
	partCompact1   part = "compact1"
	partCompactAll part = "compactall"
	partLevelStats part = "levelstats"
	partMemStats   part = "memstats"
)

// Shape states of the shape sequence (§4.2's experiment), in order.
var shapeStates = []string{"pre_flush", "post_flush", "compact_l0", "compact_l1", "compact_all"}

// stepSpec is one step of a sequence.
type stepSpec struct {
	name  string
	group string
	op    op
	// random: fillrandom's permutation instead of key order.
	random bool
	// reverse: revrange's SeekLE and Prevs.
	reverse bool
	// nexts after each seek.
	nexts   int
	threads int
	// dur > 0: the step runs that long; else until its workers are done.
	dur time.Duration
	// count is the overwrites per thread (0: for dur).
	count int64
	// rate: the overwriters are rate-limited to --write-rate-mb over all threads.
	rate bool
	// writer: one rate-limited background writer beside the readers (*whilewriting).
	writer bool
	// walOff: fillseq_disable_wal's options (vector memtable, no WAL, every level
	// compressed: §4.1 row 1).
	walOff bool
	// noBloom: the engine is reopened without bloom filters (shape sequence).
	noBloom bool
	// parts of a shape step, in order.
	parts []part
	// state: the shape state a read of the shape sequence measures ("" otherwise); for a
	// shape step of the shape sequence, the state it brings the tree to.
	state string
}

// stepNames lists the specs' names.
func stepNames(specs []stepSpec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.name
	}
	return out
}

// specsOf returns the steps of p's sequence, in order.
func specsOf(p *Params) []stepSpec {
	switch p.Sequence {
	case seqLegacy:
		return legacySpecs(p)
	case seqShape:
		return shapeSpecs(p)
	}
	return currentSpecs(p)
}

// currentSpecs is benchmark_compare.sh's sequence (§4.1), the jobs' names verbatim.
// overwriteandwait's job is "overwrite,flush,levelstats,waitforcompaction": the overwrite
// runs for the duration, so its flush and wait follow as overwriteandwait.wait.
func currentSpecs(p *Params) []stepSpec {
	n, d, nx := p.Threads, p.Duration, p.SeekNexts
	return []stepSpec{
		{name: "fillseq_disable_wal", group: groupLoad, op: opFill, threads: 1, walOff: true},
		{name: "revrange", group: groupNone, op: opRange, reverse: true, nexts: nx, threads: 1, dur: p.SettleTime},
		{name: "readrandom", group: groupRead, op: opGet, threads: n, dur: d},
		{name: "fwdrange", group: groupRange, op: opRange, nexts: nx, threads: n, dur: d},
		{name: "multireadrandom", group: groupRead, op: opMultiGet, threads: n, dur: d},
		{name: "overwritesome", group: groupNone, op: opOverwrite, threads: n, count: max(p.Num/int64(n)/10, 1)},
		{name: "flush_mt_l0", group: groupShape, op: opShape,
			parts: []part{partLevelStats, partFlush, partWait, partCompact0, partWait, partMemStats, partLevelStats}},
		{name: "revrangewhilewriting", group: groupRW, op: opRange, reverse: true, nexts: nx, threads: n, dur: d, writer: true},
		{name: "fwdrangewhilewriting", group: groupRW, op: opRange, nexts: nx, threads: n, dur: d, writer: true},
		{name: "readwhilewriting", group: groupRW, op: opGet, threads: n, dur: d, writer: true},
		{name: "overwriteandwait", group: groupWrite, op: opOverwrite, threads: n, dur: d},
		{name: "overwriteandwait.wait", group: groupShape, op: opShape, parts: []part{partFlush, partLevelStats, partWait}},
	}
}

// legacyNexts are all3.sh's --seek_nexts rounds (§4.5).
var legacyNexts = []int{0, 1, 10, 100}

// legacySpecs is all3.sh's sequence (§4.5): fillrandom; overwrite, readseq, readrandom,
// seekrandom (1 next); readseq, readrandom again; per nexts a readseq (warming the cache)
// and seekrandom; a rate-limited overwrite and readwhilewriting; per nexts a rate-limited
// overwrite and seekrandomwhilewriting. Repeated jobs get names saying which they are.
func legacySpecs(p *Params) []stepSpec {
	n, d := p.Threads, p.Duration
	s := []stepSpec{
		{name: "fillrandom", group: groupLoad, op: opFill, random: true, threads: 1},
		{name: "overwrite", group: groupWrite, op: opOverwrite, threads: n, dur: d},
		{name: "readseq.after-overwrite", group: groupRead, op: opReadSeq, threads: n},
		{name: "readrandom.after-overwrite", group: groupRead, op: opGet, threads: n, dur: d},
		{name: "seekrandom.nexts=1.after-overwrite", group: groupRange, op: opRange, nexts: 1, threads: n, dur: d},
		{name: "readseq", group: groupRead, op: opReadSeq, threads: n},
		{name: "readrandom", group: groupRead, op: opGet, threads: n, dur: d},
	}
	for _, r := range legacyNexts {
		s = append(s,
			stepSpec{name: fmt.Sprintf("readseq.pre.seekrandom.nexts=%d", r), group: groupRead, op: opReadSeq, threads: n},
			stepSpec{name: fmt.Sprintf("seekrandom.nexts=%d", r), group: groupRange, op: opRange, nexts: r, threads: n, dur: d})
	}
	s = append(s,
		stepSpec{name: "overwrite.ratelimited", group: groupWrite, op: opOverwrite, threads: n, dur: d, rate: true},
		stepSpec{name: "readwhilewriting", group: groupRW, op: opGet, threads: n, dur: d, writer: true})
	for _, r := range legacyNexts {
		s = append(s,
			stepSpec{name: fmt.Sprintf("overwrite.ratelimited.pre.seekrandomwhilewriting.nexts=%d", r), group: groupWrite,
				op: opOverwrite, threads: n, dur: d, rate: true},
			stepSpec{name: fmt.Sprintf("seekrandomwhilewriting.nexts=%d", r), group: groupRW, op: opRange, nexts: r,
				threads: n, dur: d, writer: true})
	}
	return s
}

// shapeParts bring the tree to each state of the shape sequence (§4.2, and bench/blob.bmark
// q.sh's cleanup modes: memtable = flush; L0 = + compact0, wait; L1 = + compact1, wait),
// then record it.
var shapeParts = map[string][]part{
	"pre_flush":   {partLevelStats, partMemStats},
	"post_flush":  {partFlush, partLevelStats, partMemStats},
	"compact_l0":  {partWait, partCompact0, partWait, partLevelStats},
	"compact_l1":  {partCompact1, partWait, partLevelStats},
	"compact_all": {partCompactAll, partWait, partLevelStats},
}

// shapeSpecs is §4.2's experiment: after fillrandom, at each shape (pre_flush,
// post_flush, compact_l0, compact_l1, compact_all) point reads and range reads, first
// with the bloom filters, then with the engine reopened without them.
func shapeSpecs(p *Params) []stepSpec {
	n, d, nx := p.Threads, p.Duration, p.SeekNexts
	s := []stepSpec{{name: "fillrandom", group: groupLoad, op: opFill, random: true, threads: 1}}
	for _, st := range shapeStates {
		s = append(s, stepSpec{name: st, group: groupShape, op: opShape, parts: shapeParts[st], state: st})
		for _, bloom := range []string{"bloom", "nobloom"} {
			nb := bloom == "nobloom"
			s = append(s,
				stepSpec{name: "readrandom." + st + "." + bloom, group: groupRead, op: opGet, threads: n, dur: d, noBloom: nb, state: st},
				stepSpec{name: "fwdrange." + st + "." + bloom, group: groupRange, op: opRange, nexts: nx, threads: n, dur: d, noBloom: nb, state: st})
		}
	}
	return s
}
