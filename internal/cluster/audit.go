package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

// Wrap makes each step's audit the cluster's too (auditedStep): after the workload's own
// audit on node 0, every node must have node 0's tables, rows and contents. The steps
// unchanged on a nil Run (no cluster).
func (r *Run) Wrap(steps []workload.Step) []workload.Step {
	if r == nil {
		return steps
	}
	out := make([]workload.Step, len(steps))
	for i, s := range steps {
		out[i] = &auditedStep{Step: s, r: r}
	}
	return out
}

// auditedStep is a step whose Verify also compares every node of the cluster with node 0.
type auditedStep struct {
	workload.Step
	r *Run
}

// Verify runs the step's own audit on node 0, then waits for every node to catch up and
// compares their tables: a node that differs fails the step.
func (s *auditedStep) Verify(ctx context.Context, h engine.Handle) (string, error) {
	// A dead node never catches up: the step fails now, naming it, not after
	// agreeTimeout.
	if line := s.r.deadLine(s.Name(), time.Time{}, "", false, false); line != "" {
		return "", errors.New(line)
	}
	detail, err := s.Step.Verify(ctx, h)
	if err != nil {
		return detail, err
	}
	a, err := s.r.cl.Agree(ctx, agreeTimeout)
	if err != nil {
		return detail, err
	}
	line := "cluster: " + a.Summary(len(s.r.cl.Nodes))
	if len(a.Differences) > 0 {
		return joinDetail(detail, line), errors.New(line)
	}
	return joinDetail(detail, line), nil
}

// Note passes on the step's own note (workload.Noter).
func (s *auditedStep) Note() string {
	if n, ok := s.Step.(workload.Noter); ok {
		return n.Note()
	}
	return ""
}
