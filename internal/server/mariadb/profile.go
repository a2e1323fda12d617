package mariadb

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"

	"github.com/dbperf/dbperf/internal/server"
)

// One profile is applied to every MariaDB version. Before a server starts, dbperf asks
// its mariadbd for the options it knows (`mariadbd --no-defaults --verbose --help`, with
// the plugins the server will load) and comments out each profile line, in a group the
// server reads, whose option that server does not know and that
//
//   - carries the loose- prefix (the server would ignore it anyway: the profiles' MyRocks
//     settings on a server without the RocksDB plugin), or
//   - another MariaDB that dbperf can start here knows (Debian's 10.11 with the RocksDB
//     plugin, the versions installed from Maven Central): a setting of another version,
//     e.g. innodb_change_buffering, which 11.x removed.
//
// An option no MariaDB here knows is kept, so the server fails on it and names it (a typo
// is a mistake to fix, not a line to drop). Every line left out is a note on the instance
// (Instance.ProfileSkipped), stored with the run.

// mariadbOptionSet is what one mariadbd knows.
type mariadbOptionSet struct {
	// server names the binary in notes: "MariaDB 11.4.5", "MariaDB 10.11.14 with MyRocks".
	server string
	// options are the option names, lower case with dashes ("innodb-buffer-pool-size").
	options map[string]bool
	// groups are the option-file groups the server reads ("mysqld", "mariadb-11.4", …).
	groups map[string]bool
}

// knows says whether the set has the option name (normalised), directly or as the boolean
// or limit prefixes my_getopt accepts (skip-, disable-, enable-, maximum-).
func (s mariadbOptionSet) knows(name string) bool {
	if s.options[name] {
		return true
	}
	for _, p := range []string{"skip-", "disable-", "enable-", "maximum-"} {
		if rest, ok := strings.CutPrefix(name, p); ok && s.options[rest] {
			return true
		}
	}
	return false
}

var (
	// An option in the help text: two spaces, an optional short form, --name.
	mariadbHelpOptRE = regexp.MustCompile(`^  (?:-\w, )?--([A-Za-z0-9][A-Za-z0-9_-]*)`)
	// optionCache remembers option sets per binary, plugins and binary identity, so a sweep
	// that starts many servers asks each binary once.
	optionCache   = map[string]mariadbOptionSet{}
	optionCacheMu sync.Mutex
)

// normOption is an option name as the help text spells it: lower case, dashes.
func normOption(name string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "_", "-")
}

// parseMariaDBHelp reads the option names and groups out of `mariadbd --verbose --help`:
// the option list ("  --name…", "  -a, --name…") and the table of variables that follows
// the dashed line.
func parseMariaDBHelp(out []byte) (options, groups map[string]bool) {
	options, groups = map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	inTable := false
	for sc.Scan() {
		line := sc.Text()
		if g, ok := strings.CutPrefix(line, "The following groups are read:"); ok {
			for _, f := range strings.Fields(g) {
				groups[strings.ToLower(f)] = true
			}
			continue
		}
		if strings.HasPrefix(line, "-----") {
			inTable = true
			continue
		}
		if inTable {
			if f := strings.Fields(line); len(f) > 0 {
				options[normOption(f[0])] = true
			}
			continue
		}
		if m := mariadbHelpOptRE.FindStringSubmatch(line); m != nil {
			options[normOption(m[1])] = true
		}
	}
	return options, groups
}

// mariadbOptions asks the binary b, with the plugin options plugins (--plugin-load-add=…),
// which options it knows. The answer is cached for the life of the process.
func mariadbOptions(ctx context.Context, b mariadbBinaries, name string, plugins []string) (mariadbOptionSet, error) {
	st, err := os.Stat(b.mariadbd)
	if err != nil {
		return mariadbOptionSet{}, fmt.Errorf("mariadb: %w", err)
	}
	key := fmt.Sprintf("%s\x00%d\x00%d\x00%s", b.mariadbd, st.Size(), st.ModTime().UnixNano(), strings.Join(plugins, "\x00"))
	optionCacheMu.Lock()
	set, ok := optionCache[key]
	optionCacheMu.Unlock()
	if ok {
		return set, nil
	}
	args := []string{"--no-defaults"}
	if b.basedir != "" {
		args = append(args, "--basedir="+b.basedir)
	}
	args = append(args, plugins...)
	args = append(args, "--verbose", "--help")
	cmd := exec.CommandContext(ctx, b.mariadbd, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return mariadbOptionSet{}, fmt.Errorf("mariadb: list the options of %s (--verbose --help): %w\n%s", b.mariadbd, err, server.LastLines(stderr.String(), 10))
	}
	set = mariadbOptionSet{server: name}
	set.options, set.groups = parseMariaDBHelp(stdout.Bytes())
	// Hundreds of options and the server groups, or the help text is not what we read.
	if len(set.options) < 100 || !set.groups["mysqld"] {
		return mariadbOptionSet{}, fmt.Errorf("mariadb: cannot read the options of %s from its --verbose --help (%d options found)", b.mariadbd, len(set.options))
	}
	optionCacheMu.Lock()
	optionCache[key] = set
	optionCacheMu.Unlock()
	return set, nil
}

// profileOption splits an option line of an option file into its name (normalised, with
// a loose- prefix removed) and whether it had that prefix; ok is false for blank lines,
// comments, group headers and !include directives.
func profileOption(line string) (name string, loose, ok bool) {
	s := strings.TrimSpace(line)
	if s == "" || s[0] == '#' || s[0] == ';' || s[0] == '[' || s[0] == '!' {
		return "", false, false
	}
	n, _, _ := strings.Cut(s, "=")
	n = normOption(n)
	n = strings.TrimPrefix(n, "--")
	if rest, found := strings.CutPrefix(n, "loose-"); found {
		return rest, true, rest != ""
	}
	return n, false, n != ""
}

// profileGroup returns the group a header line opens ("[mysqld]" → "mysqld").
func profileGroup(line string) (string, bool) {
	s := strings.TrimSpace(line)
	if len(s) < 2 || s[0] != '[' {
		return "", false
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return "", false
	}
	return strings.ToLower(strings.TrimSpace(s[1:end])), true
}

// profilePluginOptions are the plugin options of the profile's lines in server groups
// (plugin-load, plugin-load-add, plugin-dir, plugin-maturity), as command-line options,
// so the help text lists the options of the plugins the server will load.
func profilePluginOptions(text string) []string {
	var out []string
	group := ""
	for _, line := range strings.Split(text, "\n") {
		if g, ok := profileGroup(line); ok {
			group = g
			continue
		}
		name, _, ok := profileOption(line)
		if !ok || !isServerGroup(group) {
			continue
		}
		switch name {
		case "plugin-load", "plugin-load-add", "plugin-dir", "plugin-maturity":
			_, v, _ := strings.Cut(strings.TrimSpace(line), "=")
			out = append(out, "--"+name+"="+strings.TrimSpace(v))
		}
	}
	return out
}

// isServerGroup is a group every MariaDB server reads (the versioned ones, such as
// mariadb-11.4, are the server's own: see mariadbOptionSet.groups).
func isServerGroup(g string) bool {
	switch g {
	case "mysqld", "server", "mariadb", "mariadbd", "client-server", "galera":
		return true
	}
	return false
}

// filterMariaDBProfile comments out the lines of the profile text that this server does
// not know and that are either loose- or known to another MariaDB (others, called only
// when some line is unknown). It returns the text to write and a note per line left out.
func filterMariaDBProfile(text string, this mariadbOptionSet, others func() []mariadbOptionSet) (string, []string) {
	lines := strings.Split(text, "\n")
	var notes []string
	var other []mariadbOptionSet
	asked := false
	group := ""
	for i, line := range lines {
		if g, ok := profileGroup(line); ok {
			group = g
			continue
		}
		name, loose, ok := profileOption(line)
		// Lines outside the groups this server reads do not reach it: left as they are.
		if !ok || !this.groups[group] || this.knows(name) {
			continue
		}
		why, plugin := "", false
		if !asked {
			other, asked = others(), true
		}
		for _, o := range other {
			if o.knows(name) {
				why = fmt.Sprintf("not a setting of %s (%s has it)", this.server, o.server)
				// The same server with a plugin this run does not load (a shared
				// profile's loose-rocksdb_… lines on an InnoDB run): what loose- is for.
				plugin = strings.HasPrefix(o.server, this.server+" with ")
				break
			}
		}
		if loose && plugin {
			lines[i] = fmt.Sprintf("# dbperf left this out, %s: %s", why, strings.TrimSpace(line))
			continue // no note: the run chose not to load the plugin (issue 42)
		}
		if why == "" && loose {
			why = fmt.Sprintf("not a setting of %s (loose-: the server would ignore it)", this.server)
		}
		if why == "" {
			continue // unknown to every MariaDB here: the server reports it
		}
		setting := strings.TrimSpace(line)
		notes = append(notes, fmt.Sprintf("%s (line %d): %s", setting, i+1, why))
		lines[i] = fmt.Sprintf("# dbperf left this out, %s: %s", why, setting)
	}
	return strings.Join(lines, "\n"), notes
}
