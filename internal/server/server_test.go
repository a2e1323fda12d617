package server

import (
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestFreePortIsUsableOnLoopback(t *testing.T) {
	seen := map[int]bool{}
	for i := 0; i < 5; i++ {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		// Below the kernel's ephemeral range, where no outgoing connection can take it.
		if p < 10000 || p >= ephemeralLow() {
			t.Fatalf("port %d: want 10000 ≤ port < %d", p, ephemeralLow())
		}
		seen[p] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("FreePort gave %d, which cannot be listened on: %v", p, err)
		}
		l.Close()
	}
	if len(seen) < 2 {
		t.Fatalf("FreePort gave the same port every time: %v", seen)
	}
}

func TestStopPIDStopsAndKills(t *testing.T) {
	// A process that ignores SIGTERM is killed after the grace period.
	cmd := exec.Command("sh", "-c", "trap '' TERM; sleep 30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if err := StopPID(termEngine{}, cmd.Process.Pid, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("process still running after StopPID")
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Error("StopPID killed before the grace period")
	}
	if err := StopPID(termEngine{}, cmd.Process.Pid, time.Second); err != nil {
		t.Errorf("stopping a process that is gone: %v", err)
	}
}

// termEngine is an Engine stopped by SIGTERM, for StopPID: its other methods are not called.
type termEngine struct{ Engine }

func (termEngine) Name() string { return "test" }

func (termEngine) StopSignal() (syscall.Signal, time.Duration) { return syscall.SIGTERM, time.Minute }
