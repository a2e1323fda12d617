package hwstat

import (
	"os/exec"
	"testing"
	"time"
)

func TestEnvironment(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	env := s.Environment(t.TempDir())
	for _, k := range []string{"cores", "cpu_model", "ram_bytes", "kernel", "filesystem", "data_dir"} {
		if env[k] == "" {
			t.Errorf("env[%q] is empty: %v", k, env)
		}
	}
}

// Alive: a running process is; one killed and not yet reaped (a zombie) is not, nor one
// reaped.
func TestAlive(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !s.Alive(pid) {
		t.Errorf("a running sleep (pid %d) is not alive", pid)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.Alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s.Alive(pid) {
		t.Errorf("killed, unreaped (a zombie): alive")
	}
	_ = cmd.Wait()
	if s.Alive(pid) {
		t.Errorf("reaped: alive")
	}
}
