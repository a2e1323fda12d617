package mariadb

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/server"
)

// mariadbMinMemory is the smallest memory limit MariaDB runs with: 10.11 with the default
// profile takes about 220 MiB before its first query (performance_schema 136 MiB of it,
// sized from max_connections and fixed history tables), below which the kernel kills it
// while it starts; at 384 MiB, with the buffer pool fitted to a quarter, the whole tiny
// Insert Benchmark passes on InnoDB and MyRocks.
const mariadbMinMemory = 384 * server.MiB

// MinMemory is the smallest memory limit MariaDB runs with (server.MemoryFloor).
func (Engine) MinMemory(server.Options) (int64, string) {
	return mariadbMinMemory, "MariaDB takes about 220 MiB before its buffer pool, 136 MiB of it the profile's performance_schema"
}

// mariadbMemorySetting is a setting fitted under a memory limit (--server-memory).
type mariadbMemorySetting struct {
	name string // as my.cnf spells it
	def  int64  // the server's default, bytes; 0 with unbounded
	// unbounded: 0 means no bound (rocksdb_db_write_buffer_size).
	unbounded bool
	share     int64
	rocksdb   bool // a MyRocks setting: fitted only when the server loads MyRocks
}

// mariadbMemorySettings: the InnoDB buffer pool and MyRocks' block cache may take a
// quarter of the limit each (only one of them holds the benchmark's tables), so the page
// cache, which the limit charges too, keeps most of the rest; MyRocks' memtables, which
// its default does not bound at all, an eighth.
var mariadbMemorySettings = []mariadbMemorySetting{
	{name: "innodb_buffer_pool_size", def: 128 * server.MiB, share: 4},
	{name: "rocksdb_block_cache_size", def: 512 * server.MiB, share: 4, rocksdb: true},
	{name: "rocksdb_db_write_buffer_size", unbounded: true, share: 8, rocksdb: true},
}

// mariadbServerGroup says whether mariadbd reads the option-file group g.
func mariadbServerGroup(g string) bool {
	g = strings.ToLower(g)
	for _, p := range []string{"mysqld", "mariadb", "mariadbd", "server"} {
		if g == p || strings.HasPrefix(g, p+"-") {
			return true
		}
	}
	return false
}

// mariadbSetting is the last value the profile sets for option name in a group the server
// reads (loose- or not, dashes or underscores), "" when none.
func mariadbSetting(profText, name string) string {
	want := normOption(name)
	var v string
	group := ""
	sc := bufio.NewScanner(strings.NewReader(profText))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			group = strings.TrimSpace(line[1 : len(line)-1])
			continue
		}
		if line == "" || line[0] == '#' || line[0] == ';' || !mariadbServerGroup(group) {
			continue
		}
		k, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.TrimPrefix(normOption(k), "loose-")
		if k == want {
			if i := strings.IndexByte(val, '#'); i >= 0 {
				val = val[:i]
			}
			v = strings.Trim(strings.TrimSpace(val), `"'`)
		}
	}
	return v
}

// mariadbBytes reads a size as mariadbd does: bytes, or a number with K, M, G, T, P or E
// (powers of 1024, either case).
func mariadbBytes(v string) (int64, bool) {
	v = strings.TrimSpace(v)
	mult := int64(1)
	if v != "" {
		if i := strings.IndexByte("kmgtpe", byte(strings.ToLower(v[len(v)-1:])[0])); i >= 0 {
			mult = int64(1) << (10 * (i + 1))
			v = v[:len(v)-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n * mult, true
}

// mariadbFitMemory fits the profile under a memory limit of limit bytes: my.cnf lines for
// dbperf's own [mysqld] section (last, so they win) and a note per setting changed.
func mariadbFitMemory(profText, storage string, limit int64) (lines, notes []string) {
	if limit <= 0 {
		return nil, nil
	}
	var settings []server.MemorySetting
	for _, s := range mariadbMemorySettings {
		if s.rocksdb && storage != "rocksdb" {
			continue
		}
		ms := server.MemorySetting{Name: s.name, Bytes: s.def, Unbounded: s.unbounded, Share: s.share}
		if text := mariadbSetting(profText, s.name); text != "" {
			if n, ok := mariadbBytes(text); ok {
				ms.Bytes, ms.Text = n, text
				ms.Unbounded = s.unbounded && n == 0
			}
		}
		settings = append(settings, ms)
	}
	for _, f := range server.FitMemory(limit, settings) {
		to := fmt.Sprintf("%dM", f.To/server.MiB)
		note := f.Note(limit, to)
		lines = append(lines, "# --server-memory "+server.FormatSize(limit)+": "+strings.TrimPrefix(note, f.Name+" = "+to+": "), f.Name+"="+to)
		notes = append(notes, note)
	}
	return lines, notes
}
