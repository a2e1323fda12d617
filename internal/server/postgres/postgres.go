// Package postgres is the managed PostgreSQL server engine (server.Engine): Debian's
// package or a version installed from Maven Central (install.go), initialised with
// initdb from a config profile, its superuser reachable only with SCRAM and the
// instance's password.
//
// The versions are Debian's majors or zonky builds from Maven Central. When dbperf runs
// as root, initdb and the server run as an unprivileged user. Every account uses SCRAM,
// and the benchmark's database is ib. cluster.go starts a primary and streaming
// standbys: pg_basebackup through the link's address, then synchronous_standby_names =
// 'ANY N (…)' once they stream, at the synchronous level the profile sets; its
// ClusterDriver reads replay LSNs, md5 sums per table and pg_stat_replication's lags.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbperf/dbperf/internal/server"

	"github.com/jackc/pgx/v5"
)

// PostgreSQL managed-server settings, in one place.
const (
	// pgDefaultMajor is the version used when Options.Version is empty: Debian's package.
	pgDefaultMajor = "15"
	// pgDebianRoot holds Debian's server packages: /usr/lib/postgresql/<major>/bin.
	pgDebianRoot = "/usr/lib/postgresql"
	// pgSuperuser is the bootstrap superuser initdb creates, with the instance's password.
	pgSuperuser = "postgres"
	// pgDatabase is the database the benchmark runs in (the reference's `ib`, §1.2).
	pgDatabase = "ib"
	// pgReadyTimeout bounds the wait for the first successful connection after start.
	pgReadyTimeout = 60 * time.Second
	// pgStopGrace is how long a fast shutdown (SIGINT) may take before the server is killed.
	pgStopGrace = 30 * time.Second
	// pgRunUser is the unprivileged user created to run the server when dbperf runs as root
	// and the system has no `postgres` user (initdb and postgres refuse to run as root).
	pgRunUser = "dbperf"
	// pgShortSocketPrefix names the directory under the system temp dir that holds the
	// socket when the instance dir's path is too long for one.
	pgShortSocketPrefix = "dbperf-pg-"
)

// pgBinaries is one installation of the server programs.
type pgBinaries struct {
	bin string // directory holding initdb and postgres
	lib string // directory for LD_LIBRARY_PATH, or "" (Debian's binaries need none)
}

// env is the environment the server programs run with.
func (b pgBinaries) env() []string {
	env := os.Environ()
	if b.lib != "" {
		env = append(env, "LD_LIBRARY_PATH="+b.lib)
	}
	// Messages in English whatever dbperf's locale, so the log tail in errors is readable.
	return append(env, "LC_ALL=C")
}

// findPostgres locates the binaries of version: "" is Debian's default major; a version
// whose Debian package is installed (/usr/lib/postgresql/<v>/bin) uses it; any other is
// looked up among the versions installed in cacheDir (InstallPostgres), the newest match
// winning ("13" matches 13.x.y, "13.18" matches 13.18.y, "13.18.0" only itself).
func findPostgres(version, cacheDir string) (pgBinaries, error) {
	major := version
	if major == "" {
		major = pgDefaultMajor
	}
	deb := filepath.Join(pgDebianRoot, major, "bin")
	if server.IsFile(filepath.Join(deb, "postgres")) {
		return pgBinaries{bin: deb}, nil
	}
	if version == "" {
		return pgBinaries{}, fmt.Errorf("postgres %s is not installed: %s/postgres not found (apt-get install postgresql-%s)", major, deb, major)
	}
	dir, err := artifact().Match(cacheDir, version)
	if err != nil {
		return pgBinaries{}, err
	}
	if dir == "" {
		return pgBinaries{}, fmt.Errorf("postgres %s is not installed: run \"dbperf server install postgres@%s\"", version, version)
	}
	b := pgBinaries{bin: filepath.Join(dir, "bin")}
	if server.IsDir(filepath.Join(dir, "lib")) {
		b.lib = filepath.Join(dir, "lib")
	}
	return b, nil
}

// Engine is the managed PostgreSQL server engine.
type Engine struct{}

// New is the PostgreSQL server engine, as the catalog lists it.
func New() Engine { return Engine{} }

// Name is "postgres", the client engine's name.
func (Engine) Name() string { return "postgres" }

// Check refuses nothing PostgreSQL knows before it starts: it has one storage engine.
func (Engine) Check(o server.Options) error {
	if o.StorageEngine != "" {
		return fmt.Errorf("postgres has one storage engine: %q does not apply", o.StorageEngine)
	}
	return nil
}

// StopSignal is SIGINT, PostgreSQL's fast shutdown (active transactions are rolled back,
// a shutdown checkpoint is written), with 30 s before the server is killed.
func (Engine) StopSignal() (syscall.Signal, time.Duration) { return syscall.SIGINT, pgStopGrace }

// Installs says whether version comes from Maven Central: any but "" and a major whose
// Debian package is installed.
func (Engine) Installs(version string) bool {
	return version != "" && !server.IsFile(filepath.Join(pgDebianRoot, version, "bin", "postgres"))
}

// Versions lists Debian's installed majors, then the versions installed in cacheDir.
func (Engine) Versions(cacheDir string) ([]server.Version, error) {
	var out []server.Version
	ents, _ := os.ReadDir(pgDebianRoot)
	for _, e := range ents {
		if server.ValidVersion(e.Name()) && server.IsFile(filepath.Join(pgDebianRoot, e.Name(), "bin", "postgres")) {
			out = append(out, server.Version{Version: e.Name(), Source: "Debian"})
		}
	}
	return artifact().AppendVersions(out, cacheDir)
}

// Install installs a PostgreSQL version from Maven Central (install.go).
func (Engine) Install(ctx context.Context, baseURL, cacheDir, version string) (string, error) {
	return artifact().Install(ctx, baseURL, cacheDir, version)
}

// Start initialises a fresh PostgreSQL data directory in a new directory under
// o.WorkDir from the profile o.Profile, starts the server listening on 127.0.0.1 at a free
// port and on a unix socket, waits until it accepts connections, and creates the database
// `ib`. The returned Instance's DSN reaches `ib` as the superuser `postgres` over TCP,
// with the password generated for the instance: every connection, TCP or unix socket,
// authenticates with SCRAM-SHA-256 (password_encryption = scram-sha-256, pg_hba.conf
// scram-sha-256 everywhere), and the socket's directory is the instance dir, 0700.
// When dbperf runs as root the server runs as the `postgres` system user (or a created
// system user `dbperf`), because initdb and postgres refuse to run as root; the instance
// dir (and a short socket dir) then belong to that user, still 0700: root enters it by
// its privilege, the server's user as owner, no other user at all.
// On any failure after the server started, it is stopped before Start returns.
func (e Engine) Start(ctx context.Context, o server.Options) (*server.Instance, error) {
	if o.CopyOf != nil {
		return e.startCopy(ctx, o)
	}
	in, _, _, err := e.start(ctx, o, "")
	return in, err
}

// start is Start with clusterConf, settings of a cluster's primary written before the
// profile (so a profile can change them); it returns the binaries and the credential the
// server runs with too, for its standbys.
func (e Engine) start(ctx context.Context, o server.Options, clusterConf string) (*server.Instance, pgBinaries, *syscall.Credential, error) {
	fail := func(err error) (*server.Instance, pgBinaries, *syscall.Credential, error) {
		return nil, pgBinaries{}, nil, err
	}
	if err := e.Check(o); err != nil {
		return fail(err)
	}
	bins, err := findPostgres(o.Version, o.CacheDir)
	if err != nil {
		return fail(err)
	}
	profile := o.Profile
	if profile == "" {
		profile = "default"
	}
	conf, src, err := server.ReadProfile(o.ProfilesDir, "postgres", profile)
	if err != nil {
		return fail(err)
	}
	in, err := server.NewInstance(e, o)
	if err != nil {
		return fail(err)
	}
	in.DataDir, in.LogPath = filepath.Join(in.Dir, "data"), filepath.Join(in.Dir, "postgres.log")
	in.Profile, in.Config, in.ProfileSource = profile, conf, src.Source()
	in.AfterStop(func() error { return removeSocketDir(in) })
	bins, cred, err := initPostgres(ctx, in, bins, conf, clusterConf)
	if err != nil {
		_ = removeSocketDir(in)
		_ = os.RemoveAll(in.Dir)
		return fail(err)
	}
	if err := startPostgres(ctx, in, bins, cred); err != nil {
		// The error carries the log's last lines; nothing is left behind.
		_ = in.Stop(context.WithoutCancel(ctx))
		_ = os.RemoveAll(in.Dir)
		return fail(err)
	}
	return in, bins, cred, nil
}

// Start starts a managed PostgreSQL (Engine.Start), for tests and benchmarks.
func Start(ctx context.Context, o server.Options) (*server.Instance, error) {
	return New().Start(ctx, o)
}

// initPostgres runs initdb (as an unprivileged user when dbperf is root) with the
// instance's password and SCRAM authentication, writes pg_hba.conf, and appends the
// profile and dbperf's connection settings to postgresql.conf.
// It returns the binaries to run (a copy when root's user cannot reach the originals) and
// the credential to run them with (nil when dbperf is not root).
func initPostgres(ctx context.Context, in *server.Instance, bins pgBinaries, conf, clusterConf string) (pgBinaries, *syscall.Credential, error) {
	fail := func(err error) (pgBinaries, *syscall.Credential, error) { return pgBinaries{}, nil, err }
	bins, cred, err := runAs(in, bins)
	if err != nil {
		return fail(err)
	}
	sockDir, err := placeInstance(in, cred)
	if err != nil {
		return fail(err)
	}

	// The superuser's password reaches initdb in a file only the server's user can read,
	// removed at once; initdb stores it as a SCRAM-SHA-256 verifier (-A scram-sha-256).
	pwfile := filepath.Join(in.Dir, "pwfile")
	if err := server.WritePrivateFile(pwfile, []byte(in.Password()+"\n")); err != nil {
		return fail(fmt.Errorf("postgres: password file: %w", err))
	}
	defer os.Remove(pwfile)
	if cred != nil {
		if err := os.Chown(pwfile, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(fmt.Errorf("postgres: chown %s: %w", pwfile, err))
		}
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bins.bin, "initdb"),
		"-D", in.DataDir, "-U", pgSuperuser, "-A", "scram-sha-256", "--pwfile="+pwfile,
		"-E", "UTF8", "--locale=C", "--no-sync")
	cmd.Dir, cmd.Env = in.Dir, bins.env()
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if err := server.RunCmd(cmd); err != nil {
		return fail(fmt.Errorf("postgres: %w", err))
	}
	_ = os.Remove(pwfile)
	if err := rewriteFile(filepath.Join(in.DataDir, "pg_hba.conf"), pgHBA); err != nil {
		return fail(fmt.Errorf("postgres: write pg_hba.conf: %w", err))
	}

	text := instanceConf(in, conf, clusterConf, sockDir)
	f, err := os.OpenFile(filepath.Join(in.DataDir, "postgresql.conf"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fail(fmt.Errorf("postgres: write postgresql.conf: %w", err))
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fail(fmt.Errorf("postgres: write postgresql.conf: %w", err))
	}
	if err := f.Close(); err != nil {
		return fail(fmt.Errorf("postgres: write postgresql.conf: %w", err))
	}
	return bins, cred, nil
}

// confMarker begins what dbperf adds to initdb's postgresql.conf (instanceConf): a copy
// of another instance's data keeps the lines before it and adds its own.
const confMarker = "\n# ---- dbperf managed instance: pg_stat_statements loaded"

// instanceConf is what dbperf appends to initdb's postgresql.conf for instance in:
// pg_stat_statements preloaded, clusterConf, the profile conf, loopback and the socket
// in sockDir only, and the profile's memory settings fitted under in.Limits.Memory (noted
// in in.Config and in.MemoryFitted).
func instanceConf(in *server.Instance, conf, clusterConf, sockDir string) string {
	var b strings.Builder
	// Before the profile, so a profile can change it (a profile that preloads other
	// libraries must list pg_stat_statements too for `dbperf run --explain`).
	b.WriteString(confMarker + ", tracking off until a run asks (dbperf run --explain) ----\n")
	b.WriteString("shared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track = 'none'\n")
	b.WriteString(clusterConf)
	fmt.Fprintf(&b, "\n# ---- dbperf profile %q ----\n%s\n", in.Profile, strings.TrimRight(conf, "\n"))
	b.WriteString("\n# ---- dbperf managed instance: loopback and a private unix socket dir only, passwords as SCRAM ----\n")
	fmt.Fprintf(&b, "listen_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = '%s'\nunix_socket_permissions = 0700\npassword_encryption = scram-sha-256\n",
		in.Port, strings.ReplaceAll(sockDir, "'", "''"))
	// Last, so they win over the profile; the stored profile text shows them too.
	if fitted, notes := pgFitMemory(conf, in.Limits.Memory); fitted != "" {
		b.WriteString(fitted)
		in.Config = strings.TrimRight(in.Config, "\n") + "\n" + fitted
		in.MemoryFitted = notes
	}
	return b.String()
}

// runAs is the credential in's server runs with (nil when dbperf is not root:
// unprivilegedCredential) and the binaries that user can run (a copy when it cannot reach
// the originals), once the instance dir is checked traversable for it.
func runAs(in *server.Instance, bins pgBinaries) (pgBinaries, *syscall.Credential, error) {
	cred, err := unprivilegedCredential()
	if err != nil || cred == nil {
		return bins, nil, err
	}
	if bins, err = accessibleBinaries(bins, in.Dir, cred); err != nil {
		return bins, nil, err
	}
	if err := checkTraversable(in.Dir, cred); err != nil {
		return bins, nil, err
	}
	return bins, cred, nil
}

// baseBackup runs pg_basebackup into in.DataDir from the server conninfo reaches (with
// in's password, the source's), as cred's user: every relation's pages as they are, and
// the WAL written meanwhile, streamed.
func baseBackup(ctx context.Context, in *server.Instance, bins pgBinaries, cred *syscall.Credential, conninfo string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(bins.bin, "pg_basebackup"),
		"-D", in.DataDir, "-d", conninfo, "-X", "stream", "-c", "fast", "--no-sync")
	// The password in the environment of pg_basebackup only (readable by its user and
	// root, as the server's files are), never on its command line.
	cmd.Dir, cmd.Env = in.Dir, append(bins.env(), "PGPASSWORD="+in.Password())
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	return server.RunCmd(cmd)
}

// placeInstance gives the instance a free port and the directory of its unix socket (the
// instance dir, or a short one when that path is too long for a socket), both owned by
// the server's user when cred is set; it returns the socket's directory.
func placeInstance(in *server.Instance, cred *syscall.Credential) (string, error) {
	port, err := server.FreePort()
	if err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	in.Port = port
	sockDir := in.Dir
	if len(filepath.Join(sockDir, ".s.PGSQL."+strconv.Itoa(port))) >= server.MaxSocketPath {
		// 0700, as the instance dir: private to the server's user.
		if sockDir, err = server.ShortSocketDir(pgShortSocketPrefix); err != nil {
			return "", fmt.Errorf("postgres: %w", err)
		}
	}
	in.Socket = filepath.Join(sockDir, ".s.PGSQL."+strconv.Itoa(port))
	if cred != nil {
		for _, d := range []string{in.Dir, sockDir} {
			if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
				return "", fmt.Errorf("postgres: chown %s: %w", d, err)
			}
		}
	}
	return sockDir, nil
}

// startPostgres starts `postgres -D data`, waits until it accepts connections, creates the
// benchmark database and fills in DSN and Version.
func startPostgres(ctx context.Context, in *server.Instance, bins pgBinaries, cred *syscall.Credential) error {
	huge, err := reserveHugePages(ctx, in, bins, cred)
	if err != nil {
		return err
	}
	if huge != nil {
		// Others reserve once this server has mapped its pages (or failed); the pages
		// added for it go back after it stopped.
		defer huge.Mapped()
		in.AfterStop(huge.Release)
	}
	// Not CommandContext: the server's lifetime is managed by Stop, not by ctx.
	cmd := exec.Command(filepath.Join(bins.bin, "postgres"), "-D", in.DataDir)
	cmd.Dir, cmd.Env = in.Dir, bins.env()
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if err := in.Launch(cmd); err != nil {
		return err
	}
	admin := pgURL(in.Port, "postgres", in.Password())
	var conn *pgx.Conn
	err = in.WaitReady(ctx, pgReadyTimeout, func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		c, err := pgx.Connect(cctx, admin)
		if err != nil {
			return err
		}
		conn = c
		return nil
	})
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var have bool // a copy of another instance's data has it already
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", pgDatabase).Scan(&have); err != nil {
		return fmt.Errorf("postgres: look for database %s: %w", pgDatabase, err)
	}
	if !have {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgDatabase); err != nil {
			return fmt.Errorf("postgres: create database %s: %w", pgDatabase, err)
		}
	}
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&in.Version); err != nil {
		return fmt.Errorf("postgres: server_version: %w", err)
	}
	in.DSN = pgURL(in.Port, pgDatabase, in.Password())
	in.TCPDSN = in.DSN
	return nil
}

// pgHBA is a managed server's pg_hba.conf: the superuser's password (SCRAM-SHA-256) on
// every connection, through the unix socket too, and TCP from 127.0.0.1 only.
const pgHBA = `# pg_hba.conf written by dbperf: every connection needs the instance's password
# (SCRAM-SHA-256); TCP from 127.0.0.1 only (the server listens nowhere else), the unix
# socket's directory is private to the server's user.
# TYPE  DATABASE     USER  ADDRESS       METHOD
local   all          all                 scram-sha-256
host    all          all   127.0.0.1/32  scram-sha-256
local   replication  all                 scram-sha-256
host    replication  all   127.0.0.1/32  scram-sha-256
`

// pgURL is the URL of database db on a managed server: superuser with the instance's
// password, loopback, no TLS.
func pgURL(port int, db, password string) string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", pgSuperuser, password, port, db)
}

// rewriteFile replaces the contents of the existing file path, keeping its owner and mode
// (files in the data dir belong to the server's user when dbperf runs as root).
func rewriteFile(path, text string) error { return writeExisting(path, os.O_TRUNC, text) }

// writeExisting writes text into the existing file path, opened with flag (os.O_TRUNC,
// os.O_APPEND) besides os.O_WRONLY: its owner and mode stay as they are.
func writeExisting(path string, flag int, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|flag, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// removeSocketDir removes the short socket directory Start made under the system
// temp dir when the instance dir's path was too long for a socket (nothing otherwise).
func removeSocketDir(in *server.Instance) error {
	if in.Socket == "" {
		return nil
	}
	d := filepath.Dir(in.Socket)
	if d == in.Dir || filepath.Dir(d) != filepath.Clean(os.TempDir()) ||
		!strings.HasPrefix(filepath.Base(d), pgShortSocketPrefix) {
		return nil
	}
	if err := os.RemoveAll(d); err != nil {
		return fmt.Errorf("%s: remove socket dir: %w", in.Engine, err)
	}
	return nil
}

// unprivilegedCredential is nil when dbperf is not root. As root it is the credential of
// the `postgres` system user, or of a system user `dbperf` it creates when there is none.
func unprivilegedCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(pgSuperuser)
	if err != nil {
		if u, err = user.Lookup(pgRunUser); err != nil {
			if err := server.RunCmd(exec.Command("useradd", "--system", "--no-create-home", pgRunUser)); err != nil {
				return nil, fmt.Errorf("postgres refuses to run as root and there is no postgres user: create user %s: %w", pgRunUser, err)
			}
			if u, err = user.Lookup(pgRunUser); err != nil {
				return nil, fmt.Errorf("postgres: look up user %s: %w", pgRunUser, err)
			}
		}
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("postgres: user %s: %w", u.Username, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

// canEnter says whether the user of cred may search (enter) every directory from / to dir.
func canEnter(dir string, cred *syscall.Credential) (string, bool) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		var st syscall.Stat_t
		if err := syscall.Stat(d, &st); err != nil {
			return d, false
		}
		ok := st.Mode&0o001 != 0 ||
			(st.Uid == cred.Uid && st.Mode&0o100 != 0) ||
			(st.Gid == cred.Gid && st.Mode&0o010 != 0)
		if !ok {
			return d, false
		}
		if d == "/" {
			return "", true
		}
	}
}

// checkTraversable fails with advice when the server's user cannot reach dir.
func checkTraversable(dir string, cred *syscall.Credential) error {
	if blocked, ok := canEnter(filepath.Dir(dir), cred); !ok {
		return fmt.Errorf("postgres runs as uid %d because dbperf runs as root, and that user cannot enter %s: "+
			"use a work dir every user can reach (e.g. under /tmp or /var/tmp) or chmod o+x it", cred.Uid, blocked)
	}
	return nil
}

// accessibleBinaries returns bins when the server's user can reach them, else a copy of
// their installation (bin/, lib/, share/) in <instanceDir>/pgsql: a cache dir under /root
// is not reachable by the postgres user.
func accessibleBinaries(bins pgBinaries, instanceDir string, cred *syscall.Credential) (pgBinaries, error) {
	if _, ok := canEnter(bins.bin, cred); ok {
		return bins, nil
	}
	root := filepath.Dir(bins.bin)
	dst := filepath.Join(instanceDir, "pgsql")
	if err := server.CopyTree(root, dst); err != nil {
		return pgBinaries{}, fmt.Errorf("postgres: copy %s where user %d can run it: %w", root, cred.Uid, err)
	}
	out := pgBinaries{bin: filepath.Join(dst, "bin")}
	if bins.lib != "" {
		out.lib = filepath.Join(dst, "lib")
	}
	return out, nil
}
