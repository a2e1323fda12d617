// Package probe holds the runner.Profilers that look at a step while its load runs,
// one file each, for `dbperf run` and `dbperf sweep`:
//
//   - cpu.go: --cpu-profile DIR. One system-wide perf recording per command (Launch,
//     sampling before any managed server starts), a CPUProfiler per target (CPU.Profiler)
//     whose steps are windows of it by time, folded once after the last step (CPU.Fold)
//     per step and role: a worker's session's server process or thread is the worker's
//     role, the server's other processes and threads background:<name>, dbperf's own
//     process client (RoleClient). The folded stacks go to DIR/run-<id> and, through
//     the record, to the results store.
//   - explain.go: --explain. Explain snapshots the server's statement statistics at a
//     step's start and end, samples every session's wait at 10 Hz on a connection of its
//     own and takes the most expensive shapes' plans; the record takes them (Take).
//   - barrier.go: --part, one part of a run shared by several agents (run --agents N).
//     Barrier waits at each step's start until every part has reached it, at one instant
//     of the results store's clock.
//   - set.go: Set, several profilers run as one, each error named by its profiler in the
//     step's note.
//
// The options are read once by the command (CPUOptions, ExplainOptions, BarrierOptions); what a user
// is told goes to the writer they name, and what a run's env keeps is returned as its
// note (CPUNote, OpenExplain; keys EnvCPU, EnvExplain).
package probe
