package server

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// builtinNames are the built-in profiles of the managed servers, sorted: default and cached
// (issue 12), the configs the seeds toggle (issue 26 item 3), each of which the engine's
// tests start on every version dbperf installs (TestPostgresSeedProfilesStart,
// TestMariaDBSeedProfilesStart), and PostgreSQL's huge (issue 37, TestPostgresHugePages).
var builtinNames = map[string][]string{
	"postgres": {"cached", "default", "fpw", "huge", "nofpw", "seeds", "sync-on", "sync-remote-apply", "sync-remote-write"},
	"mariadb":  {"binlog", "cached", "default", "galera", "leveled", "leveled-l0-10", "nobinlog", "trx1", "trx2", "universal"},
}

// Issue 12 item 10: the default profiles are built into the binary; a profiles directory
// adds to them and overrides them by name.
func TestProfilesBuiltInAndOverridden(t *testing.T) {
	// Built in, whatever the working directory.
	t.Chdir(t.TempDir())
	for _, engine := range []string{"postgres", "mariadb"} {
		ps, err := ListProfiles("", engine)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range ps {
			got = append(got, p.Name)
		}
		if !slices.Equal(got, builtinNames[engine]) {
			t.Errorf("%s: built-in profiles %+v, want %v", engine, ps, builtinNames[engine])
		}
		for _, p := range ps {
			if p.Path != "" || p.Source() != BuiltinProfiles {
				t.Errorf("%s %s comes from %q", engine, p.Name, p.Source())
			}
		}
		text, src, err := ReadProfile("", engine, "default")
		if err != nil || src.Path != "" || !strings.Contains(text, "dbperf") {
			t.Errorf("%s default: %v %+v %q", engine, err, src, text)
		}
	}

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "postgres"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"default.conf": "work_mem = 1MB # mine\n", "mine.conf": "work_mem = 2MB # mine\n", "notes.txt": "x"} {
		if err := os.WriteFile(filepath.Join(dir, "postgres", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := ListProfiles(dir, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	want := []Profile{{Name: "cached"}, {Name: "default", Path: filepath.Join(dir, "postgres", "default.conf")},
		{Name: "fpw"}, {Name: "huge"}, {Name: "mine", Path: filepath.Join(dir, "postgres", "mine.conf")}, {Name: "nofpw"}, {Name: "seeds"},
		{Name: "sync-on"}, {Name: "sync-remote-apply"}, {Name: "sync-remote-write"}}
	if !slices.Equal(ps, want) {
		t.Errorf("ListProfiles = %+v, want %+v", ps, want)
	}
	// The directory's file wins; the others still come from the binary.
	if text, src, err := ReadProfile(dir, "postgres", "default"); err != nil || text != "work_mem = 1MB # mine\n" || src.Path != want[1].Path {
		t.Errorf("overridden default: %q %+v %v", text, src, err)
	}
	if text, src, err := ReadProfile(dir, "postgres", "cached"); err != nil || src.Path != "" || !strings.Contains(text, "shared_buffers = 4GB") {
		t.Errorf("built-in cached beside a dir: %+v %v", src, err)
	}
	// A directory without the engine's subdirectory adds nothing and takes nothing away.
	if names, err := Profiles(dir, "mariadb"); err != nil || !slices.Equal(names, builtinNames["mariadb"]) {
		t.Errorf("mariadb with a postgres-only dir: %v %v", names, err)
	}
	// Unknown names list what there is and where; a missing directory is one clear line.
	_, _, err = ReadProfile(dir, "postgres", "nosuch")
	if err == nil || !strings.Contains(err.Error(), "cached, default, fpw, huge, mine, nofpw, seeds, sync-on") || !strings.Contains(err.Error(), filepath.Join(dir, "postgres")) {
		t.Errorf("unknown profile: %v", err)
	}
	_, _, err = ReadProfile("", "mariadb", "nosuch")
	if err == nil || !strings.Contains(err.Error(), `unknown mariadb profile "nosuch" (available: `+strings.Join(builtinNames["mariadb"], ", ")+`; built into dbperf`) {
		t.Errorf("unknown built-in profile: %v", err)
	}
	missing := filepath.Join(dir, "nope")
	for _, f := range []func() error{
		func() error { _, err := ListProfiles(missing, "postgres"); return err },
		func() error { _, _, err := ReadProfile(missing, "postgres", "default"); return err },
	} {
		if err := f(); err == nil || !strings.Contains(err.Error(), "--profiles-dir") || !strings.Contains(err.Error(), missing) || strings.Contains(err.Error(), "\n") {
			t.Errorf("missing profiles dir: %v", err)
		}
	}
	file := filepath.Join(dir, "postgres", "mine.conf")
	if _, err := ListProfiles(file, "postgres"); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("profiles dir that is a file: %v", err)
	}
}

// The repository's top-level profiles/ is the built-in profiles' directory (a symlink), so
// a checkout's `--profiles-dir profiles` names the same files.
func TestRepositoryProfilesAreTheBuiltInOnes(t *testing.T) {
	for _, engine := range []string{"postgres", "mariadb"} {
		ps, err := ListProfiles("../../profiles", engine)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			disk, err := os.ReadFile(p.Path)
			if err != nil {
				t.Fatalf("%s %s: %v", engine, p.Name, err)
			}
			built, _, err := ReadProfile("", engine, p.Name)
			if err != nil || built != string(disk) {
				t.Errorf("%s %s: the repository's profiles/ differs from the built-in one (%v)", engine, p.Name, err)
			}
		}
	}
}
