package server

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64 // 0: an error
	}{
		{"256M", 256 * MiB},
		{"256MB", 256 * MiB},
		{"256MiB", 256 * MiB},
		{"256m", 256 * MiB},
		{" 1G ", GiB},
		{"1.5G", 1536 * MiB},
		{"512k", 512 * KiB},
		{"1T", TiB},
		{"268435456", 256 * MiB},
		{"100B", 100},
		{"", 0},
		{"0", 0},
		{"0M", 0},
		{"-1G", 0},
		{"1.5", 0},
		{"G", 0},
		{"12X", 0},
		{"1 GB extra", 0},
		{"2000000T", 0},
	} {
		got, err := ParseSize(tc.in)
		if tc.want == 0 {
			if err == nil {
				t.Errorf("ParseSize(%q) = %d, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParseSize("12X"); err == nil || !strings.Contains(err.Error(), "256M") {
		t.Errorf("the error must say what a size looks like: %v", err)
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{256 * MiB: "256MiB", GiB: "1GiB", 1536 * MiB: "1536MiB", 3 * KiB: "3KiB", 100: "100 bytes", 2 * TiB: "2TiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFitMemory(t *testing.T) {
	settings := []MemorySetting{
		{Name: "shared_buffers", Bytes: 128 * MiB, Share: 4},                    // the default, too big for 256M
		{Name: "maintenance_work_mem", Bytes: 16 * MiB, Text: "16MB", Share: 8}, // fits
		{Name: "big", Bytes: 4 * GiB, Text: "4GB", Share: 4},
		{Name: "memtables", Unbounded: true, Share: 8},
	}
	got := FitMemory(256*MiB, settings)
	if len(got) != 3 {
		t.Fatalf("FitMemory = %+v, want shared_buffers, big and memtables", got)
	}
	for i, want := range []struct {
		name string
		to   int64
		note string
	}{
		{"shared_buffers", 64 * MiB, "shared_buffers = 64MB: the server's default 128MiB is more than 1/4 of the 256MiB memory limit"},
		{"big", 64 * MiB, "big = 64MB: the profile's 4GB is more than 1/4 of the 256MiB memory limit"},
		{"memtables", 32 * MiB, "memtables = 32MB: the server's default sets no bound, 1/8 of the 256MiB memory limit"},
	} {
		if got[i].Name != want.name || got[i].To != want.to {
			t.Errorf("fit %d = %s %d, want %s %d", i, got[i].Name, got[i].To, want.name, want.to)
		}
		if n := got[i].Note(256*MiB, fmt.Sprintf("%dMB", got[i].To/MiB)); n != want.note {
			t.Errorf("note %d = %q, want %q", i, n, want.note)
		}
	}
	// Rounded down to whole MiB, at least 1 MiB; no limit, nothing fitted.
	if f := FitMemory(300*MiB+5, settings[:1]); len(f) != 1 || f[0].To != 75*MiB {
		t.Errorf("300 MiB: %+v", f)
	}
	if f := FitMemory(2*MiB, []MemorySetting{{Name: "x", Bytes: 2 * MiB, Share: 8}}); len(f) != 1 || f[0].To != MiB {
		t.Errorf("2 MiB: %+v", f)
	}
	if f := FitMemory(0, settings); f != nil {
		t.Errorf("no limit: %+v", f)
	}
}

func TestCPUList(t *testing.T) {
	for in, want := range map[string]string{"0-3": "0-3", "0,2-3,7": "0,2-3,7", "5": "5", "3,1,2": "1-3", "0-1\n": "0-1"} {
		l, err := ParseCPUList(in)
		if err != nil || FormatCPUList(l) != want {
			t.Errorf("ParseCPUList(%q) = %v, %v; formatted %q, want %q", in, l, err, FormatCPUList(l), want)
		}
	}
	for _, bad := range []string{"a", "3-1", "-1", "1-x"} {
		if l, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q) = %v, want an error", bad, l)
		}
	}
}

// fakeEngine is a server engine for checks that start nothing.
type fakeEngine struct {
	Engine
	name  string
	floor int64
}

func (e fakeEngine) Name() string { return e.name }

type flooredEngine struct{ fakeEngine }

func (e flooredEngine) MinMemory(Options) (int64, string) { return e.floor, "it is big" }

func TestCheckMemory(t *testing.T) {
	plain := fakeEngine{name: "plain"}
	big := flooredEngine{fakeEngine{name: "big", floor: 384 * MiB}}
	for _, tc := range []struct {
		e    Engine
		mem  int64
		want string // "" = accepted
	}{
		{plain, 0, ""},
		{plain, 128 * MiB, ""},
		{plain, 100 * MiB, "a memory limit of 100MiB is too small for plain, which needs at least 128MiB"},
		{big, 384 * MiB, ""},
		{big, 256 * MiB, "a memory limit of 256MiB is too small for big, which needs at least 384MiB (it is big)"},
	} {
		err := CheckMemory(tc.e, Options{Limits: Limits{Memory: tc.mem}})
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want %q", tc.e.Name(), FormatSize(tc.mem), err, tc.want)
		}
	}
}
