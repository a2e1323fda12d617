package hwstat

import "testing"

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
