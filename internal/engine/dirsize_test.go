package engine

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirBytes(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{"a": 100, "sub/b": 23} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if n, err := DirBytes(dir); err != nil || n != 123 {
		t.Errorf("DirBytes = %d, %v; want 123 (regular files only, links not followed)", n, err)
	}
	if n, err := DirBytes(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("DirBytes(missing) = %d, nil; want an error (unknown, not 0)", n)
	}
}
