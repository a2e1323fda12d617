// Package record writes a run to its results store as it is measured: the run's start,
// each step's start, intervals, result, CPU profiles, statements and waits, and the run's
// end (Begin, Run.Sink, Run.Finish). Measuring never waits on the store (issue 23):
//
//   - Intervals go to an intervalWriter: the runner's tick hands one over under a mutex
//     held for an append, and a goroutine of the step writes them in batches. A stalled
//     store therefore neither delays a tick nor stretches an interval; the intervals wait
//     in memory (bounded by --store-timeout × the interval rate) and go in one batch when
//     the store answers again.
//   - Every write is retried (transient errors: a lock, a lost connection, a server
//     restarting) until --store-timeout (default 30 s) has passed, each attempt bounded by
//     that deadline even where the driver is not (SQLite waits up to its busy timeout for
//     another process's lock: the attempt is left to finish in the background).
//   - After Ctrl-C the store gets storeGrace more, so dbperf exits within about a second
//     whatever the store does.
//   - When the store stays unreachable, or Ctrl-C cut its writes short, everything the run
//     measured (its steps, intervals and results, which the record keeps) is written to a
//     spill file, a SQLite results store of its own, and the run stops with a
//     *StoreFailedError naming it: `dbperf results copy --from SPILL --to STORE`
//     publishes it later.
//
// Which steps run and the run's status are the record's runner.Sequence's (Run.Steps);
// the record only writes them.
package record
