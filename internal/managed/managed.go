// Package managed is the managed server of a run (dbperf run --managed): a server dbperf
// starts, in a work dir of the run's, and always stops again.
//
// Options, built once from the run's configuration, name the server engine, its version
// (installed on first use, Ensure), its config profile, and its memory and CPU limits
// (--server-memory, --server-cpus). Before anything starts, CheckLimits refuses limits
// that cannot be enforced: too little memory for the engine (*MemoryError, naming the
// least it needs), or no cgroup dbperf may make. Start starts the server under the cgroup
// hierarchies the limits need (internal/server's cgroup.go enforces them); the Server it
// returns says what the run records of it (Settings among the engine's settings, Env in
// the run's env, Notes to tell the user), and Close stops it (with a context of its own,
// so that it goes down after Ctrl-C too), warns when the kernel's out-of-memory killer
// killed some of its processes within the memory limit, and removes its data unless kept.
//
// A managed cluster (--cluster) is started elsewhere, on the same server.Options
// (Options.Server).
//
// Profiles lists the config profiles every engine can be given (`dbperf server list`).
package managed

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/store"
)

// Options are a managed server's.
type Options struct {
	// Engine is the server engine's name (catalog.Server): "postgres", "mariadb".
	Engine string
	// Version picks its binaries (--engine-version); "" is the engine's default.
	Version string
	// Profile names its config profile, looked up in ProfilesDir and then among the
	// built-in ones.
	Profile     string
	ProfilesDir string
	// CacheDir is where server versions are installed; MavenURL the repository they come
	// from ("" = Maven Central).
	CacheDir, MavenURL string
	// StorageEngine is the engine's storage engine (MariaDB: innodb, rocksdb).
	StorageEngine string
	// Limits are the server's memory and CPUs (zero: none).
	Limits server.Limits
	// ReadCgroups reads the machine's cgroup hierarchies when Limits are set; nil is
	// server.ReadCgroups.
	ReadCgroups func() (*server.Cgroups, error)
	// Keep keeps the server's data directory when it is closed (--keep).
	Keep bool
	// CopyOf is a server whose data the server starts from a physical copy of
	// (server.Options.CopyOf; sweep --same-data and --instances), nil for a fresh one.
	CopyOf *server.Instance
}

// cgroups reads the machine's cgroup hierarchies.
func (o Options) cgroups() (*server.Cgroups, error) {
	if o.ReadCgroups != nil {
		return o.ReadCgroups()
	}
	return server.ReadCgroups()
}

// Server is the server.Options of o's server under the work dir base, with the cgroup
// hierarchies its limits are enforced in (nil without limits, or when they cannot be
// read: the server reads them itself and says why).
func (o Options) Server(base string) server.Options {
	so := server.Options{
		WorkDir: base, Version: o.Version, Profile: o.Profile,
		ProfilesDir: o.ProfilesDir, CacheDir: o.CacheDir, MavenURL: o.MavenURL, StorageEngine: o.StorageEngine,
		Limits: o.Limits, CopyOf: o.CopyOf,
	}
	if o.Limits.Set() {
		if cg, err := o.cgroups(); err == nil {
			so.Cgroups = cg
		}
	}
	return so
}

// Ensure installs o's version of o's server engine on first use (server.Ensure), so that
// a sweep's versions are all there before its first point runs.
func Ensure(ctx context.Context, o Options) error {
	srv, err := catalog.Server(o.Engine)
	if err != nil {
		return err
	}
	return server.EnsureFrom(ctx, srv, o.MavenURL, o.CacheDir, o.Version)
}

// A Server is a run's managed server, started by Start.
type Server struct {
	*server.Instance
	// name is the engine's name as the options gave it, keep Options.Keep.
	name string
	keep bool
}

// Start starts o's server under the work dir base, installing its version on first use.
func Start(ctx context.Context, o Options, base string) (*Server, error) {
	srv, err := catalog.Server(o.Engine)
	if err != nil {
		return nil, err
	}
	so := o.Server(base)
	if err := server.EnsureFrom(ctx, srv, so.MavenURL, so.CacheDir, so.Version); err != nil {
		return nil, err
	}
	in, err := srv.Start(ctx, so)
	if err != nil {
		return nil, err
	}
	return &Server{Instance: in, name: o.Engine, keep: o.Keep}, nil
}

// Settings are what the run stores of the server among the engine's settings: that it
// is managed, its profile's name and text, its DSN redacted, and the profile lines its
// version left out (one per line).
func (s *Server) Settings() map[string]string {
	m := map[string]string{
		"dbperf.managed":      "true",
		"dbperf.profile":      s.Profile,
		"dbperf.profile_text": s.Config,
		"dbperf.dsn":          store.RedactDSN(s.DSN),
	}
	if len(s.ProfileSkipped) > 0 {
		m["dbperf.profile_skipped"] = strings.Join(s.ProfileSkipped, "\n")
	}
	return m
}

// Notes are the lines that tell the user, once the server started, what was changed to
// run it: each profile setting fitted under the memory limit, each profile line its
// version left out.
func (s *Server) Notes() []string {
	var out []string
	for _, f := range s.MemoryFitted {
		out = append(out, fmt.Sprintf("note: --server-memory %s: %s", server.FormatSize(s.Limits.Memory), f))
	}
	for _, n := range s.ProfileSkipped {
		out = append(out, fmt.Sprintf("note: profile %s: left out %s", s.Profile, n))
	}
	return out
}

// stopTimeout bounds Close's stop of the server.
const stopTimeout = 2 * time.Minute

// Close stops the server with a context of its own derived from ctx (after Ctrl-C the
// server must still go down) and removes its data unless kept. It returns the lines to
// tell the user: the out-of-memory killer's warning (OOMWarning), and where a kept data
// directory is.
func (s *Server) Close(ctx context.Context) []string {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	var out []string
	oom := OOMWarning(s.Instance) // read before Stop removes the cgroup
	_ = s.Stop(sctx)
	if oom != "" {
		out = append(out, oom)
	}
	if s.keep {
		out = append(out, fmt.Sprintf("kept the %s data directory %s", s.name, s.DataDir))
	} else {
		_ = s.Remove()
	}
	return out
}
