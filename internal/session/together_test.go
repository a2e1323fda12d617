package session

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLaunchBarrier: a party that arrives waits until every party has arrived or left; a
// party leaving after it arrived counts once; a cancelled context ends the wait.
func TestLaunchBarrier(t *testing.T) {
	for _, tc := range []struct {
		name string
		// parties: "a" arrives, "l" leaves without arriving, "al" arrives then leaves;
		// the last one acts once the others wait.
		parties []string
		cancel  bool
		want    error
	}{
		{name: "all arrive", parties: []string{"a", "a", "a"}},
		{name: "the last leaves", parties: []string{"a", "a", "l"}},
		{name: "one left first", parties: []string{"l", "a", "a"}},
		{name: "arrive then leave counts once", parties: []string{"al", "a", "a"}},
		{name: "cancelled", parties: []string{"a", "a", "-"}, cancel: true, want: context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			b := &launchBarrier{pending: len(tc.parties), open: make(chan struct{})}
			type party struct {
				arrive func() error
				leave  func()
			}
			ps := make([]party, len(tc.parties))
			for k := range ps {
				ps[k].arrive, ps[k].leave = b.party(ctx)
			}
			last := len(ps) - 1
			done := make(chan error, last)
			for k, act := range tc.parties[:last] {
				switch act {
				case "l":
					ps[k].leave()
				case "a", "al":
					go func() {
						err := ps[k].arrive()
						if act == "al" {
							ps[k].leave()
						}
						done <- err
					}()
				}
			}
			waiting := 0
			for _, act := range tc.parties[:last] {
				if act != "l" {
					waiting++
				}
			}
			// None is through before the last party acts.
			select {
			case err := <-done:
				t.Fatalf("a party was through (%v) before the last one acted", err)
			case <-time.After(50 * time.Millisecond):
			}
			switch tc.parties[last] {
			case "a":
				if err := ps[last].arrive(); err != nil {
					t.Fatalf("last arrive: %v", err)
				}
			case "l":
				ps[last].leave()
			}
			if tc.cancel {
				cancel()
			}
			for range waiting {
				select {
				case err := <-done:
					if !errors.Is(err, tc.want) {
						t.Errorf("arrive: %v, want %v", err, tc.want)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("a party still waits")
				}
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if !tc.cancel && b.pending != 0 {
				t.Errorf("%d parties pending at the end, want 0 (each counted once)", b.pending)
			}
		})
	}
}
