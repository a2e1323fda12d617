package profile

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ScriptFields are the fields Fold asks `perf script` for (-F): the task (pid, tid, comm)
// to attribute a sample, its time (CLOCK_MONOTONIC, printed with --ns) to tell which
// window it falls in, and per frame its address, symbol and object; the address is read
// only to tell a frame line from anything else.
const ScriptFields = "pid,tid,comm,time,ip,sym,dso"

// Frame is one frame of a sample's call chain as `perf script` prints it.
type Frame struct {
	Sym string // "[unknown]" when perf could not symbolize the address
	DSO string // the object: "[kernel.kallsyms]", "/usr/lib/postgresql/15/bin/postgres", "[unknown]"
}

// Event is one record of `perf script --show-task-events` output: a sample (Task is
// empty) or a task event (Task is "FORK", "COMM" or "EXIT").
type Event struct {
	Comm     string
	PID, TID int
	// Time is when it happened, ns of the recording's clock (CLOCK_MONOTONIC: Recording
	// asks perf for it); 0 when the output has no time field.
	Time int64
	// Frames is a sample's call chain, leaf first; empty for a sample perf recorded
	// without a stack.
	Frames []Frame
	// Task is a task event's kind; for FORK, Child and ChildTID are the new task and
	// Parent its parent process.
	Task            string
	Child, ChildTID int
	Parent          int
}

// ParseScript reads `perf script -F pid,tid,comm,ip,sym,dso --show-task-events` output
// and calls fn for every sample and task event in order. A sample is its header line
// ("comm pid/tid", the comm possibly with spaces), its frame lines (indented: "ip sym
// (dso)"), and a blank line.
func ParseScript(r io.Reader, fn func(*Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	var cur *Event
	flush := func() error {
		if cur == nil {
			return nil
		}
		ev := cur
		cur = nil
		return fn(ev)
	}
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			if err := flush(); err != nil {
				return err
			}
			continue
		}
		if text[0] == '\t' {
			// A frame of the current sample (or of no sample: ignored). perf indents
			// frames with a tab; a header may start with spaces (its comm right-aligned
			// when the recording has no call chains).
			if cur == nil || cur.Task != "" {
				continue
			}
			if f, ok := parseFrame(text); ok {
				cur.Frames = append(cur.Frames, f)
			}
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		ev, err := parseHeader(text)
		if err != nil {
			return fmt.Errorf("perf script line %d: %w", line, err)
		}
		if ev.Task != "" {
			if err := fn(ev); err != nil {
				return err
			}
			continue
		}
		cur = ev
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read perf script output: %w", err)
	}
	return flush()
}

// parseHeader reads a sample's header or a task event's line: "comm pid/tid[ rest]".
func parseHeader(text string) (*Event, error) {
	rest := ""
	head := text
	if i := strings.Index(text, "PERF_RECORD_"); i >= 0 {
		head, rest = text[:i], text[i:]
	}
	fields := strings.Fields(head)
	// The comm (perhaps with spaces) comes first, then pid/tid; a sample without a call
	// chain has its one frame on the same line after it ("ip sym (dso)").
	k := 1
	for ; k < len(fields); k++ {
		if _, _, ok := pidTid(fields[k]); ok {
			break
		}
	}
	if k >= len(fields) {
		return nil, fmt.Errorf("no pid/tid in %q", text)
	}
	pid, tid, _ := pidTid(fields[k])
	ev := &Event{Comm: strings.Join(fields[:k], " "), PID: pid, TID: tid}
	if k+1 < len(fields) {
		if t, ok := parseTime(fields[k+1]); ok {
			ev.Time = t
			k++
		}
	}
	if rest == "" {
		if k+1 < len(fields) {
			if f, ok := parseFrame(strings.Join(fields[k+1:], " ")); ok {
				ev.Frames = append(ev.Frames, f)
			}
		}
		return ev, nil
	}
	switch {
	case strings.HasPrefix(rest, "PERF_RECORD_FORK("), strings.HasPrefix(rest, "PERF_RECORD_EXIT("):
		// PERF_RECORD_FORK(child:childtid):(parent:parenttid)
		ev.Task = rest[len("PERF_RECORD_"):strings.IndexByte(rest, '(')]
		var c, ct, p, pt int
		if _, err := fmt.Sscanf(rest[strings.IndexByte(rest, '('):], "(%d:%d):(%d:%d)", &c, &ct, &p, &pt); err != nil {
			return nil, fmt.Errorf("task event %q: %w", rest, err)
		}
		ev.Child, ev.ChildTID, ev.Parent = c, ct, p
	case strings.HasPrefix(rest, "PERF_RECORD_COMM"):
		// PERF_RECORD_COMM[ exec]: name:pid/tid
		ev.Task = "COMM"
		if i := strings.Index(rest, ": "); i >= 0 {
			s := rest[i+2:]
			if j := strings.LastIndexByte(s, ':'); j >= 0 {
				if p, t, ok := pidTid(s[j+1:]); ok {
					ev.Comm, ev.Child, ev.ChildTID = s[:j], p, t
				}
			}
		}
	default:
		ev.Task = "OTHER"
	}
	return ev, nil
}

// parseTime reads perf script's time field, "seconds.fraction:" (nanoseconds with
// --ns), as nanoseconds.
func parseTime(s string) (int64, bool) {
	s, ok := strings.CutSuffix(s, ":")
	if !ok {
		return 0, false
	}
	sec, frac, found := strings.Cut(s, ".")
	if !found || len(frac) == 0 || len(frac) > 9 {
		return 0, false
	}
	a, err1 := strconv.ParseInt(sec, 10, 64)
	b, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil || a < 0 || b < 0 {
		return 0, false
	}
	for i := len(frac); i < 9; i++ {
		b *= 10
	}
	return a*1e9 + b, true
}

func pidTid(s string) (pid, tid int, ok bool) {
	a, b, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, false
	}
	p, err1 := strconv.Atoi(a)
	t, err2 := strconv.Atoi(b)
	return p, t, err1 == nil && err2 == nil
}

// parseFrame reads "ip sym (dso)"; the symbol may hold spaces and parentheses (C++), the
// object is the last parenthesized part.
func parseFrame(text string) (Frame, bool) {
	s := strings.TrimSpace(text)
	ip, rest, ok := strings.Cut(s, " ")
	if !ok {
		return Frame{Sym: "[unknown]", DSO: "[unknown]"}, isHex(ip)
	}
	if !isHex(ip) {
		return Frame{}, false
	}
	rest = strings.TrimSpace(rest)
	f := Frame{Sym: rest, DSO: "[unknown]"}
	if strings.HasSuffix(rest, ")") {
		if i := strings.LastIndex(rest, " ("); i >= 0 {
			f.Sym, f.DSO = strings.TrimSpace(rest[:i]), rest[i+2:len(rest)-1]
		} else if strings.HasPrefix(rest, "(") {
			f.Sym, f.DSO = "[unknown]", rest[1:len(rest)-1]
		}
	}
	if f.Sym == "" {
		f.Sym = "[unknown]"
	}
	return f, true
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// FrameName is a frame as it appears in a folded stack, after Brendan Gregg's
// stackcollapse-perf.pl: the symbol; an unsymbolized frame "[object]" by its object's
// base name ("[unknown]" when that is unknown too); a kernel frame suffixed "_[k]".
// Semicolons, which separate frames, become colons.
func FrameName(f Frame) string {
	name := f.Sym
	if name == "[unknown]" && f.DSO != "" && f.DSO != "[unknown]" {
		name = "[" + filepath.Base(f.DSO) + "]"
	}
	if strings.HasPrefix(f.DSO, "[kernel.") {
		name += "_[k]"
	}
	return strings.ReplaceAll(name, ";", ":")
}

// Filter attributes a sample of task pid/tid (comm: its thread's name) to a role; ok
// false drops the sample (a process that is neither the server's nor dbperf's).
type Filter func(pid, tid int, comm string) (role string, ok bool)

// Limits bound what folding keeps.
type Limits struct {
	// MaxStacks is the most distinct stacks kept per role (DefaultMaxStacks when 0); the
	// samples of further distinct stacks are counted under OtherStacks.
	MaxStacks int
	// MaxDepth is the most frames kept per stack (DefaultMaxDepth when 0): a deeper stack
	// loses its root-most frames, so the functions that were on CPU stay (perf itself
	// keeps at most kernel.perf_event_max_stack, 127 by default).
	MaxDepth int
}

// DefaultMaxStacks bounds a role's folded file: 20,000 distinct stacks of ~40 frames of ~25
// bytes are ~20 MB, and a step's profile at 99 Hz rarely has more than a few thousand.
const DefaultMaxStacks = 20000

// DefaultMaxDepth is the most frames of a folded stack.
const DefaultMaxDepth = 256

// OtherStacks is the one folded line holding the samples of a role's stacks beyond
// Limits.MaxStacks.
const OtherStacks = "[other stacks: over the distinct-stack cap]"

// NoStack is the folded line of samples perf recorded without a call chain.
const NoStack = "[no stack]"

// Profile is one role's folded stacks.
type Profile struct {
	Role string
	// Samples is the role's sample count; Stacks each folded stack's (root first,
	// frames separated by ';').
	Samples int
	Stacks  map[string]int
}

// Profiles are a recording's samples folded per role.
type Profiles struct {
	Roles map[string]*Profile
	// Samples is every sample read; Dropped those the filter left out (other processes,
	// idle CPUs).
	Samples, Dropped int
}

// RoleNames are the roles in order.
func (ps *Profiles) RoleNames() []string {
	out := make([]string, 0, len(ps.Roles))
	for r := range ps.Roles {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// WriteFolded writes the profile in the folded format ("frame;frame;frame count", root
// first, one stack a line), sorted by stack, as FlameGraph's flamegraph.pl and
// difffolded.pl read it.
func (p *Profile) WriteFolded(w io.Writer) error {
	keys := make([]string, 0, len(p.Stacks))
	for k := range p.Stacks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bw := bufio.NewWriter(w)
	for _, k := range keys {
		fmt.Fprintf(bw, "%s %d\n", k, p.Stacks[k])
	}
	return bw.Flush()
}

// Tasks is what a recording's task events say about processes: each one's parent, from
// the FORK events perf synthesizes for the processes that ran when it started and
// records for those created since. FoldScript fills it as it reads, so a Filter that
// consults it sees a process's parent before the process's first sample.
type Tasks struct {
	parent map[int]int
}

// NewTasks returns an empty Tasks.
func NewTasks() *Tasks { return &Tasks{parent: map[int]int{}} }

// Parent is pid's parent process, when a FORK event named it.
func (t *Tasks) Parent(pid int) (int, bool) {
	p, ok := t.parent[pid]
	return p, ok
}

// Descends says whether pid is root or one of its descendants.
func (t *Tasks) Descends(pid, root int) bool {
	for range 64 { // a bound: a malformed event could make a loop
		if pid == root {
			return true
		}
		p, ok := t.parent[pid]
		if !ok || p == pid || p <= 0 {
			return false
		}
		pid = p
	}
	return false
}

func (t *Tasks) add(ev *Event) {
	if t == nil || ev.Task != "FORK" || ev.Child != ev.ChildTID || ev.Child == ev.Parent {
		return // a new thread, not a process
	}
	t.parent[ev.Child] = ev.Parent
}

// FoldScript folds `perf script` output (ParseScript) per role: each sample the filter
// attributes is one count of its stack, root first. tasks, when not nil, is filled with
// the task events as they are read.
func FoldScript(r io.Reader, filter Filter, tasks *Tasks, lim Limits) (*Profiles, error) {
	pss, err := FoldWindows(r, []Window{{Filter: filter}}, tasks, lim)
	if err != nil {
		return nil, err
	}
	return pss[0], nil
}

// overlaps says some two windows share a moment (or one takes every sample).
func overlaps(ws []Window) bool {
	for i := range ws {
		for j := i + 1; j < len(ws); j++ {
			if ws[i].To == 0 || ws[j].To == 0 || ws[i].From <= ws[j].To && ws[j].From <= ws[i].To {
				return true
			}
		}
	}
	return false
}

// Window is a span of a recording folded on its own (a step's load): the samples from
// From to To (ns of the recording's clock, Event.Time), attributed by Filter. A window
// whose To is 0 takes every sample (From and To are not read).
type Window struct {
	From, To int64
	Filter   Filter
}

// FoldWindows folds `perf script` output (ParseScript) per window and role, as
// FoldScript does: a sample goes to the first window that holds its time and whose filter
// attributes it (windows may overlap: a duet's points); samples in no window are left out
// (counted in no window's Samples), a sample no window attributes is counted as dropped
// in the first that holds it.
func FoldWindows(r io.Reader, windows []Window, tasks *Tasks, lim Limits) ([]*Profiles, error) {
	if lim.MaxStacks <= 0 {
		lim.MaxStacks = DefaultMaxStacks
	}
	if lim.MaxDepth <= 0 {
		lim.MaxDepth = DefaultMaxDepth
	}
	out := make([]*Profiles, len(windows))
	for i := range out {
		out[i] = &Profiles{Roles: map[string]*Profile{}}
	}
	overlapping := overlaps(windows)
	var sb strings.Builder
	err := ParseScript(r, func(ev *Event) error {
		if ev.Task != "" {
			tasks.add(ev)
			return nil
		}
		// Windows may overlap (a duet's points run at once, each its own window): the
		// sample goes to the first window that holds its time and whose filter takes it;
		// one that none takes counts as dropped in the first that holds it.
		wi, role := -1, ""
		for i, w := range windows {
			if w.To != 0 && (ev.Time < w.From || ev.Time > w.To) {
				continue
			}
			if wi < 0 {
				wi = i
			}
			if r, ok := w.Filter(ev.PID, ev.TID, ev.Comm); ok {
				wi, role = i, r
				break
			}
			if i == wi && !overlapping {
				break
			}
		}
		if wi < 0 {
			return nil
		}
		ps := out[wi]
		ps.Samples++
		if role == "" {
			ps.Dropped++
			return nil
		}
		p := ps.Roles[role]
		if p == nil {
			p = &Profile{Role: role, Stacks: map[string]int{}}
			ps.Roles[role] = p
		}
		p.Samples++
		sb.Reset()
		frames := ev.Frames
		if len(frames) > lim.MaxDepth {
			frames = frames[:lim.MaxDepth] // leaf first: keep the leaf-most
		}
		for i := len(frames) - 1; i >= 0; i-- {
			if sb.Len() > 0 {
				sb.WriteByte(';')
			}
			sb.WriteString(FrameName(frames[i]))
		}
		key := sb.String()
		if key == "" {
			key = NoStack
		}
		if _, seen := p.Stacks[key]; !seen && len(p.Stacks) >= lim.MaxStacks {
			key = OtherStacks
		}
		p.Stacks[key]++
		return nil
	})
	return out, err
}
