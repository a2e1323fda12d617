package store

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// The env keys a run taken from the queue by an agent records (dbperf agent): which job,
// which attempt, which agent and host class ran it.
const (
	EnvQueueJob     = "queue_job"
	EnvQueueAttempt = "queue_attempt"
	EnvAgent        = "agent"
	EnvAgentClass   = "agent_class"
	// EnvAgentHost is the agent's host as it names itself (dbperf agent --host, by
	// default the machine's hostname): what a report of the queue's runs names.
	EnvAgentHost = "agent_host"
)

// JobRun is a stored run of a queued job.
type JobRun struct {
	Job     int64
	Attempt int
	RunID   int64
	Label   string
	Status  string
	Host    string
}

// JobRuns returns the stored runs of the given jobs (their env's queue_job), oldest first.
// Only a PostgreSQL store holds a queue.
func (s *Store) JobRuns(ctx context.Context, jobs []int64) (map[int64][]JobRun, error) {
	out := map[int64][]JobRun{}
	if s.db.d != postgresDialect || len(jobs) == 0 {
		return out, nil
	}
	keys := make([]string, len(jobs))
	for i, j := range jobs {
		keys[i] = strconv.FormatInt(j, 10)
	}
	rows, err := s.db.QueryContext(ctx, `
SELECT id, label, status, host, pid, pid_start_ticks, boot_id,
	(env::jsonb)->>'`+EnvQueueJob+`', COALESCE((env::jsonb)->>'`+EnvQueueAttempt+`', '0')
FROM runs WHERE (env::jsonb)->>'`+EnvQueueJob+`' = ANY(?) ORDER BY id`, keys)
	if err != nil {
		return nil, fmt.Errorf("store: runs of queued jobs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r JobRun
		var proc procIdentity
		var job, attempt string
		if err := rows.Scan(&r.RunID, &r.Label, &r.Status, &r.Host, &proc.PID, &proc.StartTicks, &proc.BootID, &job, &attempt); err != nil {
			return nil, fmt.Errorf("store: runs of queued jobs: %w", err)
		}
		r.Job, _ = strconv.ParseInt(job, 10, 64)
		r.Attempt, _ = strconv.Atoi(attempt)
		r.Status = liveStatus(r.Status, proc, r.Host)
		out[r.Job] = append(out[r.Job], r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: runs of queued jobs: %w", err)
	}
	return out, nil
}

// FailJobRuns marks the runs that earlier attempts of job left unfinished (running, or
// interrupted when their agent was stopped with them) failed, with why as the error of each
// step they left running: a half-written run is never shown as finished, nor compared.
// It returns the runs it marked.
func (s *Store) FailJobRuns(ctx context.Context, job int64, before int, why string, at time.Time) ([]int64, error) {
	runs, err := s.JobRuns(ctx, []int64{job})
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, r := range runs[job] {
		if r.Attempt >= before || (r.Status != RunRunning && r.Status != RunInterrupted) {
			continue
		}
		err := s.inTx(ctx, func(tx sqlTx) error {
			if _, err := tx.ExecContext(ctx, `UPDATE steps SET status = ?, error = ? WHERE run_id = ? AND status = ?`,
				RunFailed, why, r.RunID, stepRunning); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, finished_at = COALESCE(finished_at, ?) WHERE id = ?`,
				RunFailed, formatTime(at), r.RunID)
			return err
		})
		if err != nil {
			return ids, fmt.Errorf("store: mark run %d of job %d failed: %w", r.RunID, job, err)
		}
		ids = append(ids, r.RunID)
	}
	return ids, nil
}
