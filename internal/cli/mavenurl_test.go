package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A version that is not installed, with --maven-url a mirror that does not answer (a
// closed port on 127.0.0.1): run exits 2, writes nothing, and says how to go on offline
// (issue 42).
func TestRunMavenURLOffline(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	code, out, stderr := runCLI(t, nil, "run", "insertbench", "--engine", "postgres", "--managed", "--engine-version", "16",
		"--maven-url", "http://127.0.0.1:1/maven2", "--cache-dir", filepath.Join(dir, "cache"), "--scale", "tiny", "--steps", "l.i0",
		"--results", results)
	if code != ExitBadInput {
		t.Fatalf("exit %d, want %d: %s%s", code, ExitBadInput, out, stderr)
	}
	for _, want := range []string{"127.0.0.1:1", "installed here: ", "--maven-url URL", "or copy " + filepath.Join(dir, "cache")} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no %q in: %s", want, stderr)
		}
	}
	if _, err := os.Stat(results); err == nil {
		t.Error("a results store was written")
	}
}
