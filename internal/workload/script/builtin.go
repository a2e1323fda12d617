package script

import (
	"fmt"
	"strings"
)

// builtin returns the text of pgbench's built-in script name, exactly as `pgbench
// --show-script=NAME` prints it (PostgreSQL 15), and whether there is one. A prefix of
// a name is enough when it names one script, as in pgbench.
func builtin(name string) (full, text string, ok bool) {
	const tpcb = `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`
	const simple = `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`
	const selectOnly = `\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`
	all := []struct{ name, text string }{{"tpcb-like", tpcb}, {"simple-update", simple}, {"select-only", selectOnly}}
	var found []int
	for i, b := range all {
		if b.name == name {
			return b.name, b.text, true
		}
		if strings.HasPrefix(b.name, name) {
			found = append(found, i)
		}
	}
	if len(found) == 1 && name != "" {
		return all[found[0]].name, all[found[0]].text, true
	}
	return "", "", false
}

// builtinNames lists the built-in scripts.
func builtinNames() string { return "tpcb-like, simple-update, select-only" }

// splitWeight splits NAME@WEIGHT (pgbench's -f and -b) into the name and weight (1 when
// none is given).
func splitWeight(arg string) (string, int, error) {
	i := strings.LastIndexByte(arg, '@')
	if i < 0 {
		return arg, 1, nil
	}
	var w int
	if _, err := fmt.Sscanf(arg[i+1:], "%d", &w); err != nil || fmt.Sprint(w) != arg[i+1:] || w < 0 {
		return "", 0, fmt.Errorf("invalid weight %q in %q: a whole number ≥ 0", arg[i+1:], arg)
	}
	return arg[:i], w, nil
}
