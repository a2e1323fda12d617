package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

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
	// defaultStopGrace is the grace of a SIGTERM for the other engines.
	defaultStopGrace = 60 * time.Second
	// pgRunUser is the unprivileged user created to run the server when dbperf runs as root
	// and the system has no `postgres` user (initdb and postgres refuse to run as root).
	pgRunUser = "dbperf"
	// maxSocketPath is the longest unix socket path the kernel accepts (sun_path is 108
	// bytes including the terminating NUL; Postgres checks against 107).
	maxSocketPath = 107
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
	if isFile(filepath.Join(deb, "postgres")) {
		return pgBinaries{bin: deb}, nil
	}
	if version == "" {
		return pgBinaries{}, fmt.Errorf("postgres %s is not installed: %s/postgres not found (apt-get install postgresql-%s)", major, deb, major)
	}
	dir, err := installedMatch(cacheDir, version)
	if err != nil {
		return pgBinaries{}, err
	}
	if dir == "" {
		return pgBinaries{}, fmt.Errorf("postgres %s is not installed: run \"dbperf server install postgres@%s\"", version, version)
	}
	b := pgBinaries{bin: filepath.Join(dir, "bin")}
	if isDir(filepath.Join(dir, "lib")) {
		b.lib = filepath.Join(dir, "lib")
	}
	return b, nil
}

// StartPostgres initialises a fresh PostgreSQL data directory in a new directory under
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
// On any failure after the server started, it is stopped before StartPostgres returns.
func StartPostgres(ctx context.Context, o Options) (*Instance, error) {
	bins, err := findPostgres(o.Version, o.CacheDir)
	if err != nil {
		return nil, err
	}
	profile := o.Profile
	if profile == "" {
		profile = "default"
	}
	conf, src, err := readProfile(o.ProfilesDir, "postgres", profile)
	if err != nil {
		return nil, err
	}
	if o.WorkDir == "" {
		return nil, errors.New("postgres: a work directory is required")
	}
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return nil, fmt.Errorf("postgres: create work dir: %w", err)
	}
	workDir, err := filepath.Abs(o.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("postgres: work dir: %w", err)
	}
	dir, err := newInstanceDir(workDir, "postgres")
	if err != nil {
		return nil, err
	}
	password, err := newPassword()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("postgres: %w", err)
	}
	in := &Instance{
		detached: o.Detached, password: password,
		Engine: "postgres", Dir: dir, DataDir: filepath.Join(dir, "data"), Host: "127.0.0.1",
		LogPath: filepath.Join(dir, "postgres.log"), Profile: profile, Config: conf,
		ProfileSource: src.Source(),
	}
	bins, cred, err := in.initPostgres(ctx, bins, conf)
	if err != nil {
		_ = in.removeSocketDir()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := in.startPostgres(ctx, bins, cred); err != nil {
		// The error carries the log's last lines; nothing is left behind.
		_ = in.Stop(context.WithoutCancel(ctx))
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return in, nil
}

// initPostgres runs initdb (as an unprivileged user when dbperf is root) with the
// instance's password and SCRAM authentication, writes pg_hba.conf, and appends the
// profile and dbperf's connection settings to postgresql.conf.
// It returns the binaries to run (a copy when root's user cannot reach the originals) and
// the credential to run them with (nil when dbperf is not root).
func (in *Instance) initPostgres(ctx context.Context, bins pgBinaries, conf string) (pgBinaries, *syscall.Credential, error) {
	fail := func(err error) (pgBinaries, *syscall.Credential, error) { return pgBinaries{}, nil, err }
	cred, err := unprivilegedCredential()
	if err != nil {
		return fail(err)
	}
	if cred != nil {
		if bins, err = accessibleBinaries(bins, in.Dir, cred); err != nil {
			return fail(err)
		}
		if err := checkTraversable(in.Dir, cred); err != nil {
			return fail(err)
		}
	}
	port, err := FreePort()
	if err != nil {
		return fail(fmt.Errorf("postgres: %w", err))
	}
	in.Port = port
	sockDir := in.Dir
	if len(filepath.Join(sockDir, ".s.PGSQL."+strconv.Itoa(port))) >= maxSocketPath {
		// MkdirTemp's directory is 0700, as the instance dir: private to the server's user.
		if sockDir, err = os.MkdirTemp("", pgShortSocketPrefix); err != nil {
			return fail(fmt.Errorf("postgres: socket dir: %w", err))
		}
		if err := os.Chmod(sockDir, 0o700); err != nil {
			return fail(fmt.Errorf("postgres: socket dir: %w", err))
		}
	}
	in.Socket = filepath.Join(sockDir, ".s.PGSQL."+strconv.Itoa(port))
	if cred != nil {
		for _, d := range []string{in.Dir, sockDir} {
			if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
				return fail(fmt.Errorf("postgres: chown %s: %w", d, err))
			}
		}
	}

	// The superuser's password reaches initdb in a file only the server's user can read,
	// removed at once; initdb stores it as a SCRAM-SHA-256 verifier (-A scram-sha-256).
	pwfile := filepath.Join(in.Dir, "pwfile")
	if err := writePrivateFile(pwfile, []byte(in.password+"\n")); err != nil {
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
	if err := runCmd(cmd); err != nil {
		return fail(fmt.Errorf("postgres: %w", err))
	}
	_ = os.Remove(pwfile)
	if err := rewriteFile(filepath.Join(in.DataDir, "pg_hba.conf"), pgHBA); err != nil {
		return fail(fmt.Errorf("postgres: write pg_hba.conf: %w", err))
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\n# ---- dbperf profile %q ----\n%s\n", in.Profile, strings.TrimRight(conf, "\n"))
	b.WriteString("\n# ---- dbperf managed instance: loopback and a private unix socket dir only, passwords as SCRAM ----\n")
	fmt.Fprintf(&b, "listen_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = '%s'\nunix_socket_permissions = 0700\npassword_encryption = scram-sha-256\n",
		port, strings.ReplaceAll(sockDir, "'", "''"))
	f, err := os.OpenFile(filepath.Join(in.DataDir, "postgresql.conf"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fail(fmt.Errorf("postgres: write postgresql.conf: %w", err))
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return fail(fmt.Errorf("postgres: write postgresql.conf: %w", err))
	}
	if err := f.Close(); err != nil {
		return fail(fmt.Errorf("postgres: write postgresql.conf: %w", err))
	}
	return bins, cred, nil
}

// startPostgres starts `postgres -D data`, waits until it accepts connections, creates the
// benchmark database and fills in DSN and Version.
func (in *Instance) startPostgres(ctx context.Context, bins pgBinaries, cred *syscall.Credential) error {
	// Not CommandContext: the server's lifetime is managed by Stop, not by ctx.
	cmd := exec.Command(filepath.Join(bins.bin, "postgres"), "-D", in.DataDir)
	cmd.Dir, cmd.Env = in.Dir, bins.env()
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if err := in.start(cmd); err != nil {
		return err
	}
	admin := pgURL(in.Port, "postgres", in.password)
	var conn *pgx.Conn
	err := in.waitReady(ctx, pgReadyTimeout, func(ctx context.Context) error {
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
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgDatabase); err != nil {
		return fmt.Errorf("postgres: create database %s: %w", pgDatabase, err)
	}
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&in.Version); err != nil {
		return fmt.Errorf("postgres: server_version: %w", err)
	}
	in.DSN = pgURL(in.Port, pgDatabase, in.password)
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

// TCPDSN is a DSN reaching the instance's benchmark database over TCP on 127.0.0.1, as its
// superuser with the instance's password (PostgreSQL's DSN is that already).
func (in *Instance) TCPDSN() string {
	if in.Engine == "mariadb" {
		return fmt.Sprintf("mysql://root:%s@tcp(127.0.0.1:%d)/%s", in.password, in.Port, mariadbDatabase)
	}
	return pgURL(in.Port, pgDatabase, in.password)
}

// rewriteFile replaces the contents of the existing file path, keeping its owner and mode
// (files in the data dir belong to the server's user when dbperf runs as root).
func rewriteFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Stop stops the server: PostgreSQL gets SIGINT (fast shutdown: active transactions are
// rolled back, a shutdown checkpoint is written) and 30 s before it is killed; other engines
// get SIGTERM and 60 s. It also removes a socket directory made outside the instance dir.
// It is safe to call more than once.
func (in *Instance) Stop(ctx context.Context) error {
	var err error
	switch in.Engine {
	case "postgres":
		err = in.stop(syscall.SIGINT, pgStopGrace)
		err = errors.Join(err, in.removeSocketDir())
	default:
		err = in.stop(syscall.SIGTERM, defaultStopGrace)
	}
	return err
}

// removeSocketDir removes the short socket directory StartPostgres made under the system
// temp dir when the instance dir's path was too long for a socket (nothing otherwise).
func (in *Instance) removeSocketDir() error {
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

// Remove deletes the instance directory (data dir, log, socket). The server must be stopped.
func (in *Instance) Remove() error {
	if in.Alive() {
		return fmt.Errorf("%s: remove %s: the server is still running", in.Engine, in.Dir)
	}
	if in.Dir == "" {
		return nil
	}
	if err := os.RemoveAll(in.Dir); err != nil {
		return fmt.Errorf("%s: remove %s: %w", in.Engine, in.Dir, err)
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
			if err := runCmd(exec.Command("useradd", "--system", "--no-create-home", pgRunUser)); err != nil {
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
	if err := copyTree(root, dst); err != nil {
		return pgBinaries{}, fmt.Errorf("postgres: copy %s where user %d can run it: %w", root, cred.Uid, err)
	}
	out := pgBinaries{bin: filepath.Join(dst, "bin")}
	if bins.lib != "" {
		out.lib = filepath.Join(dst, "lib")
	}
	return out, nil
}

// copyTree copies the directory src to dst, keeping file modes and symlinks.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			return os.Chmod(target, info.Mode().Perm()|0o555)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			return copyFile(p, target, info.Mode().Perm()|0o444)
		}
		return nil
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// runCmd runs a helper command and returns its last lines of output in the error.
func runCmd(cmd *exec.Cmd) error {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w\n%s", filepath.Base(cmd.Path), err, strings.TrimSpace(lastLines(out.String(), 20)))
	}
	return nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
