package hwstat

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// tcpListen is the st column of a listening socket in /proc/net/tcp and tcp6.
const tcpListen = 0x0A

// unixAcceptCon is the flag of a listening socket in /proc/net/unix (__SO_ACCEPTCON).
const unixAcceptCon = 1 << 16

// ListenerPID finds the process that listens where a client connects: network "unix" and
// the socket's path, or "tcp" and host:port (host an IP address or "localhost"; a socket
// bound to the wildcard address listens on every address). It looks the listening socket
// up in /proc/net/unix or /proc/net/tcp and tcp6 (this network namespace's), then the
// processes whose /proc/PID/fd holds it (reading other users' needs root or
// CAP_SYS_PTRACE); when several hold it (a server that forked after listening), the one
// whose parent does not. It is how dbperf finds a server it did not start without asking
// the server anything: MariaDB with performance_schema off names no thread.
func (s *Sampler) ListenerPID(network, address string) (int, error) {
	var inodes []uint64
	var err error
	switch network {
	case "unix":
		inodes, err = s.unixListeners(address)
	case "tcp", "tcp4", "tcp6":
		inodes, err = s.tcpListeners(address)
	default:
		return 0, fmt.Errorf("hwstat: listener of %s %s: unknown network", network, address)
	}
	if err != nil {
		return 0, err
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("hwstat: no socket listens on %s %s in %s/net", network, address, s.procRoot)
	}
	holders, unreadable, err := s.socketHolders(inodes)
	if err != nil {
		return 0, err
	}
	if len(holders) == 0 {
		msg := fmt.Sprintf("hwstat: no process visible here holds the socket listening on %s %s", network, address)
		if unreadable > 0 {
			msg += fmt.Sprintf(" (the open files of %d processes are not readable: that needs root or the server's user)", unreadable)
		}
		return 0, errors.New(msg)
	}
	var roots []int
	for _, pid := range holders {
		st, err := s.stat(pid)
		if err != nil || !slices.Contains(holders, st.PPID) {
			roots = append(roots, pid)
		}
	}
	if len(roots) != 1 {
		return 0, fmt.Errorf("hwstat: unrelated processes %v listen on %s %s", roots, network, address)
	}
	return roots[0], nil
}

// unixListeners are the inodes of listening unix sockets bound to path.
func (s *Sampler) unixListeners(path string) ([]uint64, error) {
	rows, err := s.netRows("unix")
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, f := range rows {
		// Num RefCount Protocol Flags Type St Inode [Path]
		if len(f) < 8 || f[7] != path {
			continue
		}
		flags, err1 := strconv.ParseUint(f[3], 16, 64)
		inode, err2 := strconv.ParseUint(f[6], 10, 64)
		if err1 == nil && err2 == nil && flags&unixAcceptCon != 0 {
			out = append(out, inode)
		}
	}
	return out, nil
}

// tcpListeners are the inodes of listening TCP sockets a client of address would reach.
func (s *Sampler) tcpListeners(address string) ([]uint64, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("hwstat: listener of tcp %s: %w", address, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("hwstat: listener of tcp %s: port: %w", address, err)
	}
	ip := net.ParseIP(host)
	if ip == nil && host != "localhost" {
		return nil, fmt.Errorf("hwstat: listener of tcp %s: the host is neither an IP address nor localhost", address)
	}
	reaches := func(local net.IP) bool {
		if local.IsUnspecified() {
			return true
		}
		if ip == nil { // localhost
			return local.IsLoopback()
		}
		return local.Equal(ip)
	}
	var out []uint64
	for _, file := range []string{"tcp", "tcp6"} {
		rows, err := s.netRows(file)
		if errors.Is(err, os.ErrNotExist) {
			continue // no IPv6 here
		}
		if err != nil {
			return nil, err
		}
		for _, f := range rows {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			if len(f) < 10 {
				continue
			}
			local, lport, ok := parseSocketAddr(f[1])
			st, err1 := strconv.ParseUint(f[3], 16, 8)
			inode, err2 := strconv.ParseUint(f[9], 10, 64)
			if ok && err1 == nil && err2 == nil && st == tcpListen && lport == port && reaches(local) {
				out = append(out, inode)
			}
		}
	}
	return out, nil
}

// netRows reads /proc/net/<name> without its header line, split into fields.
func (s *Sampler) netRows(name string) ([][]string, error) {
	path := filepath.Join(s.procRoot, "net", name)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hwstat: %w", err)
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		out = append(out, strings.Fields(sc.Text()))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("hwstat: read %s: %w", path, err)
	}
	return out, nil
}

// parseSocketAddr parses "0100007F:1F90" (IPv4) or 32 hex digits and a port (IPv6) as
// the kernel prints them: each 32-bit word of the address in the machine's byte order.
func parseSocketAddr(s string) (net.IP, uint64, bool) {
	addr, portText, ok := strings.Cut(s, ":")
	if !ok || (len(addr) != 8 && len(addr) != 32) {
		return nil, 0, false
	}
	raw, err := hex.DecodeString(addr)
	if err != nil {
		return nil, 0, false
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	port, err := strconv.ParseUint(portText, 16, 16)
	if err != nil {
		return nil, 0, false
	}
	return ip, port, true
}

// socketHolders lists the processes with an open file descriptor on one of the socket
// inodes, and how many processes' descriptors could not be read.
func (s *Sampler) socketHolders(inodes []uint64) (holders []int, unreadable int, err error) {
	want := map[string]bool{}
	for _, in := range inodes {
		want["socket:["+strconv.FormatUint(in, 10)+"]"] = true
	}
	procs, err := s.fs.AllProcs()
	if err != nil {
		return nil, 0, fmt.Errorf("hwstat: list %s: %w", s.procRoot, err)
	}
	for _, p := range procs {
		dir := filepath.Join(s.procRoot, strconv.Itoa(p.PID), "fd")
		ents, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				unreadable++
			}
			continue
		}
		for _, e := range ents {
			if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && want[target] {
				holders = append(holders, p.PID)
				break
			}
		}
	}
	return holders, unreadable, nil
}
