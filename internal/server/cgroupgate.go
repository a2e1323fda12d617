package server

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// cgroupShell runs the gate (gateCgroup).
const cgroupShell = "/bin/sh"

// cgroupGate holds a launched server before its first instruction until it is in its
// cgroup (gateCgroup).
type cgroupGate struct {
	cg   *Cgroup
	r, w *os.File
}

// gateCgroup makes the server's cgroup (Cgroups.Create) and turns cmd into a gate that
// runs the server in it: a shell that waits for one line on a pipe and then execs the
// server's command (the same process: its pid, process group, credential and
// environment are the server's). Launch starts the gate, writes its pid into the cgroup
// (Cgroup.Join) and only then lets it exec the server (open), so every process of the
// server — PostgreSQL's postmaster and every backend it forks, mariadbd and its threads —
// and every page it touches, its shared memory and the page cache of its files, is in
// the cgroup and charged to it from the start.
//
// Why not the alternatives: writing the server's pid into the cgroup once it runs races
// with its first forks and charges what it allocated by then (shared_buffers) to dbperf's
// cgroup; clone3's CLONE_INTO_CGROUP (SysProcAttr.UseCgroupFD) exists on cgroup v2 only;
// a shell that writes its own pid needs the server's user to be allowed to move
// processes between cgroups, which root's server users (postgres) are not.
func (in *Instance) gateCgroup(cmd *exec.Cmd) (*cgroupGate, error) {
	cg, err := in.cgroups.Create("dbperf-"+filepath.Base(in.Dir), in.Limits)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.Engine, err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		_ = cg.Remove()
		return nil, fmt.Errorf("%s: cgroup gate: %w", in.Engine, err)
	}
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	// Exit 111 without a line (dbperf could not put it in the cgroup, or died): the
	// server never runs. The pipe is closed before the exec: the server inherits nothing.
	script := fmt.Sprintf(`read -r go <&%d || exit 111; exec %d<&-; exec "$@"`, fd, fd)
	cmd.Args = append([]string{cgroupShell, "-c", script, "dbperf-cgroup-gate", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = cgroupShell
	return &cgroupGate{cg: cg, r: r, w: w}, nil
}

// open puts the started gate pid in the cgroup and lets it exec the server; on failure
// the gate exits without running the server (the caller waits for it, then aborts).
func (g *cgroupGate) open(in *Instance, pid int) error {
	if g == nil {
		return nil
	}
	g.r.Close()
	if err := g.cg.Join(pid); err != nil {
		g.w.Close()
		return err
	}
	_, err := g.w.WriteString("go\n")
	if cerr := g.w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cgroup gate: %w", err)
	}
	in.Cgroup = g.cg
	return nil
}

// abort releases the gate's pipe and removes the cgroup: the server did not start.
func (g *cgroupGate) abort() {
	if g == nil {
		return
	}
	g.r.Close()
	g.w.Close()
	_ = g.cg.Remove()
}

// oomNote says, for an error about a server that exited, that the kernel's
// out-of-memory killer killed some of its processes within its memory limit.
func (in *Instance) oomNote() string {
	if in.Cgroup == nil {
		return ""
	}
	if n := in.Cgroup.OOMKills(); n > 0 {
		return fmt.Sprintf(": the kernel's out-of-memory killer killed %d of its processes within its %s memory limit, too small for this server and profile", n, FormatSize(in.Limits.Memory))
	}
	return ""
}
