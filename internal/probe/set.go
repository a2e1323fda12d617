package probe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dbperf/dbperf/internal/runner"
)

// Set runs several runner.Profilers as one, each error named by its profiler (the
// step's note): a profiler that fails to start is left out of the step and its error is
// the step's note at the end; the others run. A profiler whose Start error is
// runner.ErrNoStart's (a part's barrier) keeps the step from running: the profilers
// started before it are stopped and Start returns its error. Its zero value is an empty
// set.
type Set struct {
	// Extra are sessions of dbperf's own that every profiler is told of beside the
	// step's workers' (the --explain diag's connection, role RoleExplain).
	Extra   []runner.ProfiledSession
	names   []string
	ps      []runner.Profiler
	started []bool
	startE  []error
}

var _ runner.Profiler = (*Set)(nil)

// Add adds a profiler under the name its errors carry.
func (m *Set) Add(name string, p runner.Profiler) {
	m.names, m.ps = append(m.names, name), append(m.ps, p)
}

// Len is the number of profilers added.
func (m *Set) Len() int { return len(m.ps) }

// Start starts every profiler for the step (sessions and Extra); see Set.
func (m *Set) Start(ctx context.Context, step string, sessions []runner.ProfiledSession) error {
	m.started, m.startE = make([]bool, len(m.ps)), nil
	if len(m.Extra) > 0 {
		sessions = append(slices.Clip(sessions), m.Extra...)
	}
	any := false
	for i, p := range m.ps {
		if err := p.Start(ctx, step, sessions); err != nil {
			err = fmt.Errorf("%s: %w", m.names[i], err)
			if errors.Is(err, runner.ErrNoStart) {
				for j := range i {
					if m.started[j] {
						_ = m.ps[j].Stop(ctx, step)
						m.started[j] = false
					}
				}
				return err
			}
			m.startE = append(m.startE, err)
			continue
		}
		m.started[i], any = true, true
	}
	if !any {
		return joinNote(m.startE)
	}
	return nil
}

// ClientThreads tells the profilers that take them the step's pinned workers' threads
// (runner.ClientThreader).
func (m *Set) ClientThreads(step string, tids []int) {
	for i, p := range m.ps {
		if ct, ok := p.(runner.ClientThreader); ok && m.started[i] {
			ct.ClientThreads(step, tids)
		}
	}
}

// halter is a profiler whose sampling can end before its Stop (Explain).
type halter interface{ halt() }

// Stop halts every profiler's sampling before stopping any (so that the work of one's
// Stop, folding or reading statements, is not sampled by another), then stops those
// that started; its error names each profiler that failed.
func (m *Set) Stop(ctx context.Context, step string) error {
	for i, p := range m.ps {
		if h, ok := p.(halter); ok && m.started[i] {
			h.halt()
		}
	}
	errs := m.startE
	for i, p := range m.ps {
		if !m.started[i] {
			continue
		}
		if err := p.Stop(ctx, step); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.names[i], err))
		}
	}
	return joinNote(errs)
}

// joinNote is errors as one line for a step's note ("; " between them), nil for none.
func joinNote(errs []error) error {
	var msgs []string
	for _, err := range errs {
		if err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}
