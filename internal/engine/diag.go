package engine

import "context"

// Diagnoser is implemented by server engines that can say where a step's time went inside
// the server (dbperf run --explain): its statements' cumulative statistics, the plans of
// their shapes and what each session is waiting on. OpenDiag opens a connection of its
// own, apart from the workers' sessions, so reading the server's views never runs on a
// worker's connection.
type Diagnoser interface {
	OpenDiag(ctx context.Context, o DiagOptions) (Diag, error)
}

// DiagOptions says what OpenDiag may change on the server.
type DiagOptions struct {
	// Enable lets OpenDiag turn statement tracking on where it is installed but off (a
	// server dbperf manages: PostgreSQL's pg_stat_statements.track, MariaDB's statement
	// and wait consumers). A user's own server is read as it is set.
	Enable bool
}

// Diag reads one server's statement statistics, plans and waits on a connection of its
// own. Its methods are called from one goroutine at a time.
type Diag interface {
	// Statements are the server's cumulative statement statistics for the workload's
	// database, one per statement shape; the caller subtracts two snapshots. The error
	// says why there are none (the extension or instrumentation is not there).
	Statements(ctx context.Context) ([]Statement, error)
	// Plan is the plan of a statement shape (Statement.Text) as the server's EXPLAIN
	// gives it in JSON; what it means for a shape with parameters is the engine's to say
	// (Diag.PlanNote).
	Plan(ctx context.Context, s Statement) (string, error)
	// Waits are what every session is doing at this instant: by the id SessionPID gives
	// for it (engine.ProcessInfo), the session's state as a wait class (WaitCPU, WaitIdle
	// or the server's own "type:event" name).
	Waits(ctx context.Context) (map[int]string, error)
	// SessionID is the diag's own connection as SessionPID names a worker's (PostgreSQL:
	// its backend's pid; MariaDB: its thread's OS id; 0 when unknown), so a CPU profile
	// can tell its cost from the server's background work.
	SessionID() int
	// Notes say, per kind of data ("statements", "plans", "waits"), what the server gave
	// and how it was read, or why it gave nothing: for the run's env.
	Notes() map[string]string
	Close() error
}

// CustomPlanner is a Diag that can also say which plan a statement shape ran with: its
// EXPLAIN with the parameters of one of the step's executions (PostgreSQL's custom plan),
// beside Plan's plan without values. params names the values used.
type CustomPlanner interface {
	CustomPlan(ctx context.Context, s Statement) (plan, params string, err error)
}

// Statement is one statement shape's cumulative statistics (PostgreSQL's
// pg_stat_statements, MariaDB's performance_schema statement digests). Times are seconds;
// a field the server does not keep is 0.
type Statement struct {
	ID   string // the server's id of the shape (queryid, digest)
	Text string // the normalized text, constants replaced by placeholders
	// Calls are executions, Plans plannings (PostgreSQL with track_planning; else 0).
	Calls, Plans     int64
	PlanSec, ExecSec float64
	Rows             int64
	// RowsExamined: MariaDB's rows read to find the rows (0 on PostgreSQL).
	RowsExamined int64
	// Blocks: PostgreSQL's shared buffers hit, read, dirtied and written (0 on MariaDB).
	BlocksHit, BlocksRead, BlocksDirtied, BlocksWritten int64
	WALBytes                                            int64
	JITSec                                              float64 // PostgreSQL's JIT generation, inlining, optimization and emission
}

// Sub is s minus an earlier snapshot of the same shape (prev zero: s itself).
func (s Statement) Sub(prev Statement) Statement {
	s.Calls -= prev.Calls
	s.Plans -= prev.Plans
	s.PlanSec -= prev.PlanSec
	s.ExecSec -= prev.ExecSec
	s.Rows -= prev.Rows
	s.RowsExamined -= prev.RowsExamined
	s.BlocksHit -= prev.BlocksHit
	s.BlocksRead -= prev.BlocksRead
	s.BlocksDirtied -= prev.BlocksDirtied
	s.BlocksWritten -= prev.BlocksWritten
	s.WALBytes -= prev.WALBytes
	s.JITSec -= prev.JITSec
	return s
}

// The wait classes every engine shares: a session running or ready to run in the server
// (no wait event), and one waiting for its client's next statement.
const (
	WaitCPU  = "CPU"
	WaitIdle = "Client:idle"
)
