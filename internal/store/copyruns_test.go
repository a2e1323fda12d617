package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCopyRuns: every run of a store is copied but the one still running, which is
// counted; copying again finds them all there; Select picks the runs a label names.
func TestCopyRuns(t *testing.T) {
	ctx := context.Background()
	src, _ := openTemp(t)
	dst, _ := openTemp(t)
	for i, label := range []string{"a", "b", "c"} {
		meta := testMeta(label)
		meta.StartedAt = t0.Add(time.Duration(i) * time.Hour)
		status := RunOK
		if label == "c" {
			status = RunRunning
		}
		writeRun(t, src, meta, status)
	}
	all, err := src.Select(ctx, nil)
	if err != nil || len(all) != 3 {
		t.Fatalf("Select(nil) = %v, %v; want the 3 runs", all, err)
	}
	for _, want := range []CopyCounts{{Copied: 2, Running: 1}, {Present: 2, Running: 1}} {
		if got, err := CopyRuns(ctx, src, dst, all); err != nil || got != want {
			t.Fatalf("CopyRuns = %+v, %v; want %+v", got, err, want)
		}
	}
	ids, err := src.Select(ctx, []string{"b"})
	if err != nil || len(ids) != 1 {
		t.Fatalf("Select(b) = %v, %v; want one run", ids, err)
	}
	if got, err := CopyRuns(ctx, src, dst, ids); err != nil || got != (CopyCounts{Present: 1}) {
		t.Errorf("CopyRuns(b) = %+v, %v; want it present", got, err)
	}
}

// TestSame: a file is the same store as itself by another path or link, not as another
// file; DSNs are the same only when equal.
func TestSame(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := filepath.Join(dir, "a.db")
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.db")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{a, filepath.Join(dir, ".", "a.db"), true},
		{a, link, true},
		{a, filepath.Join(dir, "b.db"), false},
		{"postgres://h/db", "postgres://h/db", true},
		{"postgres://h/db", "postgres://h/other", false},
	} {
		if got := Same(c.a, c.b); got != c.want {
			t.Errorf("Same(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
