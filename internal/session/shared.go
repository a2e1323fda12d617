package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dbperf/dbperf/internal/managed"
)

// Shared is the server the parts of a run over several agents share (dbperf run
// --agents, package parts): the --dsn each part gets, the engine settings the merged run
// records, and Stop.
type Shared struct {
	// DSN is the parts' --dsn: the run's own --dsn, or @FILE naming a file that holds the
	// DSN of the managed server the coordinator started.
	DSN string
	// Settings are the managed server's (Server.Settings); none for a --dsn server.
	Settings map[string]string
	stop     func()
}

// Stop stops the managed server, removes its data unless --keep, and its work dir.
func (s *Shared) Stop() { s.stop() }

// StartShared starts o.Config's managed server for the parts of a run over several agents
// (without --managed: the run's --dsn, no settings, nothing to stop). The parts reach the
// server through a file only this user reads, so a job holds its path, never the
// password; the server listens on 127.0.0.1, so the agents that take the parts must run
// on this host. A server that cannot start is a *BadInputError.
func StartShared(ctx context.Context, o Options) (*Shared, error) {
	cfg, name := o.Config, o.Engine.Meta().Name
	if !cfg.Managed {
		return &Shared{DSN: cfg.DSN, Settings: map[string]string{}, stop: func() {}}, nil
	}
	base, cleanup, err := WorkDir(cfg, name)
	if err != nil {
		return nil, err
	}
	in, err := managed.Start(ctx, ManagedOptions(cfg, name, o.ReadCgroups), base)
	if err != nil {
		cleanup()
		return nil, badInput(err)
	}
	stop := func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		_ = in.Stop(sctx)
		if !cfg.Keep {
			_ = in.Remove()
		}
		cleanup()
	}
	dsnFile := filepath.Join(base, "server.dsn")
	if err := os.WriteFile(dsnFile, []byte(in.DSN+"\n"), 0o600); err != nil {
		stop()
		return nil, fmt.Errorf("--agents: write the server's DSN for the parts: %w", err)
	}
	return &Shared{DSN: "@" + dsnFile, Settings: in.Settings(), stop: stop}, nil
}
