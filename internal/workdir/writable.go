package workdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// CheckWritable says whether files can be written in dir, a directory that is made when
// missing: dir, or its nearest existing parent, must be a directory in which a file can
// be created. It creates a file there and removes it: as root permission bits never
// refuse a write, while a read-only mount does, so only a write tells. Nothing is made
// for a missing dir. The error does not repeat dir, except as the parent it names.
func CheckWritable(dir string) error {
	p := dir
	for {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				if p == dir {
					return errors.New("it is a file, not a directory: give a directory (made when missing)")
				}
				return fmt.Errorf("%s is a file, not a directory: give a directory (made when missing)", p)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) { // ENOTDIR: a parent is a file
			return pathErr(err)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return pathErr(err)
		}
		p = parent
	}
	f, err := os.CreateTemp(p, ".dbperf-write-check-*")
	if err != nil {
		where := ""
		if p != dir {
			where = " (its parent " + p + ")"
		}
		return fmt.Errorf("cannot write there%s: %v: give a directory you can write to", where, pathErr(err))
	}
	name := f.Name()
	_ = f.Close()
	_ = os.Remove(name)
	return nil
}

// pathErr is a *fs.PathError's cause without its path (the message names the path).
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
