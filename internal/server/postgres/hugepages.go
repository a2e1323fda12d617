package postgres

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/server/hugepages"
)

// reserveHugePages holds the huge pages in's server will map when its profile says
// huge_pages = on (hugepages.Reserve: the kernel's pool grown by the shortfall, given back
// after the server stops), so the server starts where a machine has none set aside. The
// count is the server's own (postgres -C shared_memory_size_in_huge_pages, on the data
// directory before start); before v15, which cannot say, nothing is reserved. nil when
// the profile does not ask for them (try, the default, takes what is free); a profile
// that sets huge_page_size runs on the pages the user set aside for that size.
// The caller calls Mapped once the server has started or failed.
func reserveHugePages(ctx context.Context, in *server.Instance, bins pgBinaries, cred *syscall.Credential) (*hugepages.Reservation, error) {
	conf := in.Config
	if !strings.EqualFold(pgSetting(conf, "huge_pages"), "on") {
		return nil, nil
	}
	if v := pgSetting(conf, "huge_page_size"); v != "" && v != "0" {
		return nil, nil
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bins.bin, "postgres"), "-D", in.DataDir, "-C", "shared_memory_size_in_huge_pages")
	cmd.Dir, cmd.Env = in.Dir, bins.env()
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && strings.Contains(stderr.String(), "unrecognized configuration parameter") {
		// Before v15 the server cannot say: it starts on the pages the user set aside
		// (or refuses to, in its own words).
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: huge pages the server needs (postgres -C shared_memory_size_in_huge_pages, v15 on): %w: %s",
			err, strings.TrimSpace(server.LastLines(stderr.String(), 5)))
	}
	need, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || need <= 0 {
		return nil, fmt.Errorf("postgres: huge pages the server needs: %q from postgres -C shared_memory_size_in_huge_pages", strings.TrimSpace(string(out)))
	}
	res, err := hugepages.Reserve(ctx, hugepages.Options{}, need)
	if err != nil {
		return nil, fmt.Errorf("postgres: profile %q sets huge_pages = on: %w", in.Profile, err)
	}
	return res, nil
}
