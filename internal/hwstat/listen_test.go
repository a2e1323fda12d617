package hwstat

import (
	"encoding/binary"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func itoa(n int) string { return strconv.Itoa(n) }

func TestParseSocketAddr(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the fixtures are as a little-endian kernel prints them")
	}
	for _, tc := range []struct {
		in   string
		ip   string
		port uint64
		ok   bool
	}{
		{"0100007F:1F90", "127.0.0.1", 8080, true},
		{"00000000:0CEA", "0.0.0.0", 3306, true},
		{"00000000000000000000000001000000:1538", "::1", 5432, true},
		{"0000000000000000FFFF00000100007F:1538", "127.0.0.1", 5432, true}, // IPv4-mapped
		{"00000000000000000000000000000000:0050", "::", 80, true},
		{"0100007F", "", 0, false},
		{"0100007:1F90", "", 0, false},
		{"ZZ00007F:1F90", "", 0, false},
	} {
		ip, port, ok := parseSocketAddr(tc.in)
		if ok != tc.ok || (ok && (!ip.Equal(net.ParseIP(tc.ip)) || port != tc.port)) {
			t.Errorf("parseSocketAddr(%q) = %v %d %v; want %s %d %v", tc.in, ip, port, ok, tc.ip, tc.port, tc.ok)
		}
	}
}

// TestRealListenerPID: the test process listens on TCP (loopback and wildcard) and on a
// unix socket; ListenerPID finds it from the address a client would use, also when a
// child it started holds the socket too, and says why when nothing listens.
func TestRealListenerPID(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	lo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lo.Close()
	port := itoa(lo.Addr().(*net.TCPAddr).Port)
	any, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer any.Close()
	anyPort := itoa(any.Addr().(*net.TCPAddr).Port)
	sock := filepath.Join(t.TempDir(), "s.sock")
	ux, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ux.Close()

	for _, tc := range [][2]string{
		{"tcp", "127.0.0.1:" + port}, {"tcp", "localhost:" + port}, {"tcp", "127.0.0.1:" + anyPort},
		{"tcp", "localhost:" + anyPort}, {"unix", sock},
	} {
		if pid, err := s.ListenerPID(tc[0], tc[1]); err != nil || pid != self {
			t.Errorf("ListenerPID(%s %s) = %d, %v; want %d", tc[0], tc[1], pid, err, self)
		}
	}

	// A child holding the listening socket too (as a forked server's would) is not the listener.
	f, err := lo.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	child := exec.Command("sleep", "5")
	child.ExtraFiles = []*os.File{f}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	if pid, err := s.ListenerPID("tcp", "127.0.0.1:"+port); err != nil || pid != self {
		t.Errorf("with a child holding the socket: %d, %v; want %d", pid, err, self)
	}

	for _, tc := range [][3]string{
		{"unix", filepath.Join(t.TempDir(), "none.sock"), "no socket listens"},
		{"tcp", "192.0.2.1:" + port, "no socket listens"}, // another address: not this listener
		{"tcp", "db.example:5432", "neither an IP address nor localhost"},
		{"udp", "127.0.0.1:53", "unknown network"},
	} {
		if _, err := s.ListenerPID(tc[0], tc[1]); err == nil || !strings.Contains(err.Error(), tc[2]) {
			t.Errorf("ListenerPID(%s %s): err %v, want %q", tc[0], tc[1], err, tc[2])
		}
	}
}

// TestRealSingleReads: one process's and one thread's CPU, and ancestry.
func TestRealSingleReads(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	cpu, start, err := s.ProcessCPU(self)
	if err != nil || cpu <= 0 || start == 0 {
		t.Errorf("ProcessCPU(self) = %v %v %v", cpu, start, err)
	}
	if sec, err := s.ThreadCPU(self, self); err != nil || sec <= 0 {
		t.Errorf("ThreadCPU(self, main thread) = %v, %v", sec, err)
	}
	if _, err := s.ThreadCPU(self, 1<<30); err == nil {
		t.Error("ThreadCPU of a missing thread: no error")
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	for _, tc := range []struct {
		pid, root int
		want      bool
	}{{cmd.Process.Pid, self, true}, {self, self, true}, {self, cmd.Process.Pid, false}, {1, self, false}} {
		if got, err := s.DescendsFrom(tc.pid, tc.root); err != nil || got != tc.want {
			t.Errorf("DescendsFrom(%d, %d) = %v, %v; want %v", tc.pid, tc.root, got, err, tc.want)
		}
	}
}
