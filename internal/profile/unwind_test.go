package profile

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func TestUnwound(t *testing.T) {
	for _, c := range []struct {
		stack string
		want  bool
	}{
		// Debian's PostgreSQL 15 with frame pointers: whole.
		{"__libc_start_call_main;main;PostmasterMain;[postgres];PostgresMain;PortalRun;heap_hot_search_buffer", true},
		// A frame-pointer walk into a build without them: an [unknown] caller.
		{"[unknown];_bt_compare", false},
		{"[unknown];__send;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k]", false},
		// The leaf alone (its frame pointer register held no frame).
		{"heap_hot_search_buffer", false},
		// DWARF: the copy of the stack ended before main's frame.
		{"[unknown];ServerLoop;PostgresMain;PortalRun", false},
		{"ServerLoop;PostgresMain;PortalRun", false},
		{"__libc_start_call_main;main;PostmasterMain;ServerLoop;PostgresMain;[unknown];PortalRun", false},
		// A thread's, a kernel thread's, a Go program's.
		{"clone3;start_thread;[mariadbd];do_command", true},
		{"ret_from_fork_asm_[k];ret_from_fork_[k];kthread_[k];worker_thread_[k]", true},
		{"runtime.goexit.abi0;main.work;runtime.mallocgc", true},
		{"runtime.mcall;runtime.park_m;runtime.schedule", true},
		// A user task's sample with its kernel part only.
		{"entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k]", false},
		{NoStack, false},
	} {
		if got := Unwound(c.stack); got != c.want {
			t.Errorf("Unwound(%q) = %v, want %v", c.stack, got, c.want)
		}
	}
}

func TestProfileUnwinding(t *testing.T) {
	text := "__libc_start_call_main;main;PostmasterMain;PostgresMain;ExecScan 6\n" +
		"[unknown];_bt_compare 3\n" +
		"heap_hot_search_buffer 1\n" +
		OtherStacks + " 5\n"
	p, err := ReadFolded(strings.NewReader(text), "query")
	if err != nil {
		t.Fatal(err)
	}
	if p.Samples != 15 || len(p.Stacks) != 4 {
		t.Fatalf("ReadFolded: %d samples, %d stacks; want 15, 4", p.Samples, len(p.Stacks))
	}
	u := p.Unwinding()
	if u != (Unwinding{Samples: 10, Truncated: 4}) {
		t.Fatalf("Unwinding = %+v, want 10 samples, 4 truncated", u)
	}
	if s := u.Share(); s != 0.4 {
		t.Errorf("Share = %v, want 0.4", s)
	}
	if s := (Unwinding{}).Share(); s != 0 {
		t.Errorf("empty Share = %v, want 0", s)
	}
	if _, err := ReadFolded(strings.NewReader("a;b x\n"), "r"); err == nil {
		t.Error("ReadFolded of a bad count: no error")
	}
}

// TestUnwindShareOfDirs is the measurement helper of docs/measurements/2026-11-28-unwinding.md:
// with DBPERF_UNWIND_DIRS set to --cpu-profile directories (space-separated), it prints
// each one's truncated ("[unknown]") share per role, all its runs' steps together
// (DIR/run-*/<step>.<role>.folded). Without it, it is skipped.
//
//	DBPERF_UNWIND_DIRS="/tmp/unw/pg13-fp /tmp/unw/pg13-dwarf" \
//	  go test -count=1 -run TestUnwindShareOfDirs -v ./internal/profile/
func TestUnwindShareOfDirs(t *testing.T) {
	dirs := strings.Fields(os.Getenv("DBPERF_UNWIND_DIRS"))
	if len(dirs) == 0 {
		t.Skip("DBPERF_UNWIND_DIRS not set: a measurement helper")
	}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "run-*", "*.folded"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no folded profiles (%v)", dir, err)
		}
		byRole := map[string]Unwinding{}
		for _, f := range files {
			base := strings.TrimSuffix(filepath.Base(f), ".folded")
			// <step>.<role>: the Insert Benchmark's load steps hold a dot (l.i0)
			role := base[strings.IndexByte(base, '.')+1:]
			if strings.HasPrefix(base, "l.") {
				role = role[strings.IndexByte(role, '.')+1:]
			}
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			p, err := ReadFolded(fh, role)
			fh.Close()
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			byRole[role] = byRole[role].Add(p.Unwinding())
		}
		roles := make([]string, 0, len(byRole))
		for r := range byRole {
			roles = append(roles, r)
		}
		sort.Strings(roles)
		var all Unwinding
		for _, r := range roles {
			u := byRole[r]
			all = all.Add(u)
			fmt.Printf("%s\t%s\t%d\t%d\t%.1f%%\n", filepath.Base(dir), r, u.Samples, u.Truncated, 100*u.Share())
		}
		fmt.Printf("%s\t%s\t%d\t%d\t%.1f%%\n", filepath.Base(dir), "(all)", all.Samples, all.Truncated, 100*all.Share())
	}
}
