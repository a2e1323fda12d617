package engine

import "context"

// SessionLimiter is implemented by handles that can say how many sessions the engine
// accepts, so a run asking for more is refused before it opens any.
type SessionLimiter interface {
	// MaxSessions is how many sessions this handle can open now, and where that comes
	// from (e.g. "max_connections 100 less 3 reserved and 1 in use").
	MaxSessions(ctx context.Context) (n int, why string, err error)
}
