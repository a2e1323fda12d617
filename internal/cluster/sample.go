package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/runner"
)

// step is what a step's sampling holds between Start and Stop.
type step struct {
	name       string
	cpu0       []float64 // each node's process tree CPU seconds at the start
	counters0  map[string]float64
	start      time.Time
	gauges     map[string]float64 // maximum over the step
	sessions   []int              // the step's sessions on each node
	stop, done chan struct{}
}

// nodeCPU is the CPU seconds of each node's process tree now, and its memory (the tree's
// private anonymous memory plus its largest shared memory, MiB).
func (r *Run) nodeCPU() ([]float64, []float64) {
	cpu := make([]float64, len(r.cl.Nodes))
	mem := make([]float64, len(r.cl.Nodes))
	for i, in := range r.cl.Nodes {
		s, err := r.sampler.Sample(hwstat.Request{TreeOf: in.PID()})
		if err != nil {
			cpu[i], mem[i] = -1, -1
			continue
		}
		var anon, shm uint64
		for _, pid := range s.Tree {
			p := s.Procs[pid]
			cpu[i] += p.TotalCPUSec()
			anon += p.RSSAnonBytes
			shm = max(shm, p.RSSShmemBytes)
		}
		mem[i] = float64(anon+shm) / (1 << 20)
	}
	return cpu, mem
}

// nodeFigures reads every node's replication figures: counters (names ending in _total)
// and gauges.
func (r *Run) nodeFigures(ctx context.Context) map[string]float64 {
	out := map[string]float64{}
	for i := range r.cl.Nodes {
		f, err := r.cl.Driver.Figures(ctx, r.cl, i)
		if err != nil {
			continue
		}
		for k, v := range f {
			out[k] = v
		}
	}
	return out
}

// Start samples the nodes at the start of a step's load and polls their lags and memory
// while it runs (runner.Profiler).
func (r *Run) Start(ctx context.Context, name string, sessions []runner.ProfiledSession) error {
	cpu, mem := r.nodeCPU()
	s := &step{name: name, cpu0: cpu, start: time.Now(), gauges: map[string]float64{},
		stop: make(chan struct{}), done: make(chan struct{})}
	// How many of the step's sessions each node serves (--spread places them).
	s.sessions = make([]int, len(r.cl.Nodes))
	for _, ps := range sessions {
		if ps.Node >= 0 && ps.Node < len(s.sessions) {
			s.sessions[ps.Node]++
		}
	}
	s.counters0 = map[string]float64{}
	for k, v := range r.nodeFigures(ctx) {
		if strings.HasSuffix(k, "_total") {
			s.counters0[k] = v
		}
	}
	s.gauge(mem, nil)
	r.mu.Lock()
	r.cur = s
	r.mu.Unlock()
	go func() {
		defer close(s.done)
		tick := time.NewTicker(poll)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				_, mem := r.nodeCPU()
				s.gauge(mem, r.nodeFigures(ctx))
			}
		}
	}()
	return nil
}

// gauge keeps the maximum of each node's memory and each gauge figure.
func (s *step) gauge(mem []float64, figs map[string]float64) {
	for i, m := range mem {
		if m >= 0 {
			k := fmt.Sprintf("node%d.mem_mib_max", i)
			s.gauges[k] = max(s.gauges[k], m)
		}
	}
	for k, v := range figs {
		if !strings.HasSuffix(k, "_total") {
			s.gauges[k+"_max"] = max(s.gauges[k+"_max"], v)
		}
	}
}

// Stop ends the step's sampling: per node its CPU seconds and CPU share over the load,
// its peak memory, the counters' differences and the gauges' maxima (runner.Profiler).
func (r *Run) Stop(ctx context.Context, name string) error {
	r.mu.Lock()
	s := r.cur
	r.cur = nil
	r.mu.Unlock()
	if s == nil {
		return nil
	}
	close(s.stop)
	<-s.done
	cpu, mem := r.nodeCPU()
	figs := r.nodeFigures(ctx)
	s.gauge(mem, figs)
	out := map[string]float64{}
	secs := time.Since(s.start).Seconds()
	for i := range cpu {
		if cpu[i] >= 0 && s.cpu0[i] >= 0 {
			out[fmt.Sprintf("node%d.cpu_sec", i)] = cpu[i] - s.cpu0[i]
			if secs > 0 {
				out[fmt.Sprintf("node%d.cpu_pct", i)] = 100 * (cpu[i] - s.cpu0[i]) / secs
			}
		}
	}
	for k, v := range figs {
		if b, ok := s.counters0[k]; ok {
			out[strings.TrimSuffix(k, "_total")] = v - b
		}
	}
	for k, v := range s.gauges {
		out[k] = v
	}
	for i, n := range s.sessions {
		out[fmt.Sprintf("node%d.sessions", i)] = float64(n)
	}
	r.mu.Lock()
	r.figures[name] = out
	r.mu.Unlock()
	return nil
}

// StepFigures hands over a finished step's node figures, merged into its metrics as
// "cluster.<figure>", and names in its error or note the nodes that died (the record
// calls it before it stores the step's result).
func (r *Run) StepFigures(name string, res *metrics.StepResult) {
	r.nameDeaths(name, res)
	r.mu.Lock()
	f := r.figures[name]
	delete(r.figures, name)
	r.mu.Unlock()
	if len(f) == 0 {
		return
	}
	if res.Metrics == nil {
		res.Metrics = map[string]float64{}
	}
	for k, v := range f {
		res.Metrics["cluster."+k] = v
	}
}
