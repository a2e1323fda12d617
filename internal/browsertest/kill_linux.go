package browsertest

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// killUsing kills every process whose command line mentions dir, and looks
// again until it has found none for a few passes in a row (a dying browser
// can still fork), or for at most two seconds. It returns how many it killed.
//
// chromedp kills the processes that have the browser's --user-data-dir on
// their command line. Debian's Chromium also starts chrome_crashpad_handler,
// detached (its parent is init) and without that flag; it has the scratch
// directory on its command line (--database=$XDG_CONFIG_HOME/chromium/...).
func killUsing(dir string) int {
	const (
		quietPasses = 3
		pause       = 20 * time.Millisecond
		limit       = 2 * time.Second
	)
	killed := 0
	deadline := time.Now().Add(limit)
	for quiet := 0; quiet < quietPasses && time.Now().Before(deadline); time.Sleep(pause) {
		n := killPass([]byte(dir))
		killed += n
		if n == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
	return killed
}

// killPass sends SIGKILL to the processes whose command line contains dir,
// and returns how many it found.
func killPass(dir []byte) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmdline, dir) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}
