package postgres

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/server"
)

// startCopy starts a server whose data directory is a physical copy of o.CopyOf's, a
// PostgreSQL of the same major version (server.Options.CopyOf). A running one is copied
// with pg_basebackup: every relation's pages as they are there and the WAL written
// meanwhile replayed at start, as a standby's base backup but started as a server of its
// own. A stopped one, shut down cleanly, is copied by its files (copyStopped): several
// copies of it are then the same pages, which copies of a running server, taken one after
// another while its autovacuum works, need not be. Its
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
	if src.Engine != e.Name() || src.DataDir == "" {
		return nil, fmt.Errorf("postgres: copy of %s: not a PostgreSQL server", src.Dir)
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
	if src.Alive() {
		conninfo := fmt.Sprintf("host=127.0.0.1 port=%s user=%s sslmode=disable", strconv.Itoa(src.Port), pgSuperuser)
		err = baseBackup(ctx, in, bins, cred, conninfo)
	} else {
		err = copyStopped(ctx, src.DataDir, in.DataDir)
	}
	if err != nil {
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

// copyStopped copies the data directory of a server shut down cleanly (no postmaster.pid
// left: its shutdown checkpoint wrote every page) into dst, which must not exist, with
// cp -a: modes and owner (the server's user) kept.
func copyStopped(ctx context.Context, src, dst string) error {
	if _, err := os.Stat(filepath.Join(src, "postmaster.pid")); err == nil {
		return fmt.Errorf("%s: its server is running or did not shut down cleanly (postmaster.pid is there)", src)
	}
	if err := server.RunCmd(exec.CommandContext(ctx, "cp", "-a", src, dst)); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return nil
}
