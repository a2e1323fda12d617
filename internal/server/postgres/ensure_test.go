package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/server"
)

// A version that is not installed, with its Maven repository unreachable (a closed port
// on 127.0.0.1): the error names the versions installed and the ways to go on offline
// (issue 42).
func TestEnsureOfflineSaysHowToGoOn(t *testing.T) {
	cache := t.TempDir()
	err := server.EnsureFrom(context.Background(), New(), "http://127.0.0.1:1/maven2", cache, "16")
	if err == nil {
		t.Fatal("installing from a closed port succeeded")
	}
	for _, want := range []string{"postgres 16 is not installed and installing it failed", "installed here: ",
		"--engine-version", "dbperf server install postgres@16 --maven-url URL --cache-dir " + cache, "or copy " + cache + " from a host that has postgres 16"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in: %v", want, err)
		}
	}
}
