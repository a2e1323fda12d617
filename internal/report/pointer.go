package report

import (
	"fmt"
	"strconv"
	"strings"
)

// ExplainPointers are the last lines of a comparison of two configs: for each step whose
// throughput the relative table calls higher or lower (its verdict, as the marks), the
// `dbperf explain` command that says why, or, when either config's runs recorded neither
// CPU profiles nor statements for the step, how to record them. None for other
// comparisons.
func (c Comparison) ExplainPointers() []string {
	if len(c.Groups) != 2 {
		return nil
	}
	var rel *Table
	for i := range c.Tables {
		if c.Tables[i].ID == "relative" {
			rel = &c.Tables[i]
		}
	}
	if rel == nil {
		return nil
	}
	base, neu := c.Groups[c.Base], c.Groups[1-c.Base]
	var out []string
	for _, r := range rel.Rows {
		if r.Base {
			continue
		}
		for i, cell := range r.Cells {
			if !cell.Present || cell.Rel == nil || !cell.Rel.Significant() || i >= len(rel.Columns) {
				continue
			}
			step := rel.Columns[i]
			way := "faster"
			if cell.Class == ClassWorse {
				way = "slower"
			}
			change := fmt.Sprintf("%s is %s (%+.1f%%)", step, way, 100*(cell.Rel.Estimate-1))
			cmd := fmt.Sprintf("dbperf explain %s %s --step %s", groupRef(base), groupRef(neu), shellWord(step))
			if !recorded(base, step) || !recorded(neu, step) {
				out = append(out, fmt.Sprintf("%s: to say why, run both with --cpu-profile DIR --explain, then %s", change, cmd))
				continue
			}
			out = append(out, fmt.Sprintf("%s: why: %s", change, cmd))
		}
	}
	return out
}

// recorded says every run of g recorded CPU profiles or statements for step.
func recorded(g GroupReport, step string) bool {
	if len(g.Runs) == 0 {
		return false
	}
	for _, r := range g.Runs {
		ok := false
		for _, s := range r.Steps {
			if s.Name == step && (len(s.Profiles) > 0 || s.Explained) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// groupRef is how a command names a config so that the command runs as printed: its run
// id for a single run ("run N"); else the label its runs were stored with, when they share
// one (a sweep names its groups by short point names such as "13/default" while their runs
// are stored as "SWEEP/13/default"); else the group's name.
func groupRef(g GroupReport) string {
	if len(g.RunIDs) == 1 && g.Name == fmt.Sprintf("run %d", g.RunIDs[0]) {
		return strconv.FormatInt(g.RunIDs[0], 10)
	}
	if l := sharedLabel(g.Runs); l != "" {
		return shellWord(l)
	}
	if len(g.RunIDs) == 1 {
		return strconv.FormatInt(g.RunIDs[0], 10)
	}
	return shellWord(g.Name)
}

// sharedLabel is the label every run was stored with, "" when they have none or differ.
func sharedLabel(runs []RunReport) string {
	if len(runs) == 0 {
		return ""
	}
	l := runs[0].Label
	for _, r := range runs[1:] {
		if r.Label != l {
			return ""
		}
	}
	return l
}

// shellWord quotes s for a POSIX shell when it has anything but letters, digits and
// -_.,:/@+=.
func shellWord(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,:/@+=", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
