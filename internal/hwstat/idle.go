package hwstat

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// cpuDMALatency is the kernel's PM QoS request for the CPUs' wake-up latency.
const cpuDMALatency = "/dev/cpu_dma_latency"

// HoldShallowIdle keeps every CPU out of idle states that take more than 0 µs to leave,
// for as long as the returned file stays open: idle CPUs then poll instead of sleeping
// (what tuned's latency-performance profile and cyclictest do, through the same PM QoS
// request). A latency-bound step then no longer pays for waking a CPU, nor changes with
// other periodic work on the machine (a sampling profiler's timer keeps CPUs from sleeping
// deep, and so would make such a step faster). Closing the file drops the request. It
// needs write access to /dev/cpu_dma_latency (root).
func HoldShallowIdle() (io.Closer, error) {
	f, err := os.OpenFile(cpuDMALatency, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("hold the CPUs out of deep idle: %w", err)
	}
	if err := binary.Write(f, binary.NativeEndian, int32(0)); err != nil {
		f.Close()
		return nil, fmt.Errorf("hold the CPUs out of deep idle: write %s: %w", cpuDMALatency, err)
	}
	return f, nil
}
