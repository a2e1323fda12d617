package store

import (
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
)

// Run statuses. A run whose process died without finishing it reads back as interrupted.
const (
	RunRunning     = "running"
	RunOK          = "ok"
	RunFailed      = "failed"
	RunInterrupted = "interrupted"
)

// RunMeta is what is known about a run when it begins.
type RunMeta struct {
	Workload        string
	WorkloadVersion int
	Engine          string
	EngineVersion   string
	// EngineSettings are the engine's effective settings (never a password).
	EngineSettings map[string]string
	Label          string
	Seed           int64
	// Params are the run's parameters as the user gave and the presets filled them in.
	Params map[string]any
	// Env is the machine and build: cpu_model, cores, ram_bytes, kernel, filesystem,
	// dbperf_version, git_commit, hostname, …
	Env       map[string]string
	StartedAt time.Time
	// StepGroups are the workload's step groups in report order; each step names its
	// group (Step.Group).
	StepGroups []StepGroup
	// Origin identifies the run across stores (Import keeps it); BeginRun makes one
	// when it is "".
	Origin string
}

// StepGroup is one family of a workload's steps that reports summarize together.
type StepGroup struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// PerMinute are the group's figures per minute (workload.StepGroup.PerMinute);
	// absent in runs stored before them.
	PerMinute []PerMinute `json:"per_minute,omitempty"`
}

// PerMinute is a step group's figure per minute: the sum of Labels' rates × 60
// (workload.PerMinute).
type PerMinute struct {
	Name   string   `json:"name"`
	Title  string   `json:"title"`
	Labels []string `json:"labels"`
}

// Run is a stored run with its steps, as read back.
type Run struct {
	ID int64
	RunMeta
	// Status is running, ok, failed or interrupted.
	Status     string
	FinishedAt time.Time // zero while running or when the process died
	Steps      []Step
}

// Step is a stored step: its result and its interval series.
type Step struct {
	ID  int64
	Seq int
	// Group names the step's group in the run's StepGroups ("" = none).
	Group     string
	Result    metrics.StepResult
	Intervals []metrics.Interval
	// Profiles are the step's CPU profiles by role (dbperf run --cpu-profile), in role
	// order; nil when it has none.
	Profiles []StepProfile
	// Statements are what the step's statements cost inside the server, by shape, most
	// execution time first; Waits the step's wait samples by role and wait class, in
	// role and wait order (dbperf run --explain); nil when it has none.
	Statements []StepStatement
	Waits      []StepWait
}

// RunSummary is one line of `dbperf runs`.
type RunSummary struct {
	ID            int64
	StartedAt     time.Time
	Workload      string
	Engine        string
	EngineVersion string
	Label         string
	Status        string
	Steps         int
	// Host is the env's hostname (Browse fills it; "" when unknown).
	Host string
}
