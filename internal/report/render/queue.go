package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/fleet"
)

// Queue writes the fleet's queue as `dbperf queue` lists it: a table of the jobs (state,
// attempt, class, the host of the agent that runs or ran each, its start, the runs it
// stored, its command or sweep point), then one of the agents (class, state, job, last
// heartbeat).
func Queue(w io.Writer, v fleet.View) error {
	var rows [][]string
	for _, j := range v.Jobs {
		started := "-"
		if j.StartedAt != nil {
			started = j.StartedAt.Local().Format("2006-01-02 15:04:05")
		}
		var runs []string
		for _, r := range v.Runs[j.ID] {
			runs = append(runs, fmt.Sprintf("%d %s", r.RunID, r.Status))
		}
		what := fleet.ShortArgv(j.Args.Argv, 60)
		if j.Args.Sweep != "" {
			what = j.Args.Sweep + " point " + j.Args.Point
		}
		rows = append(rows, []string{strconv.FormatInt(j.ID, 10), j.State, strconv.Itoa(j.Attempt), orDash(j.Args.Class), orDash(j.Host),
			started, orDash(strings.Join(runs, ", ")), what})
	}
	if len(v.Jobs) == 0 {
		fmt.Fprintln(w, "no jobs queued")
	} else if err := WriteTable(w, []string{"job", "state", "try", "class", "host", "started", "runs", "command"}, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	var arows [][]string
	for _, a := range v.Agents {
		job := "-"
		if a.JobID != nil {
			job = strconv.FormatInt(*a.JobID, 10)
		}
		arows = append(arows, []string{a.ID, a.Host, orDash(a.Class), a.State, job, a.Age.Round(100*time.Millisecond).String() + " ago"})
	}
	if len(v.Agents) == 0 {
		fmt.Fprintln(w, "no agents have run on this store (dbperf agent --results …)")
		return nil
	}
	return WriteTable(w, []string{"agent", "host", "class", "state", "job", "last heartbeat"}, arows)
}
