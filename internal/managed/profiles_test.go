package managed

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dbperf/dbperf/internal/server"
)

// TestProfiles: a profile in the profiles dir is listed with its file, beside the
// built-in ones, and one named as a built-in profile overrides it.
func TestProfiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "postgres"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mine.conf", "cached.conf"} {
		if err := os.WriteFile(filepath.Join(dir, "postgres", name), []byte("work_mem = '8MB'\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := Profiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range ps {
		got[p.Engine+" "+p.Name] = p.Source()
	}
	for k, want := range map[string]string{
		"postgres mine":    filepath.Join(dir, "postgres", "mine.conf"),
		"postgres cached":  filepath.Join(dir, "postgres", "cached.conf"),
		"postgres default": server.BuiltinProfiles,
		"mariadb default":  server.BuiltinProfiles,
	} {
		if got[k] != want {
			t.Errorf("%s: source %q, want %q (all: %v)", k, got[k], want, got)
		}
	}
}
