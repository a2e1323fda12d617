package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// checkWritableDir says whether files can be written in dir, a flag's directory that is
// made when missing (--cpu-profile DIR): dir, or its nearest existing parent, must be a
// directory in which a file can be created. It creates a file there and removes it: as
// root permission bits never refuse a write, while a read-only mount does, so only a
// write tells. Nothing is made for a missing dir.
func checkWritableDir(flag, dir string) error {
	p := dir
	for {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				if p == dir {
					return fmt.Errorf("%s %s: it is a file, not a directory: give a directory (made when missing)", flag, dir)
				}
				return fmt.Errorf("%s %s: %s is a file, not a directory: give a directory (made when missing)", flag, dir, p)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) { // ENOTDIR: a parent is a file
			return fmt.Errorf("%s %s: %w", flag, dir, pathErr(err))
		}
		parent := filepath.Dir(p)
		if parent == p {
			return fmt.Errorf("%s %s: %w", flag, dir, pathErr(err))
		}
		p = parent
	}
	f, err := os.CreateTemp(p, ".dbperf-write-check-*")
	if err != nil {
		where := ""
		if p != dir {
			where = " (its parent " + p + ")"
		}
		return fmt.Errorf("%s %s: cannot write there%s: %v: give a directory you can write to", flag, dir, where, pathErr(err))
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
