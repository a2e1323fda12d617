package hwstat

import "testing"

func TestSelfCPUGrows(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	before, err := s.SelfCPU()
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := 0; i < 300_000_000; i++ {
		x += i ^ (x >> 3)
	}
	after, err := s.SelfCPU()
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Fatalf("CPU did not grow over a busy loop: %v -> %v (x=%d)", before, after, x)
	}
}

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
