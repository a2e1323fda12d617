package workload

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
)

// execSession is a session that records what it executes.
type execSession struct {
	engine.Session
	ran []string
}

func (s *execSession) Exec(_ context.Context, q string, _ ...any) (int64, error) {
	s.ran = append(s.ran, q)
	return 0, nil
}

func TestIndexer(t *testing.T) {
	ctx := context.Background()
	after := make(chan struct{})
	rows := int64(0)
	w := &Indexer{Who: "kit l.x t1", Stmts: []string{"CREATE INDEX a", "CREATE INDEX b"}, After: after,
		Setup:   func(context.Context, engine.Session) error { rows = 42; return nil },
		Indexed: func() int64 { return rows }}
	s := &execSession{}
	if err := w.Init(ctx, s); err != nil || rows != 42 {
		t.Fatalf("Init: %v, rows %d", err, rows)
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := w.Ready(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Ready before the rows are in: %v", err)
	}
	close(after)
	if err := w.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := w.Op(ctx); n != 42 || err != nil || !slices.Equal(s.ran, w.Stmts) {
		t.Errorf("Op: %d, %v, ran %q", n, err, s.ran)
	}
	if _, err := w.Op(ctx); !errors.Is(err, ErrDone) {
		t.Errorf("second Op: %v", err)
	}
	bad := &Indexer{Who: "kit l.x t2", Setup: func(context.Context, engine.Session) error { return errors.New("count rows: no table") }}
	if err := bad.Init(ctx, s); err == nil || err.Error() != "kit l.x t2: count rows: no table" {
		t.Errorf("Setup's error: %v", err)
	}
}

// stepCore is a step base for CleanupStep.
type stepCore struct{ StepBase }

func (stepCore) Prepare(context.Context, engine.Handle) error { return nil }

func TestCleanupStepVerify(t *testing.T) {
	s := &CleanupStep{StepCore: &stepCore{NewStepBase("cleanup", "")}}
	if d, err := s.Verify(context.Background(), nil); d != "" || err != nil || s.Name() != "cleanup" || s.Group() != "" {
		t.Errorf("no audit: %q, %v, %s %q", d, err, s.Name(), s.Group())
	}
	s.Audit = func(context.Context, engine.Handle) (string, error) { return "audited", nil }
	if d, _ := s.Verify(context.Background(), nil); d != "audited" {
		t.Errorf("audit: %q", d)
	}
}
