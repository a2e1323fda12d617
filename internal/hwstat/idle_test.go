package hwstat

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHoldShallowIdle: while the request is held, no CPU enters an idle state that takes
// longer than 0 µs to leave (cpuidle's usage counters of those states stand still); after
// it is released they may again.
func TestHoldShallowIdle(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for /dev/cpu_dma_latency")
	}
	deep := func() (n int64, ok bool) {
		for s := 0; ; s++ {
			dir := "/sys/devices/system/cpu/cpu0/cpuidle/state" + strconv.Itoa(s)
			lat, err := os.ReadFile(dir + "/latency")
			if err != nil {
				return n, s > 1
			}
			if strings.TrimSpace(string(lat)) == "0" {
				continue
			}
			u, err := os.ReadFile(dir + "/usage")
			if err != nil {
				return 0, false
			}
			v, _ := strconv.ParseInt(strings.TrimSpace(string(u)), 10, 64)
			n += v
		}
	}
	if _, ok := deep(); !ok {
		t.Skip("no cpuidle states with a wake-up latency here")
	}
	c, err := HoldShallowIdle()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // a CPU asleep before the request wakes once
	before, _ := deep()
	time.Sleep(300 * time.Millisecond)
	after, _ := deep()
	c.Close()
	if after != before {
		t.Errorf("CPU 0 entered deep idle states %d times while they were held off", after-before)
	}
}
