package profile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Why perf.data is edited before a DWARF recording is folded (RenameMappings): perf
// script (6.1, with libunwind) finds an object's unwinding table (.eh_frame_hdr) from
// the lowest address at which the sampled process maps that object. perf keeps a
// process's mappings across exec (it adds the new image's, it never drops the old
// ones), so a server that dbperf forks and execs keeps, in perf's view, dbperf's own
// libc (dbperf links it: cgo) beside its own. When dbperf's libc lies below the
// server's (ASLR: half of the runs), every frame in the server's libc unwinds from the
// wrong table and the stack stops there: measured, 20–50% of a Maven PostgreSQL 13
// query role's samples ended at __send, epoll_wait or __libc_start_call_main in those
// runs, 0% in the others. Naming dbperf's shared objects by another path to the same
// file (/usr/lib/… as /lib/… on a merged-/usr system) makes them other objects to perf,
// so the server's lookups see only the server's mappings; dbperf's own frames are still
// symbolized and unwound from the same files.

// perf.data's layout (tools/perf/util/header.h, include/uapi/linux/perf_event.h).
const (
	perfMagic        = "PERFILE2"
	perfRecordMmap   = 1
	perfRecordMmap2  = 10
	mmapFilenameOff  = 8 + 4 + 4 + 8 + 8 + 8              // header, pid, tid, start, len, pgoff
	mmap2FilenameOff = 8 + 4 + 4 + 8 + 8 + 8 + 24 + 4 + 4 // … maj, min, ino, ino_generation (or build id), prot, flags
)

// RenameMappings rewrites, in the perf.data file at path, the file names of process
// pid's mappings (PERF_RECORD_MMAP and MMAP2) for which rename gives another name of
// the same length or shorter (the record's size does not change: a shorter name is
// padded with NULs). It returns how many it renamed.
func RenameMappings(path string, pid int, rename func(string) (string, bool)) (int, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var hdr [56]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return 0, fmt.Errorf("perf.data header: %w", err)
	}
	if string(hdr[:8]) != perfMagic {
		return 0, errors.New("perf.data: not a perf.data file (PERFILE2)")
	}
	le := binary.LittleEndian
	dataOff, dataSize := int64(le.Uint64(hdr[40:])), int64(le.Uint64(hdr[48:]))
	n := 0
	const chunk = 4 << 20
	buf := make([]byte, 0, chunk+64<<10)
	pos := dataOff // file offset of buf[0]
	end := dataOff + dataSize
	for pos < end {
		// Read whole records: a record is at most 64 KiB (its size is a u16).
		want := min(int64(cap(buf)), end-pos)
		buf = buf[:want]
		if _, err := f.ReadAt(buf, pos); err != nil {
			return n, fmt.Errorf("perf.data: %w", err)
		}
		i := 0
		for i+8 <= len(buf) {
			size := int(le.Uint16(buf[i+6:]))
			if size < 8 {
				return n, fmt.Errorf("perf.data: record of %d bytes at %d", size, pos+int64(i))
			}
			if i+size > len(buf) {
				break // the rest of this record is in the next read
			}
			typ := le.Uint32(buf[i:])
			if (typ == perfRecordMmap || typ == perfRecordMmap2) && int(le.Uint32(buf[i+8:])) == pid {
				off := mmapFilenameOff
				if typ == perfRecordMmap2 {
					off = mmap2FilenameOff
				}
				rec := buf[i : i+size]
				if off < len(rec) {
					if renameIn(rec[off:], rename) {
						if _, err := f.WriteAt(rec[off:], pos+int64(i+off)); err != nil {
							return n, fmt.Errorf("perf.data: %w", err)
						}
						n++
					}
				}
			}
			i += size
		}
		if i == 0 {
			return n, fmt.Errorf("perf.data: record at %d past the data section", pos)
		}
		pos += int64(i)
	}
	return n, nil
}

// renameIn renames the NUL-terminated name at the start of b (a record's name and what
// follows it) in place: the new name over the old one, NULs over the rest of the old.
func renameIn(b []byte, rename func(string) (string, bool)) bool {
	nul := bytes.IndexByte(b, 0)
	if nul <= 0 {
		return false
	}
	to, ok := rename(string(b[:nul]))
	if !ok || len(to) > nul || to == "" || strings.IndexByte(to, 0) >= 0 {
		return false
	}
	copy(b, to)
	for k := len(to); k < nul; k++ {
		b[k] = 0
	}
	return true
}

// sameFileShorter names path's object by a shorter path to the same file: "/usr/lib/x"
// as "/lib/x" where /lib is /usr/lib (a merged /usr), for RenameMappings. Only shared
// objects are renamed (a name with ".so"): the executable's mappings are its own.
func sameFileShorter(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/usr/")
	if !ok || !strings.Contains(path, ".so") {
		return "", false
	}
	short := "/" + rest
	a, err1 := os.Stat(path)
	b, err2 := os.Stat(short)
	if err1 != nil || err2 != nil || !os.SameFile(a, b) {
		return "", false
	}
	return short, true
}
