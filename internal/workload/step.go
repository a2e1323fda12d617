package workload

import (
	"context"
	"fmt"
	"sync"

	"github.com/dbperf/dbperf/internal/engine"
)

// StepBase is a step's name and group, the Name and Group of every Step: a workload's
// steps embed it (through the workload's own step base, which adds the plan its steps
// share).
type StepBase struct {
	name, group string
}

// NewStepBase returns the base of the step name, in group ("" for a step no group
// summarizes, such as a cleanup).
func NewStepBase(name, group string) StepBase { return StepBase{name: name, group: group} }

// Name is the step's name (Step.Name).
func (s *StepBase) Name() string { return s.name }

// Group is the step's group in Meta.Groups (Step.Group).
func (s *StepBase) Group() string { return s.group }

// Baseline is the measurement, once per run, of the tables a SQL workload's run did not
// create, so that its audit knows what they held before its first step: a plan holds one
// and every step's Prepare calls Ensure. Created says the run creates the tables itself
// (its load step is planned), so that they start empty and there is nothing to measure;
// the load step calls Reset. Its lock also guards whatever the workload's measure and
// reset functions write: the workload holds it (Lock, Unlock) wherever else it reads or
// writes that state.
type Baseline struct {
	// Created: the run's load step creates the tables.
	Created bool

	sync.Mutex
	done bool
}

// Ensure measures the tables with measure, on a session of hh's, unless the run creates
// them or they were measured already. who names the workload and step in errors
// ("sysbench point-query").
func (b *Baseline) Ensure(ctx context.Context, hh engine.Handle, who string, measure func(ctx context.Context, h engine.SQL, s engine.Session) error) error {
	h, err := engine.AsSQL(hh)
	if err != nil {
		return err
	}
	b.Lock()
	defer b.Unlock()
	if b.done || b.Created {
		return nil
	}
	s, err := h.NewSession(ctx)
	if err != nil {
		return fmt.Errorf("%s baseline: %w", who, err)
	}
	defer s.Close()
	if err := measure(ctx, h, s); err != nil {
		return err
	}
	b.done = true
	return nil
}

// Reset records, with reset, that the load step has (re)created every table empty: the
// baseline is then known.
func (b *Baseline) Reset(reset func()) {
	b.Lock()
	defer b.Unlock()
	reset()
	b.done = true
}

// SQLDialect is the dialect of a SQL engine's handle: what a SQL step's Load composes its
// statements from (its workers get their own sessions). Another engine's handle is an
// error naming the engines the workload needs.
func SQLDialect(hh engine.Handle) (engine.Dialect, error) {
	h, err := engine.AsSQL(hh)
	if err != nil {
		return nil, err
	}
	return h.Dialect(), nil
}
