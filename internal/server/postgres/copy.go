package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/server"
)

// startCopy starts a server whose data directory is a physical copy of o.CopyOf's, a
// running PostgreSQL of the same major version (server.Options.CopyOf): pg_basebackup
// of it, every relation's pages as they are there and the WAL written meanwhile replayed
// at start, as a standby's base backup but started as a server of its own. Its
// postgresql.conf is the copied one up to dbperf's lines (initdb's part, the same for
// both) and then this instance's own: o's profile, port and socket, so a copy may run
// another profile of the same version. The copied catalog holds the source's superuser,
// so the copy's password is the source's (server.NewNodeInstance). On any failure nothing
// is left running or behind.
func (e Engine) startCopy(ctx context.Context, o server.Options) (*server.Instance, error) {
	src := o.CopyOf
	if err := e.Check(o); err != nil {
		return nil, err
	}
	if src.Engine != e.Name() || !src.Alive() {
		return nil, fmt.Errorf("postgres: copy of %s: not a running PostgreSQL server", src.Dir)
	}
	bins, err := findPostgres(o.Version, o.CacheDir)
	if err != nil {
		return nil, err
	}
	profile := o.Profile
	if profile == "" {
		profile = "default"
	}
	conf, psrc, err := server.ReadProfile(o.ProfilesDir, "postgres", profile)
	if err != nil {
		return nil, err
	}
	in, err := server.NewNodeInstance(e, o, src)
	if err != nil {
		return nil, err
	}
	in.DataDir, in.LogPath = filepath.Join(in.Dir, "data"), filepath.Join(in.Dir, "postgres.log")
	in.Profile, in.Config, in.ProfileSource = profile, conf, psrc.Source()
	in.AfterStop(func() error { return removeSocketDir(in) })
	fail := func(err error) (*server.Instance, error) {
		_ = in.Stop(context.WithoutCancel(ctx))
		_ = removeSocketDir(in)
		_ = os.RemoveAll(in.Dir)
		return nil, fmt.Errorf("postgres: copy of the server on port %d: %w", src.Port, err)
	}
	bins, cred, err := runAs(in, bins)
	if err != nil {
		return fail(err)
	}
	sockDir, err := placeInstance(in, cred)
	if err != nil {
		return fail(err)
	}
	conninfo := fmt.Sprintf("host=127.0.0.1 port=%s user=%s sslmode=disable", strconv.Itoa(src.Port), pgSuperuser)
	if err := baseBackup(ctx, in, bins, cred, conninfo); err != nil {
		return fail(err)
	}
	path := filepath.Join(in.DataDir, "postgresql.conf")
	copied, err := os.ReadFile(path)
	if err != nil {
		return fail(err)
	}
	base, _, ok := strings.Cut(string(copied), confMarker)
	if !ok {
		return fail(fmt.Errorf("%s: no dbperf section: not a managed server's data", path))
	}
	if err := rewriteFile(path, base+instanceConf(in, conf, "", sockDir)); err != nil {
		return fail(fmt.Errorf("write postgresql.conf: %w", err))
	}
	if err := startPostgres(ctx, in, bins, cred); err != nil {
		return fail(err)
	}
	return in, nil
}
