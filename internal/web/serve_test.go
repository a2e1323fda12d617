package web

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/store"
)

// TestServe: Serve says where it listens and that 127.0.0.1 is loopback, serves the runs
// page there, and returns nil once its context ends; an address in use is a ListenError.
func TestServe(t *testing.T) {
	path := writeRuns(t, 2, 2)
	st, err := store.OpenExisting(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, st, ServeOptions{Results: path, Listen: "127.0.0.1:0", Listening: func(a net.Addr, lo bool) {
			if !lo {
				t.Errorf("127.0.0.1 not taken for a loopback address")
			}
			addrs <- a.String()
		}})
	}()
	var addr string
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	if code, body := fetch(t, "http://"+addr+"/"); code != 200 || !strings.Contains(body, "sqlite") {
		t.Errorf("GET /: %d\n%.300s", code, body)
	}
	err = Serve(ctx, st, ServeOptions{Results: path, Listen: addr})
	var le *ListenError
	if !errors.As(err, &le) {
		t.Errorf("Serve on %s, in use: %v, want a *ListenError", addr, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
	for host, want := range map[string]bool{"localhost": true, "::1": true, "127.0.0.2": true, "": false, "0.0.0.0": false, "lab-db": false} {
		if got := loopback(host); got != want {
			t.Errorf("loopback(%q) = %v, want %v", host, got, want)
		}
	}
}
