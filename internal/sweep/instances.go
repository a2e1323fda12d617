package sweep

import (
	"context"
	"fmt"
	"strings"
)

// Server instances (--instances N): two servers of one configuration, started the same
// way on the same data, can differ in what a query costs them for as long as they run
// (measured on the project's 2-core VM: 1–4% of a query backend's CPU per query between
// identical PostgreSQL servers, with or without address-space randomization or huge pages,
// docs/measurements/2026-11-29-instances.md). A sweep that keeps one server per point has
// that difference in every block: its blocks cannot show it, and its interval is too
// narrow by it. With --instances N the blocks are split into N runs of consecutive blocks
// and, between two, every point's server is replaced by one started from a physical copy
// of its own data (of the first point's with --same-data; replaceServers), so each run of
// blocks compares other servers. The runs store their instance (store.ParamInstance), and
// the report takes each instance's blocks as one unit of the pair: the difference between
// servers is then measured (the variance table's "instances") and in the interval.

// instanceDir is the directory, in a point's --workdir dir, of its instance k's server.
func instanceDir(k int) string { return fmt.Sprintf("instance-%d", k) }

// instanceOf is the instance (from 1) that block b of blocks 1..last runs on, with n
// instances: the blocks split into n runs as equal as they can be, in order. With
// --same-data the first block (the loads, on the servers that made them) is instance 1
// alone and the later blocks are split into the other n − 1.
func instanceOf(b, last, n int, sameData bool) int {
	if n <= 1 || b <= 1 {
		return 1
	}
	if sameData {
		return 2 + (b-2)*(n-1)/max(last-1, 1)
	}
	return 1 + (b-1)*n/last
}

// renew replaces every point's server by one started from a physical copy of its own
// data (of the first point's with --same-data), the servers of instance.
func (i *interleaved) renew(ctx context.Context, instance int) error {
	src := func(p *trialPoint) *trialPoint { return p }
	if i.sameData {
		src = func(*trialPoint) *trialPoint { return i.points[0] }
	}
	if err := i.replaceServers(ctx, src, instanceDir(instance), instance); err != nil {
		return err
	}
	if !i.quiet {
		fmt.Fprintf(i.sess.Out, "--instances: %s now run on server instance %d of %d\n", strings.Join(i.names(), ", "), instance, i.instances)
	}
	return nil
}
