package fleet

import "github.com/dbperf/dbperf/internal/store"

// The environment an agent gives the command it runs for a job (dbperf agent), besides
// the store's DSN (DBPERF_RESULTS, never on a command line): the job's identity, which
// the run records in its env (RunEnv).
const (
	EnvJob        = "DBPERF_QUEUE_JOB"
	EnvAttempt    = "DBPERF_QUEUE_ATTEMPT"
	EnvAgent      = "DBPERF_AGENT"
	EnvAgentClass = "DBPERF_AGENT_CLASS"
	EnvAgentHost  = "DBPERF_AGENT_HOST"
)

// RunEnv is what a run taken from the queue adds to its env (store.EnvQueueJob, …), read
// with getenv from the environment its agent gave it; nil for a run started by hand.
func RunEnv(getenv func(string) string) map[string]string {
	job := getenv(EnvJob)
	if job == "" {
		return nil
	}
	return map[string]string{
		store.EnvQueueJob:     job,
		store.EnvQueueAttempt: getenv(EnvAttempt),
		store.EnvAgent:        getenv(EnvAgent),
		store.EnvAgentClass:   getenv(EnvAgentClass),
		store.EnvAgentHost:    getenv(EnvAgentHost),
	}
}
