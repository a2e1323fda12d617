// Package hugepages holds the kernel's huge pages a server dbperf starts asks for
// (PostgreSQL's huge_pages = on) and gives them back when the server stops.
//
// Why it exists: on the project's VM two servers started alike differ in CPU per query
// for their whole life, by 1–10% with 4 KiB pages and far less with huge pages
// (docs/measurements/2026-11-29-huge-pages.md); a profile with huge_pages = on designs
// that out, but the server then refuses to start unless the kernel has the pages set
// aside (vm.nr_hugepages), which no machine has by default.
//
// Written by hand: no maintained Go library manages vm.nr_hugepages (procfs reads
// /proc/meminfo, and is used for that).
package hugepages

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/prometheus/procfs"
)

// Options is where the kernel's files are and where reservations take turns.
type Options struct {
	// ProcDir is procfs' mount point ("/proc" when empty).
	ProcDir string
	// LockFile serializes reservations, across dbperf processes too, from the check of
	// the free pages until the server has mapped them (os.TempDir()/dbperf-hugepages.lock
	// when empty).
	LockFile string
}

func (o Options) proc() string {
	if o.ProcDir == "" {
		return "/proc"
	}
	return o.ProcDir
}

func (o Options) lockFile() string {
	if o.LockFile == "" {
		return filepath.Join(os.TempDir(), "dbperf-hugepages.lock")
	}
	return o.LockFile
}

func (o Options) sysctl() string { return filepath.Join(o.proc(), "sys", "vm", "nr_hugepages") }

// State is the kernel's pool of default-size huge pages (/proc/meminfo).
type State struct {
	Total, Free, Rsvd int
	SizeKiB           int
}

// Available is how many pages a new mapping can take: free and not promised to a
// mapping made already (PostgreSQL's shared memory reserves all its pages when mapped
// and faults them in later).
func (s State) Available() int { return s.Free - s.Rsvd }

// Shortfall is how many pages the pool must grow by for need more to be available.
func (s State) Shortfall(need int) int {
	return max(0, need-s.Available())
}

// Read is the pool's state now.
func Read(o Options) (State, error) {
	fs, err := procfs.NewFS(o.proc())
	if err != nil {
		return State{}, fmt.Errorf("huge pages: %w", err)
	}
	m, err := fs.Meminfo()
	if err != nil {
		return State{}, fmt.Errorf("huge pages: %w", err)
	}
	if m.HugePagesTotal == nil || m.HugePagesFree == nil || m.HugePagesRsvd == nil || m.Hugepagesize == nil {
		return State{}, errors.New("huge pages: the kernel reports none in /proc/meminfo (built without hugetlbfs?)")
	}
	return State{Total: int(*m.HugePagesTotal), Free: int(*m.HugePagesFree), Rsvd: int(*m.HugePagesRsvd),
		SizeKiB: int(*m.Hugepagesize)}, nil
}

// Reservation is pages held for one server: the lock is held from Reserve until Mapped
// (the server started and reserved its pages, or failed), and the pages dbperf added to
// the pool are given back by Release.
type Reservation struct {
	o     Options
	lock  *os.File
	added int
	Need  int
	Size  int // KiB per page
}

// Reserve makes need default-size pages available, growing vm.nr_hugepages by the
// shortfall when there is one (which takes root). It returns with the lock held: call
// Mapped once the server has started (or failed to), and Release after it stopped.
func Reserve(ctx context.Context, o Options, need int) (*Reservation, error) {
	if need <= 0 {
		return nil, fmt.Errorf("huge pages: %d pages asked for", need)
	}
	lock, err := os.OpenFile(o.lockFile(), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("huge pages: lock: %w", err)
	}
	if err := flock(ctx, lock); err != nil {
		return nil, err
	}
	r := &Reservation{o: o, lock: lock, Need: need}
	st, err := Read(o)
	if err != nil {
		r.Mapped()
		return nil, err
	}
	r.Size = st.SizeKiB
	short := st.Shortfall(need)
	if short == 0 {
		return r, nil
	}
	want := st.Total + short
	if err := writeTotal(o, want); err != nil {
		r.Mapped()
		return nil, fmt.Errorf("huge pages: the server needs %d of %s and %d are free; reserve them (sysctl -w vm.nr_hugepages=%d, as root): %w",
			need, sizeName(st.SizeKiB), st.Available(), want, err)
	}
	now, err := Read(o)
	if err == nil && now.Total < want {
		// The kernel found fewer free runs of a page's size than asked (memory
		// fragmented).
		err = fmt.Errorf("the kernel found only %d of %d (memory fragmented): reserve them at boot (vm.nr_hugepages in /etc/sysctl.conf)",
			now.Total-st.Total, short)
	}
	if err != nil {
		_ = writeTotal(o, st.Total) // give back what it did find
		r.Mapped()
		return nil, fmt.Errorf("huge pages: growing the pool by %d of %s: %w", short, sizeName(st.SizeKiB), err)
	}
	r.added = short
	return r, nil
}

// Mapped lets other reservations go on: the server's pages are now counted as reserved
// by it (or it did not start). Safe to call twice.
func (r *Reservation) Mapped() {
	if r.lock != nil {
		r.lock.Close() // closing the file releases its lock
		r.lock = nil
	}
}

// Added is how many pages Reserve added to the pool (given back by Release).
func (r *Reservation) Added() int { return r.added }

// Release shrinks the pool by what Reserve added, once the server has stopped. Pages
// still in use elsewhere become surplus pages, which the kernel frees when released.
func (r *Reservation) Release() error {
	r.Mapped()
	if r.added == 0 {
		return nil
	}
	lock, err := os.OpenFile(r.o.lockFile(), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("huge pages: lock: %w", err)
	}
	if err := flock(context.Background(), lock); err != nil {
		return err
	}
	defer lock.Close() // closing the file releases its lock
	b, err := os.ReadFile(r.o.sysctl())
	if err != nil {
		return fmt.Errorf("huge pages: %w", err)
	}
	total, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("huge pages: %s: %w", r.o.sysctl(), err)
	}
	if err := writeTotal(r.o, max(0, total-r.added)); err != nil {
		return fmt.Errorf("huge pages: giving back %d pages: %w", r.added, err)
	}
	r.added = 0
	return nil
}

func writeTotal(o Options, n int) error {
	return os.WriteFile(o.sysctl(), []byte(strconv.Itoa(n)+"\n"), 0)
}

// flock takes f's exclusive lock, giving up when ctx ends. On an error f is closed (at
// once, or by the waiting goroutine once it gets the lock).
func flock(ctx context.Context, f *os.File) error {
	done := make(chan error, 1)
	go func() { done <- syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return fmt.Errorf("huge pages: lock %s: %w", f.Name(), err)
		}
		return nil
	case <-ctx.Done():
		// The goroutine ends when the holder unlocks; closing f releases the lock it
		// may then get.
		go func() {
			<-done
			f.Close()
		}()
		return fmt.Errorf("huge pages: waiting for %s: %w", f.Name(), ctx.Err())
	}
}

func sizeName(kib int) string {
	if kib%1024 == 0 {
		return fmt.Sprintf("%d MiB pages", kib/1024)
	}
	return fmt.Sprintf("%d KiB pages", kib)
}
