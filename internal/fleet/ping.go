package fleet

import "context"

// Ping says whether the store answers: nil when it does.
func (f *Fleet) Ping(ctx context.Context) error {
	return f.pool.Ping(ctx)
}
