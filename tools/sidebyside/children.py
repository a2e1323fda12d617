"""Running a measured child: a command in its own process group under a subreaper, whose
whole process tree's CPU (rusage) is returned; and the tail of its output."""

import ctypes
import json
import os
import resource
import signal
import time

PR_SET_CHILD_SUBREAPER = 36

_libc = None


def _set_subreaper():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def run_measured(argv, cwd, env, out_path, timeout, stop_signal=signal.SIGTERM, tick=None):
    """Run argv in its own process group under a forked subreaper that waits for it and
    every descendant (orphans included), and return the rusage of that whole tree:
    {rc, user_sec, sys_sec, wall_sec, maxrss_kb, timed_out}. stdout+stderr go to out_path.
    On timeout or Ctrl-C the group gets stop_signal, then SIGKILL after 15 s. tick(), if
    given, is called every 50 ms while it runs (in this process, after the fork)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the subreaper
        code = 0
        try:
            os.close(r)
            os.setpgid(0, 0)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            _set_subreaper()
            fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            t0 = time.monotonic()
            child = os.fork()
            if child == 0:
                try:
                    os.dup2(fd, 1)
                    os.dup2(fd, 2)
                    os.chdir(cwd)
                    os.execvpe(argv[0], argv, env)
                except BaseException as e:  # exec failed
                    os.write(2, ("cannot run %s: %s\n" % (argv[0], e)).encode())
                os._exit(127)
            status, wall = None, None
            while True:
                try:
                    p, st = os.wait()
                except ChildProcessError:
                    break
                except InterruptedError:
                    continue
                if p == child:
                    status, wall = st, time.monotonic() - t0
            ru = resource.getrusage(resource.RUSAGE_CHILDREN)
            rc = os.waitstatus_to_exitcode(status) if status is not None else -1
            os.write(w, json.dumps({"rc": rc, "user_sec": ru.ru_utime, "sys_sec": ru.ru_stime,
                                    "wall_sec": wall, "maxrss_kb": ru.ru_maxrss}).encode())
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    try:
        os.setpgid(pid, pid)  # also done by the child; avoids a race with killpg below
    except OSError:
        pass
    deadline = time.monotonic() + timeout
    timed_out = False
    try:
        while True:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                # _stop_group reaped the subreaper (it is in the group it signals): the
                # run timed out, with no rusage to report.
                break
            if done:
                break
            if time.monotonic() > deadline and not timed_out:
                timed_out = True
                _stop_group(pid, stop_signal)
            if tick is not None and not timed_out:
                tick()
            time.sleep(0.05)
    except BaseException:
        _stop_group(pid, stop_signal)
        raise
    with os.fdopen(r, "rb") as f:
        data = f.read()
    res = json.loads(data) if data else {"rc": -1, "user_sec": None, "sys_sec": None,
                                         "wall_sec": None, "maxrss_kb": None}
    res["timed_out"] = timed_out
    return res


def _stop_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return
    for _ in range(300):
        try:
            done, _ = os.waitpid(pgid, os.WNOHANG)
        except ChildProcessError:
            done = pgid
        if done:
            break
        time.sleep(0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pgid, 0)
    except ChildProcessError:
        pass


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""

