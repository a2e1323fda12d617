package server

import (
	"context"
	"database/sql"
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

	"github.com/go-sql-driver/mysql"
)

// MariaDB binaries and limits. Only Debian's packages are supported (apt-get install
// mariadb-server mariadb-plugin-rocksdb): dbperf does not download MariaDB.
const (
	mariadbd           = "/usr/sbin/mariadbd"
	mariadbInstallDB   = "mariadb-install-db"
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
	// the instance dir's path is too long for one (maxSocketPath).
	mariadbShortSocketPrefix = "dbperf-my-"
)

// StartMariaDB initialises a fresh MariaDB data directory under o.WorkDir and starts
// mariadbd on it with the profile o.Profile (ProfilesDir/mariadb/<Profile>.cnf, "default"
// when empty) and the storage engine o.StorageEngine ("innodb" when empty, or "rocksdb",
// which loads ha_rocksdb.so). The server listens on 127.0.0.1:<free port> and a unix socket;
// root has no password. The instance's DSN reaches it through the unix socket,
// mysql://root@unix(<socket>)/ib, as the reference client connects to MySQL (reference
// §1.1: cheaper than loopback TCP for client and server alike), with the database ib
// created; Port is for clients that need TCP. o.Version must be "" or name the installed Debian MariaDB 10.11
// ("10.11", "10.11.19"). On any failure nothing is left running.
//
// The instance directory <WorkDir>/mariadb-<pid>-<n>/ holds data/, my.cnf, the socket,
// the pid file and mariadbd.log. When the socket path would be too long for the kernel the
// socket goes to a short directory under /tmp, removed when the server exits.
func StartMariaDB(ctx context.Context, o Options) (*Instance, error) {
	storage := strings.ToLower(o.StorageEngine)
	switch storage {
	case "":
		storage = "innodb"
	case "innodb", "rocksdb":
	default:
		return nil, fmt.Errorf("mariadb: unknown storage engine %q (want innodb or rocksdb)", o.StorageEngine)
	}
	installed, err := mariadbVersion(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkMariaDBVersion(o.Version, installed); err != nil {
		return nil, err
	}
	if storage == "rocksdb" {
		if _, err := os.Stat(filepath.Join(mariadbPluginDir, "ha_rocksdb.so")); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("mariadb: storage engine rocksdb needs %s/ha_rocksdb.so: apt-get install mariadb-plugin-rocksdb", mariadbPluginDir)
		}
	}
	installDB, err := exec.LookPath(mariadbInstallDB)
	if err != nil {
		return nil, fmt.Errorf("mariadb: %s not found (apt-get install mariadb-server): %w", mariadbInstallDB, err)
	}
	profile := o.Profile
	if profile == "" {
		profile = mariadbDefaultProf
	}
	profText, err := readProfile(o.ProfilesDir, "mariadb", profile)
	if err != nil {
		return nil, err
	}

	work, err := filepath.Abs(o.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("mariadb: work dir: %w", err)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, fmt.Errorf("mariadb: work dir: %w", err)
	}
	dir, err := newInstanceDir(work, "mariadb")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, fmt.Errorf("mariadb: %w", err)
	}
	in := &Instance{
		detached: o.Detached,
		Engine:   "mariadb",
		Version:  installed,
		DataDir:  filepath.Join(dir, "data"),
		Dir:      dir,
		Host:     "127.0.0.1",
		Port:     port,
		Socket:   filepath.Join(dir, mariadbSocketName),
		LogPath:  filepath.Join(dir, mariadbLogName),
		Profile:  profile,
	}
	// shortDir, when set, holds the socket; it is removed when the server exits or the
	// start fails.
	var shortDir string
	if len(in.Socket) >= maxSocketPath {
		if shortDir, err = os.MkdirTemp("/tmp", mariadbShortSocketPrefix); err != nil {
			return nil, fmt.Errorf("mariadb: socket dir: %w", err)
		}
		in.Socket = filepath.Join(shortDir, mariadbSocketName)
	}
	started := false
	defer func() {
		if shortDir != "" && !started {
			_ = os.RemoveAll(shortDir)
		}
	}()
	if err := os.Mkdir(in.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("mariadb: %w", err)
	}
	in.Config = mariadbConfig(in, profile, profText, storage)
	cnf := filepath.Join(dir, mariadbConfigName)
	if err := os.WriteFile(cnf, []byte(in.Config), 0o644); err != nil {
		return nil, fmt.Errorf("mariadb: write %s: %w", cnf, err)
	}

	args := []string{"--defaults-file=" + cnf, "--auth-root-authentication-method=normal", "--skip-test-db"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	if err := run(ctx, installDB, args...); err != nil {
		// log-error sends the bootstrap server's messages to the log, not to the output.
		return nil, fmt.Errorf("mariadb: initialise %s: %w\nlast lines of %s:\n%s", in.DataDir, err, in.LogPath, in.LogTail(20))
	}

	if err := in.start(exec.Command(mariadbd, "--defaults-file="+cnf)); err != nil {
		return nil, err
	}
	started = true
	if shortDir != "" {
		go func() {
			<-in.done
			_ = os.RemoveAll(shortDir)
		}()
	}
	if err := mariadbSetup(ctx, in); err != nil {
		_ = in.stop(syscall.SIGTERM, mariadbStopGrace)
		return nil, err
	}
	in.DSN = fmt.Sprintf("mysql://root@unix(%s)/%s", in.Socket, mariadbDatabase)
	return in, nil
}

// mariadbSetup waits until the started server accepts root over TCP, creates the
// benchmark database and reads the server's version.
func mariadbSetup(ctx context.Context, in *Instance) error {
	cfg := mysql.NewConfig()
	cfg.User = "root"
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
	err = in.waitReady(ctx, mariadbReadyWait, func(ctx context.Context) error {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return db.PingContext(pctx)
	})
	if err != nil {
		return err // waitReady's error names the engine and has the log tail
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+mariadbDatabase); err != nil {
		return fmt.Errorf("mariadb: create database %s: %w", mariadbDatabase, err)
	}
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&in.Version); err != nil {
		return fmt.Errorf("mariadb: version: %w", err)
	}
	return nil
}

// mariadbConfig renders my.cnf: the profile verbatim, then dbperf's own [mysqld] lines,
// which come last so that they win over the profile (the last value of an option counts).
func mariadbConfig(in *Instance, profile, profText, storage string) string {
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
		"skip-name-resolve",
		"default-storage-engine=" + storage,
	}
	if os.Geteuid() == 0 {
		lines = append(lines, "user=root")
	}
	if storage == "rocksdb" {
		lines = append(lines, "plugin-load-add=ha_rocksdb.so")
	}
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n")
	return b.String()
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
