package hwstat

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestRealGroupCountsExitedChildren: a shell runs short CPU-burning subshells one after
// the other, each exiting between samples. Summed over the intervals, GroupDelta's CPU of
// the shell's process tree matches the CPU the kernel reports for the shell and all its
// children when the test waits for it (rusage, nanoseconds) — summing each process's own
// difference would have lost almost all of it.
func TestRealGroupCountsExitedChildren(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `n=0; while [ $n -lt 25 ]; do ( i=0; while [ $i -lt 15000 ]; do i=$((i+1)); done ); n=$((n+1)); done; sleep 0.4`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	root := cmd.Process.Pid
	member := func(int) bool { return true }
	prev := Sample{} // the shell did not exist before: its whole CPU is in the intervals
	var group, naive float64
	ticks := 0
	for {
		tree, err := s.ProcessTree(root)
		if err != nil {
			break // the shell exited
		}
		cur, err := s.Sample(Request{PIDs: tree})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := cur.Procs[root]; !ok {
			break
		}
		if st, err := os.ReadFile("/proc/" + itoa(root) + "/stat"); err == nil && zombie(st) {
			break // exited, not yet waited for: its children are all in its counters
		}
		group += GroupDelta(prev, cur, member).CPUSec
		for pid, c := range cur.Procs {
			if p, ok := prev.Procs[pid]; ok && p.StartTicks == c.StartTicks {
				naive += c.CPUSec - p.CPUSec
			} else {
				naive += c.CPUSec
			}
		}
		prev = cur
		ticks++
		time.Sleep(30 * time.Millisecond)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	ps := cmd.ProcessState
	want := (ps.UserTime() + ps.SystemTime()).Seconds()
	t.Logf("%d samples: group %.3fs, per-process sum %.3fs, rusage %.3fs", ticks, group, naive, want)
	if ticks < 5 || want < 0.2 {
		t.Fatalf("the shell ran too briefly to test anything (%d samples, %.3fs)", ticks, want)
	}
	// Each process's counters are 10 ms ticks: the shell's, and the sleep's, may each
	// lose up to 10 ms; the last samples may miss the shell's own exit.
	if group < want-0.05 || group > want*1.02+0.02 {
		t.Errorf("group CPU %.3fs, the kernel's rusage %.3fs", group, want)
	}
}

func zombie(stat []byte) bool {
	for i := len(stat) - 1; i > 0; i-- {
		if stat[i] == ')' {
			return i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
		}
	}
	return false
}
