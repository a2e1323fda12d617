package profile

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// perfDataFile writes a minimal perf.data: its header and, as its data section, the
// records given.
func perfDataFile(t *testing.T, records ...[]byte) string {
	t.Helper()
	le := binary.LittleEndian
	hdr := make([]byte, 104)
	copy(hdr, perfMagic)
	le.PutUint64(hdr[8:], 104)
	data := bytes.Join(records, nil)
	le.PutUint64(hdr[40:], uint64(len(hdr)))
	le.PutUint64(hdr[48:], uint64(len(data)))
	path := filepath.Join(t.TempDir(), "perf.data")
	if err := os.WriteFile(path, append(hdr, data...), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// mmap2Record is a PERF_RECORD_MMAP2 of pid mapping name, with 8 bytes of sample_id
// after its padded name.
func mmap2Record(pid int, name string) []byte {
	le := binary.LittleEndian
	nameLen := (len(name) + 1 + 7) &^ 7
	size := mmap2FilenameOff + nameLen + 8
	b := make([]byte, size)
	le.PutUint32(b, perfRecordMmap2)
	le.PutUint16(b[6:], uint16(size))
	le.PutUint32(b[8:], uint32(pid))
	le.PutUint32(b[12:], uint32(pid))
	copy(b[mmap2FilenameOff:], name)
	copy(b[size-8:], "SAMPLEID")
	return b
}

func TestRenameMappings(t *testing.T) {
	other := make([]byte, 24) // a record of another type
	binary.LittleEndian.PutUint32(other, 9)
	binary.LittleEndian.PutUint16(other[6:], 24)
	path := perfDataFile(t,
		mmap2Record(7, "/usr/lib/x86_64-linux-gnu/libc.so.6"),
		other,
		mmap2Record(8, "/usr/lib/x86_64-linux-gnu/libc.so.6"), // another process: kept
		mmap2Record(7, "/tmp/dbperf"),                         // not renamed by the function
	)
	n, err := RenameMappings(path, 7, func(s string) (string, bool) {
		rest, ok := strings.CutPrefix(s, "/usr/")
		return "/" + rest, ok
	})
	if err != nil || n != 1 {
		t.Fatalf("RenameMappings: %d, %v; want 1 renamed", n, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data := b[104:]
	r1 := data[:len(mmap2Record(7, "/usr/lib/x86_64-linux-gnu/libc.so.6"))]
	name := r1[mmap2FilenameOff:]
	if got := string(name[:bytes.IndexByte(name, 0)]); got != "/lib/x86_64-linux-gnu/libc.so.6" {
		t.Errorf("renamed to %q", got)
	}
	if !bytes.HasSuffix(r1, []byte("SAMPLEID")) {
		t.Error("the record's sample_id was overwritten")
	}
	if c := bytes.Count(data, []byte("/usr/lib/x86_64-linux-gnu/libc.so.6")); c != 1 {
		t.Errorf("%d records still name /usr/lib/…/libc.so.6, want 1 (pid 8's)", c)
	}
	if _, err := RenameMappings(filepath.Join(t.TempDir(), "none"), 7, sameFileShorter); err == nil {
		t.Error("a missing file: no error")
	}
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, make([]byte, 200), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := RenameMappings(bad, 7, sameFileShorter); err == nil {
		t.Error("not a perf.data: no error")
	}
}

func TestSameFileShorter(t *testing.T) {
	if _, ok := sameFileShorter("/tmp/dbperf"); ok {
		t.Error("renamed a path outside /usr")
	}
	if _, ok := sameFileShorter("/usr/bin/env"); ok {
		t.Error("renamed an executable")
	}
	const libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	if _, err := os.Stat(libc); err != nil {
		t.Skipf("%s: %v", libc, err)
	}
	short, ok := sameFileShorter(libc)
	if fi, err := os.Lstat("/lib"); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if !ok || short != "/lib/x86_64-linux-gnu/libc.so.6" {
			t.Errorf("merged /usr: %q, %v", short, ok)
		}
	} else if ok {
		t.Errorf("/lib is not /usr/lib, yet renamed to %q", short)
	}
}
