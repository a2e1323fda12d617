package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// procIdentity identifies the process writing a run across pid reuse: its pid, its start
// time in clock ticks since boot (field 22 of /proc/PID/stat) and the boot it ran in.
// Linux only; elsewhere StartTicks is 0 and BootID empty and liveness cannot be judged.
type procIdentity struct {
	PID        int
	StartTicks int64
	BootID     string
}

// selfIdentity is the identity of the current process.
func selfIdentity() procIdentity {
	pid := os.Getpid()
	id := procIdentity{PID: pid, BootID: bootID()}
	if st, err := readProcStat(pid); err == nil {
		id.StartTicks = st.startTicks
	}
	return id
}

// alive reports whether the process may still be running on this machine. When it
// cannot tell (no /proc), it says alive: a run is never declared interrupted on a guess.
func (p procIdentity) alive() bool {
	if p.PID <= 0 {
		return false
	}
	if cur := bootID(); cur != "" && p.BootID != "" && cur != p.BootID {
		return false // rebooted since, or written on another machine
	}
	st, err := readProcStat(p.PID)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat("/proc/self/stat"); serr == nil {
				return false // /proc works and the pid is gone
			}
		}
		return true
	}
	if st.state == 'Z' || st.state == 'X' {
		return false // exited, not yet reaped
	}
	if p.StartTicks != 0 && st.startTicks != p.StartTicks {
		return false // the pid was reused
	}
	return true
}

type procStat struct {
	state      byte
	startTicks int64
}

// readProcStat reads the state (field 3) and starttime (field 22) of /proc/PID/stat.
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(b)
}

// parseProcStat parses a /proc/PID/stat line. The command name (field 2) is in
// parentheses and may itself contain spaces and parentheses, so fields are counted
// from the last ')'.
func parseProcStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("store: malformed /proc stat: no ')'")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field 22 (starttime) is f[19].
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("store: malformed /proc stat: %d fields after the command name", len(f))
	}
	start, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("store: malformed /proc stat starttime %q: %w", f[19], err)
	}
	return procStat{state: f[0][0], startTicks: start}, nil
}

// bootID is this boot's random id, or "" when unavailable.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ProcessIdentity identifies a process across pid reuse (procIdentity), for other owners of
// things a process leaves behind when it dies, such as dbperf's temporary work dirs.
type ProcessIdentity = procIdentity

// SelfIdentity is the identity of the current process.
func SelfIdentity() ProcessIdentity { return selfIdentity() }

// Alive reports whether the process may still be running on this machine (true when it
// cannot tell).
func (p procIdentity) Alive() bool { return p.alive() }
