package sweep

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dbperf/dbperf/internal/session"
)

// sameDataDir is the directory, in a point's --workdir dir, of its server from the copy.
const sameDataDir = "same-data"

// copyData is --same-data: once the first block has run whole (its loads, index builds
// and writes done, with --load-once), every point's server, the first point's too, is
// replaced by a server started from a physical copy of the first point's data
// (server.Options.CopyOf: the files of the first point's server, shut down first), each
// with the point's own profile (replaceServers). Why: two servers loaded apart with the same seed are not
// the same physical database (each row's page, each index's splits, what is vacuumed and
// hinted), and with --load-once that difference is in every later block. From the copy
// on, the points differ only in what the comparison changes, each server started from the
// same pages with a cold buffer pool, one after another, and then rescheduled at one
// moment (resetSchedules), so that they vacuum on one clock. The runs of the later blocks
// store ParamSameData. With --workdir, a copy's server has a directory of its own
// (sameDataDir) inside its point's, whose lock the old server holds until it stops.
// instance is the number of the servers from the copy (--instances).
func (i *interleaved) copyData(ctx context.Context, instance int) error {
	src := i.points[0]
	err := i.replaceServers(ctx, func(*trialPoint) *trialPoint { return src }, sameDataDir, instance)
	if err != nil {
		return err
	}
	i.copied = true
	if !i.quiet {
		fmt.Fprintf(i.sess.Out, "--same-data: %s now run on servers started from a copy of %s's data\n", strings.Join(i.names(), ", "), src.Name())
	}
	return nil
}

// replaceServers replaces every point's server by one started from a physical copy of
// the data of src(point)'s server, with the point's own profile (in dir, within the
// point's --workdir dir), and reschedules the new ones at one moment (resetSchedules);
// instance is the new servers' number. The old servers shut down first and are copied by
// their files: a copy of a running server is of its pages at that moment, and a source's
// autovacuum between two copies of it (seen here: a copy taken last ran qr100 30% faster
// than the first, docs/measurements/2026-11-29-instances.md) makes them other databases.
// If a new server cannot start, those started stop and the sweep ends.
func (i *interleaved) replaceServers(ctx context.Context, src func(*trialPoint) *trialPoint, dir string, instance int) error {
	for _, p := range i.points {
		if err := p.target.StopServer(ctx); err != nil {
			return fmt.Errorf("sweep point %s: stop its server to copy its data: %w", p.Name(), err)
		}
	}
	fresh := make([]*session.Target, len(i.points))
	closeFresh := func() {
		for _, t := range fresh {
			if t != nil {
				t.Close()
			}
		}
	}
	for pi, p := range i.points {
		cfg := p.cfg
		if cfg.WorkDir != "" {
			c := *cfg
			c.WorkDir = filepath.Join(cfg.WorkDir, dir)
			cfg = &c
		}
		from := src(p)
		o, err := i.sess.With(cfg).CopyOf(from.target)
		if err != nil {
			closeFresh()
			return session.BadInput(fmt.Errorf("--same-data or --instances: %w", err))
		}
		if fresh[pi], err = session.Open(ctx, o); err != nil {
			closeFresh()
			return fmt.Errorf("sweep point %s: start a server from a copy of %s's data: %w", p.Name(), from.Name(), err)
		}
	}
	for pi, p := range i.points {
		p.closeTarget()
		p.target = fresh[pi]
		p.run = p.target.Runner(p.cfg)
		i.attachProbes(ctx, p)
	}
	i.instance = instance
	i.resetSchedules(ctx)
	return nil
}

// names are the points' names.
func (i *interleaved) names() []string {
	out := make([]string, len(i.points))
	for pi, p := range i.points {
		out[pi] = p.Name()
	}
	return out
}
