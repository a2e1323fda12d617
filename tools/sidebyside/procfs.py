"""The /proc readings of the side-by-side comparison: the CPU of a process tree (a server,
the echo server) and of the whole machine, and whether a process still runs.

Hand-written on purpose: the maintained library for this (psutil) is not in the Python
standard library, is not installed on the machines this runs on (the CI machine has only
python3's standard library), and this script must run on a fresh machine with nothing to
install. What it needs is small: from /proc/<pid>/stat the state, the parent pid and the
CPU ticks (utime, stime, cutime, cstime). The parsers are pure functions of the file's
text so that the tests can feed them fixed samples; the readers take the /proc directory
as an argument (default /proc) so that the tests can point them at a made-up one.
"""

import os

PROC = "/proc"
TICK = os.sysconf("SC_CLK_TCK")


def parse_stat(data):
    """The text of one /proc/<pid>/stat -> (ppid, utime+stime+cutime+cstime in ticks).
    The process name (field 2) is in parentheses and may itself hold spaces and
    parentheses, so the fields are counted from the last ')' of the text (proc(5))."""
    rest = data[data.rindex(")") + 2:].split()
    # rest[0]=state [1]=ppid ... [11]=utime [12]=stime [13]=cutime [14]=cstime
    return int(rest[1]), sum(int(x) for x in rest[11:15])


def stat_state(data):
    """The state letter (R, S, D, Z, ...) of the text of one /proc/<pid>/stat: the first
    character after the last ") "; '' for an empty text."""
    return data.split(") ")[-1][:1]


def proc_stat_all(proc=PROC):
    """pid -> (ppid, utime+stime+cutime+cstime in ticks) for every process. A process
    that exits while the directory is read (its stat cannot be opened) is left out."""
    out = {}
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        try:
            with open(os.path.join(proc, name, "stat"), "rb") as f:
                data = f.read().decode("ascii", "replace")
        except OSError:
            continue
        out[int(name)] = parse_stat(data)
    return out


def tree_ticks(procs, root):
    """The ticks of root and all its descendants in procs (as proc_stat_all returns it),
    None when root is not in procs."""
    if root not in procs:
        return None
    kids = {}
    for pid, (ppid, _) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    total, todo = 0, [root]
    while todo:
        p = todo.pop()
        total += procs[p][1]
        todo.extend(kids.get(p, []))
    return total


def tree_cpu_sec(root, proc=PROC):
    """CPU seconds of root and all its descendants, including the children they reaped
    (cutime/cstime), so processes that exit between two readings still count; None when
    root is gone."""
    total = tree_ticks(proc_stat_all(proc), root)
    if total is None:
        return None
    return total / TICK


def machine_busy_sec(proc=PROC):
    """CPU seconds every process of the machine has used, kernel threads included, each
    with the children it has waited for (utime+stime+cutime+cstime), summed: its difference
    over a window is the machine's busy CPU in it, processes that exited within it
    included (they count through their parent's cutime/cstime). As dbperf's hw.cpupq, not
    /proc/stat's busy ticks, which on a tickless kernel miss work shorter than a tick."""
    return sum(v[1] for v in proc_stat_all(proc).values()) / TICK


def alive(pid, proc=PROC):
    """Whether pid exists and is not a zombie."""
    try:
        with open(os.path.join(proc, "%d" % pid, "stat")) as f:
            return stat_state(f.read()) != "Z"
    except OSError:
        return False
