package catalog

import (
	"strings"
	"testing"
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
