package catalog

import (
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

func TestLookup(t *testing.T) {
	w, err := Workload("insertbench")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Engine("sqlite", EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(w, e); err != nil {
		t.Fatal(err)
	}
	if _, err := Workload("tpcc"); err == nil || !strings.Contains(err.Error(), "use one of insertbench") {
		t.Fatalf("unknown workload: %v", err)
	}
	if _, err := Engine("oracle", EngineOptions{}); err == nil || !strings.Contains(err.Error(), "use one of sqlite, postgres, mariadb") {
		t.Fatalf("unknown engine: %v", err)
	}
}

// TestNames: WorkloadNames and ServerNames follow the lists' order, and WorkloadNames
// keeps only what its filter keeps.
func TestNames(t *testing.T) {
	all := WorkloadNames(nil)
	if len(all) != len(Workloads()) || all[0] != Workloads()[0].Meta().Name {
		t.Errorf("WorkloadNames(nil) = %q", all)
	}
	kv := WorkloadNames(func(m workload.Meta) bool { return m.Kind == engine.KindKV })
	if len(kv) == 0 || len(kv) >= len(all) {
		t.Errorf("the key-value workloads: %q of %q", kv, all)
	}
	for _, n := range kv {
		if w, _ := Workload(n); w.Meta().Kind != engine.KindKV {
			t.Errorf("%s is no key-value workload", n)
		}
	}
	if s := ServerNames(); len(s) != len(Servers()) || s[0] != Servers()[0].Name() {
		t.Errorf("ServerNames() = %q", s)
	}
}
