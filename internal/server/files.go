package server

// Files, processes and ports every server engine uses.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MaxSocketPath is the longest unix socket path the kernel accepts (sun_path is 108
// bytes including the terminating NUL; PostgreSQL checks against 107).
const MaxSocketPath = 107

// ShortSocketDir makes a private (0700) directory under the system temp dir named
// prefix*, for a server's unix socket when its instance dir's path is too long for one.
func ShortSocketDir(prefix string) (string, error) {
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", fmt.Errorf("socket dir: %w", err)
	}
	// MkdirTemp makes it 0700 already; stated, whatever the umask.
	if err := os.Chmod(d, 0o700); err != nil {
		_ = os.RemoveAll(d)
		return "", fmt.Errorf("socket dir: %w", err)
	}
	return d, nil
}

// FreePort finds a free TCP port on 127.0.0.1 for a server to listen on, below the
// kernel's ephemeral range (ip_local_port_range; 32768 on Linux by default). A port the
// kernel hands out for 127.0.0.1:0 is an ephemeral one: between the check and the
// server's bind, any outgoing connection on the machine (dbperf's own clients among them)
// may take it as its local port, and the server then fails with "Address already in use".
// Ports below the range are never given to outgoing connections; one is picked at random
// (so concurrent dbperf processes rarely try the same) and checked by listening on it.
// When the range starts too low to leave room, the kernel picks.
func FreePort() (int, error) {
	lo := ephemeralLow()
	const first = 10000
	if lo-first >= 1000 {
		for range 200 {
			p := first + mrand.IntN(lo-first)
			if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
				l.Close()
				return p, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768 when unknown).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return lo
}

// Run runs a helper command (initdb, mariadb-install-db) and returns its last lines of
// output in the error when it fails.
func Run(ctx context.Context, name string, args ...string) error {
	return RunCmd(exec.CommandContext(ctx, name, args...))
}

// helperWaitDelay bounds the wait for a cancelled helper's output once it was killed.
const helperWaitDelay = 5 * time.Second

// RunCmd runs a helper command and returns its last lines of output in the error. The
// helper runs in a process group of its own: when its context is cancelled (Ctrl-C) the
// whole group is killed, so a child it forked (pg_basebackup's WAL streamer) neither
// outlives it nor keeps its output open, which would make the wait hang for good.
func RunCmd(cmd *exec.Cmd) error {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if cmd.Cancel != nil { // exec.CommandContext
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	}
	cmd.WaitDelay = helperWaitDelay
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w\n%s", filepath.Base(cmd.Path), err, strings.TrimSpace(LastLines(out.String(), 20)))
	}
	return nil
}

// when dbperf runs as root, the server's own unprivileged user, to whom StartPostgres
// gives it) can reach the socket; other local users cannot even enter it.
func newInstanceDir(workDir, engine string) (string, error) {
	dir, err := os.MkdirTemp(workDir, fmt.Sprintf("%s-%d-", engine, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("%s: create instance dir: %w", engine, err)
	}
	// MkdirTemp makes it 0700 already; stated, whatever the umask.
	if err := os.Chmod(dir, 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("%s: create instance dir: %w", engine, err)
	}
	return dir, nil
}

// passwordBytes is the entropy of a managed server's password: 192 bits.
const passwordBytes = 24

// newPassword is a fresh random password for one managed instance (crypto/rand), in
// characters that need no quoting in a URL, a MySQL DSN or SQL: [A-Za-z0-9_-].
func newPassword() (string, error) {
	b := make([]byte, passwordBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate a password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// WritePrivateFile writes data to a new file path readable by its owner only (0600),
// replacing any file there.
func WritePrivateFile(path string, data []byte) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		_ = os.Remove(path)
		return err
	}
	return f.Close()
}

// IsFile says whether p is a regular file.
func IsFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// IsDir says whether p is a directory.
func IsDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// CopyTree copies the directory src to dst, keeping file modes and symlinks.
func CopyTree(src, dst string) error {
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
