package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbperf/dbperf/internal/config"
)

// clusterFlags are --cluster, --node-latency, --node-jitter and --spread.
type clusterFlags struct {
	nodes   int
	latency string
	jitter  string
	spread  bool
}

// add registers the cluster flags on fl.
func (f *clusterFlags) add(fl *pflag.FlagSet) {
	fl.IntVar(&f.nodes, "cluster", 0, "with --managed: start a cluster of N nodes on 127.0.0.1 (postgres: a primary and N-1 synchronous streaming standbys, synchronous level by --profile sync-on|sync-remote-write|sync-remote-apply; mariadb: N Galera nodes) and audit every node after every step (docs/clusters.md)")
	fl.StringVar(&f.latency, "node-latency", "", "with --cluster: round-trip delay added to every replication link between nodes by dbperf's in-process proxy, e.g. 1ms, 5ms (default 0: links through the proxy, no delay); dbperf sweep takes a list, e.g. 0,1ms,5ms")
	fl.StringVar(&f.jitter, "node-jitter", "", "with --node-latency: the round trip varies by up to ± this much (uniform per chunk, order kept)")
	fl.BoolVar(&f.spread, "spread", false, "with --cluster: each step's sessions on the nodes in turn instead of all on node 0 (mariadb: every session, each Galera node takes writes; postgres: the read-only sessions, such as queries, on the standbys, writers on the primary); each step's note says which session went where (docs/clusters.md)")
}

// apply checks the cluster flags' values and sets them in cfg.
func (f *clusterFlags) apply(cfg *config.Run, changed func(string) bool) []error {
	var errs []error
	if changed("cluster") {
		if f.nodes < 2 || f.nodes > 9 {
			errs = append(errs, fmt.Errorf("--cluster %d: a cluster has 2 to 9 nodes", f.nodes))
		} else {
			cfg.Cluster = f.nodes
		}
	}
	if changed("node-latency") {
		d, err := parseNodeLatency(f.latency)
		if err != nil {
			errs = append(errs, fmt.Errorf("--node-latency %w", err))
		} else {
			cfg.NodeLatency = d
		}
	}
	if changed("node-jitter") {
		d, err := parseNodeLatency(f.jitter)
		if err != nil {
			errs = append(errs, fmt.Errorf("--node-jitter %w", err))
		} else {
			cfg.NodeJitter = d
		}
	}
	cfg.Spread = f.spread
	return errs
}

// parseNodeLatency reads one delay: a Go duration ("5ms", "500us") or a number of
// milliseconds ("5", "0").
func parseNodeLatency(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if ms, err := strconv.ParseFloat(s, 64); err == nil {
		d = time.Duration(ms * float64(time.Millisecond))
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("%q: want a duration such as 5ms or 500us, or milliseconds (5)", s)
	}
	if d < 0 || d > 10*time.Second {
		return 0, fmt.Errorf("%q: want 0 to 10s", s)
	}
	return d, nil
}

// sweepLatencies reads dbperf sweep's --node-latency, a list (0,1ms,5ms): the distance
// axis. The flag's own value is left at the first, so the shared checks see one latency;
// each point gets its own (sweep.Resolver). None (or one) is no axis.
func sweepLatencies(changed bool, f *clusterFlags) ([]time.Duration, error) {
	if !changed {
		return nil, nil
	}
	var out []time.Duration
	for _, v := range strings.Split(f.latency, ",") {
		d, err := parseNodeLatency(v)
		if err != nil {
			return nil, fmt.Errorf("--node-latency %w", err)
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if len(out) > 0 {
		f.latency = out[0].String()
	}
	if len(out) < 2 {
		return nil, nil
	}
	return out, nil
}
