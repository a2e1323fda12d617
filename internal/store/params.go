package store

import "encoding/json"

// The stored keys of a sweep's runs (Run.Params), written by dbperf sweep and read by
// the reports (pairing, history, mismatches, notes): defined here once, the store being
// what the writer and the readers share.
const (
	ParamDesign = "design" // the sweep's design (DesignInterleaved, DesignDuet, DesignSequential)
	ParamSweep  = "sweep"  // the sweep's label: trials pair only within one sweep
	ParamTrial  = "trial"  // "b<block>/s<slice>": equal keys of two points ran side by side
	ParamBlock  = "block"  // the block's number, from 1
	ParamSlice  = "slice"  // the slice's number within its block, from 1
	ParamCPUs   = "cpus"   // a duet's: the CPUs the point ran on in the block ("0", "2,3")
	// ParamLoadOnce: the sweep ran its data-changing steps in its first block only
	// (--load-once); a later block's runs hold the steady steps alone.
	ParamLoadOnce = "load_once"
	// ParamSettle: before this block each point's engine reduced its writeback debt
	// (--settle: VACUUM and CHECKPOINT, a flush), unmeasured.
	ParamSettle = "settle"
	// ParamSameData: the block ran on servers started from a physical copy of the first
	// point's data, made once the first block had loaded it (--same-data).
	ParamSameData = "same_data"
	// ParamInstance: which of the sweep's server instances of the point the block ran on,
	// from 1 (--instances: every point's server is renewed between blocks, from a copy of
	// the data, so that a difference between two servers of one configuration is measured,
	// not taken for the comparison's). Only with --instances above 1.
	ParamInstance = "instance"
)

// The designs of a comparison dbperf runs itself (dbperf sweep --design), ParamDesign's
// values.
const (
	DesignInterleaved = "interleaved" // randomized blocks, the points in turn (the default)
	DesignSequential  = "sequential"  // each point's repeats one after another
	DesignDuet        = "duet"        // the points at the same time, each on CPUs of its own
)

// SweepParams are the keys that say how a sweep ran a run (which trial, block, design,
// CPUs), never what was measured: runs of one point differ in them, so comparisons and
// series leave them out.
func SweepParams() []string {
	return []string{ParamTrial, ParamSweep, ParamDesign, ParamBlock, ParamSlice, ParamCPUs, ParamLoadOnce, ParamSettle, ParamSameData, ParamInstance}
}

// IntParam reads a stored integer parameter: the store decodes JSON numbers as
// json.Number; float64, int and int64 are params not yet stored. ok is false for anything
// else.
func IntParam(v any) (int, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	case float64:
		return int(n), true
	case int:
		return n, true
	case int64:
		return int(n), true
	}
	return 0, false
}
