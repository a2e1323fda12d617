package postgres

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/server"
)

// pgMemorySettings are the settings fitted under a memory limit (--server-memory): what
// each may take of it and its unit when the value has none. shared_buffers, the buffer
// pool, a quarter, so the page cache, which the limit charges too, keeps most of the
// rest; maintenance_work_mem, which one CREATE INDEX or each autovacuum worker may
// allocate, an eighth; an explicit wal_buffers a sixteenth (-1, the default, is 1/32 of
// shared_buffers).
var pgMemorySettings = []struct {
	name  string
	unit  int64 // bytes per unit of a bare number
	def   int64 // the server's default, bytes (-1: sized from another setting, fits)
	share int64
}{
	{"shared_buffers", 8 * server.KiB, 128 * server.MiB, 4},
	{"maintenance_work_mem", server.KiB, 64 * server.MiB, 8},
	{"wal_buffers", 8 * server.KiB, -1, 16},
}

// pgConfLineRE is one postgresql.conf setting: name = value or name value, the value
// quoted or a word, a comment after it.
var pgConfLineRE = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(?:=\s*|\s+)('(?:[^']|'')*'|[^\s#']+)`)

// pgSetting is the last value the config text sets for name (its text, unquoted), "" when
// it sets none.
func pgSetting(conf, name string) string {
	var v string
	for line := range strings.Lines(conf) {
		if m := pgConfLineRE.FindStringSubmatch(line); m != nil && strings.EqualFold(m[1], name) {
			v = strings.ReplaceAll(strings.Trim(m[2], "'"), "''", "'")
		}
	}
	return v
}

// pgBytes reads a memory setting's value ("128MB", "16384" in units of unit bytes) as
// PostgreSQL does: B, kB, MB, GB, TB, powers of 1024.
func pgBytes(v string, unit int64) (int64, bool) {
	v = strings.TrimSpace(v)
	i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '-' })
	num, suffix := v, ""
	if i >= 0 {
		num, suffix = v[:i], strings.TrimSpace(v[i:])
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, false
	}
	mult, ok := map[string]int64{"": unit, "b": 1, "kb": server.KiB, "mb": server.MiB, "gb": server.GiB, "tb": server.TiB}[strings.ToLower(suffix)]
	if !ok {
		return 0, false
	}
	if n < 0 {
		return n, true // -1: sized from another setting
	}
	return n * mult, true
}

// pgFitMemory fits the profile conf under a memory limit of limit bytes: the
// postgresql.conf lines to add after the profile (they win: the last value counts) and a
// note per setting changed. Nothing without a limit or when everything fits.
func pgFitMemory(conf string, limit int64) (lines string, notes []string) {
	if limit <= 0 {
		return "", nil
	}
	var settings []server.MemorySetting
	for _, s := range pgMemorySettings {
		ms := server.MemorySetting{Name: s.name, Bytes: s.def, Share: s.share}
		if text := pgSetting(conf, s.name); text != "" {
			if n, ok := pgBytes(text, s.unit); ok {
				ms.Bytes, ms.Text = n, text
			}
		}
		if ms.Bytes < 0 {
			continue
		}
		settings = append(settings, ms)
	}
	fits := server.FitMemory(limit, settings)
	if len(fits) == 0 {
		return "", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n# ---- dbperf: fitted under the server's %s memory limit (--server-memory; its cgroup charges the page cache too) ----\n", server.FormatSize(limit))
	for _, f := range fits {
		to := fmt.Sprintf("%dMB", f.To/server.MiB)
		note := f.Note(limit, to)
		fmt.Fprintf(&b, "%s = %s    # %s\n", f.Name, to, strings.TrimPrefix(note, f.Name+" = "+to+": "))
		notes = append(notes, note)
	}
	return b.String(), notes
}
