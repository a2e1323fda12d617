package profile

import (
	"fmt"
	"os"
	"strings"
)

// ProcessName names a server's process or thread for a background role: a process whose
// title follows the "comm: what" convention (PostgreSQL's "postgres: checkpointer",
// "postgres: autovacuum worker ib") is what; another backend's title ("postgres: user
// db 127.0.0.1(5432) idle") is "backend"; otherwise the thread's own name
// (/proc/PID/task/TID/comm: MariaDB 10.11 and 11.4 leave every thread "mariadbd", so
// their roles name threads by performance_schema instead, engine.ThreadNamer), else
// comm. title is the process's command line as /proc/PID/cmdline gives it ("" when
// unknown).
func ProcessName(title, comm string) string {
	title = strings.TrimSpace(strings.ReplaceAll(title, "\x00", " "))
	if comm != "" {
		if what, ok := strings.CutPrefix(title, comm+": "); ok {
			return pgTitle(strings.TrimSpace(what))
		}
	}
	if comm == "" {
		return "unknown"
	}
	return comm
}

// pgTitle keeps of a PostgreSQL process title the name of an auxiliary or background
// process (set_ps_display and the bgworkers' names).
func pgTitle(what string) string {
	for _, a := range [...]string{
		"autovacuum launcher", "autovacuum worker", "checkpointer", "background writer",
		"walwriter", "wal writer", "archiver", "logger", "stats collector",
		"logical replication launcher", "logical replication worker", "parallel worker",
		"startup", "walsender", "walreceiver", "walsummarizer", "io worker",
	} {
		if strings.HasPrefix(what, a) {
			return a
		}
	}
	// "user db host(port) state": a backend of a connection no worker owns (dbperf's
	// control connection, another client).
	return "backend"
}

// Title reads a process's command line (its title, for a process that sets one), ""
// when it is gone.
func Title(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	return strings.TrimRight(string(b), "\x00")
}

// Comm reads a thread's name, "" when it is gone.
func Comm(pid, tid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/comm", pid, tid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Tree is root and its descendants, from /proc/PID/task/TID/children (the kernel's list
// of each thread's children): no scan of every process, so it is cheap to call often.
// Processes that exit meanwhile are left out.
func Tree(root int) []int {
	out := []int{root}
	for i := 0; i < len(out) && len(out) < 1<<16; i++ {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", out[i]))
		if err != nil {
			continue
		}
		for _, t := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", out[i], t.Name()))
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				var c int
				if _, err := fmt.Sscan(f, &c); err == nil {
					out = append(out, c)
				}
			}
		}
	}
	return out
}
