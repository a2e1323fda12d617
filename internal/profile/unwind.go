package profile

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Unwound says whether a folded stack (root first, frames separated by ';') was unwound
// whole: no frame of it is "[unknown]" (an address perf could place in no object), and
// its root frame is where a task's stack begins (Root). A stack that stops anywhere else
// (frame pointers walked into a function built without them, a DWARF unwinding whose
// copy of the stack ended before the caller's frame, or a leaf alone) is not; so is a
// user task's sample whose stack is kernel frames only (its user part not unwound).
// NoStack is not; OtherStacks is neither (Unwinding leaves it out).
func Unwound(stack string) bool {
	if stack == NoStack {
		return false
	}
	root := stack
	if i := strings.IndexByte(stack, ';'); i >= 0 {
		root = stack[:i]
	}
	if !Root(root) {
		return false
	}
	for f := range strings.SplitSeq(stack, ";") {
		if f == "[unknown]" {
			return false
		}
	}
	return true
}

// roots are the frames a whole stack begins with (FrameName's names): a process's main
// thread (glibc's __libc_start_call_main or __libc_start_main, or _start), another thread
// (start_thread, clone, clone3), a kernel thread (ret_from_fork), and a Go program's
// goroutines and system stacks (runtime.goexit; runtime.mstart, mcall, systemstack and
// morestack begin the stacks of a thread's g0, which frame pointers do not leave).
var roots = []string{
	"_start", "__libc_start_main", "__libc_start_call_main", "__libc_start_main_impl",
	"start_thread", "clone", "clone3", "__clone", "__clone3", "__GI___clone", "__GI___clone3",
	"ret_from_fork_[k]", "ret_from_fork_asm_[k]",
	"runtime.goexit", "runtime.mstart", "runtime.mcall", "runtime.systemstack",
	"runtime.morestack", "runtime.rt0_go",
}

// Root says whether frame (FrameName's name) begins a whole stack (Unwound).
func Root(frame string) bool {
	frame = strings.TrimSuffix(frame, ".abi0") // Go's assembly functions
	for _, r := range roots {
		if frame == r {
			return true
		}
	}
	return false
}

// Unwinding counts a profile's samples by whether their stacks were unwound whole
// (Unwound).
type Unwinding struct {
	// Samples are the samples counted: all but those on the OtherStacks line, whose
	// stacks are not kept.
	Samples int
	// Truncated are those whose stack was not unwound whole: the "[unknown]" share.
	Truncated int
}

// Share is the truncated samples' share of the samples counted (0 without samples).
func (u Unwinding) Share() float64 {
	if u.Samples == 0 {
		return 0
	}
	return float64(u.Truncated) / float64(u.Samples)
}

// Add is u and v's samples together.
func (u Unwinding) Add(v Unwinding) Unwinding {
	return Unwinding{Samples: u.Samples + v.Samples, Truncated: u.Truncated + v.Truncated}
}

// Unwinding counts the profile's samples by whether they unwound (Unwound).
func (p *Profile) Unwinding() Unwinding {
	var u Unwinding
	for stack, n := range p.Stacks {
		if stack == OtherStacks {
			continue
		}
		u.Samples += n
		if !Unwound(stack) {
			u.Truncated += n
		}
	}
	return u
}

// ReadFolded reads a folded profile ("frame;frame count" lines, as WriteFolded writes
// them) as role's Profile.
func ReadFolded(r io.Reader, role string) (*Profile, error) {
	p := &Profile{Role: role, Stacks: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		i := strings.LastIndexByte(text, ' ')
		if i < 0 {
			return nil, fmt.Errorf("folded line %d: no count", line)
		}
		n, err := strconv.Atoi(text[i+1:])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("folded line %d: count %q", line, text[i+1:])
		}
		p.Stacks[text[:i]] += n
		p.Samples += n
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read folded profile: %w", err)
	}
	return p, nil
}
