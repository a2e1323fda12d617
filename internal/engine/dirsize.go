package engine

import (
	"errors"
	"io/fs"
	"path/filepath"
)

// DirBytes sums the sizes of the regular files under dir: an engine's database size
// (Handle.Size) when its files are on this machine. A file removed while the walk runs
// (an LSM deletes obsolete files, a server its temporary ones) is skipped, not an error;
// a missing dir is one (the size is unknown, not 0).
func DirBytes(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path != dir && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		total += fi.Size()
		return nil
	})
	return total, err
}
