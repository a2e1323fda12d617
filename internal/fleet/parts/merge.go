package parts

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/store"
)

// mergeParts merges the parts' runs, which ran the same steps at the same time on one
// server, into one run: per step the labels' counts summed and their percentiles from the
// merged histograms (metrics.MergeLabels), intervals summed by index (an interval's
// percentiles are the highest part's: intervals keep no histograms), client CPU summed
// (each host's in the step's note), connection CPU summed per role, the machine and
// server figures (HW) of the part on the server's host (with the client CPU of every part
// on that host), else of the part on the coordinator's host, else none (the step's note
// says why); the per-op figures are computed again from those.
func mergeParts(parts []store.Run, label, host string, settings map[string]string, jobs []fleet.Job) (store.Run, error) {
	first := parts[0]
	m := store.Run{RunMeta: first.RunMeta, Status: store.RunOK}
	m.Label = label
	m.Origin = randomHex(16)
	m.Params = maps.Clone(first.Params)
	m.Env = maps.Clone(first.Env)
	m.EngineSettings = maps.Clone(first.EngineSettings)
	maps.Copy(m.EngineSettings, settings)
	for _, k := range []string{store.EnvQueueJob, store.EnvQueueAttempt, store.EnvAgent, EnvPartOf, EnvPart} {
		delete(m.Env, k)
	}
	// The server's host: a part that saw the server's processes (it ran on the server's
	// host) measured the machine and the server; without one, the part on the
	// coordinator's host, whose server figures are then absent as its own are.
	local := -1
	for i, p := range parts {
		if len(p.Steps) > 0 && p.Steps[0].Result.HW != nil && p.Steps[0].Result.HW.Server.Known {
			local = i
			break
		}
	}
	clients := 0
	var desc []string
	for i, p := range parts {
		h := p.Env["hostname"]
		if local < 0 && h == host {
			local = i
		}
		n, _ := store.IntParam(p.Params["clients"])
		clients += n
		desc = append(desc, fmt.Sprintf("part %d: run %d, %d clients on %s (agent %s)", i+1, p.ID, n, h, p.Env[store.EnvAgent]))
		if p.StartedAt.Before(m.StartedAt) {
			m.StartedAt = p.StartedAt
		}
		if p.FinishedAt.After(m.FinishedAt) {
			m.FinishedAt = p.FinishedAt
		}
		if p.Status != store.RunOK {
			m.Status = store.RunFailed
		}
	}
	parts, first = padSteps(parts), parts[0]
	m.Params["clients"] = clients
	m.Params["agents"] = len(parts)
	m.Env[EnvAgents] = strings.Join(desc, "; ")
	if len(jobs) > 0 && jobs[0].Args.Class != "" {
		m.Env[store.EnvAgentClass] = jobs[0].Args.Class
	}
	var apart []string
	for s := range first.Steps {
		step, err := mergeStep(parts, s, local)
		if err != nil {
			return m, err
		}
		if why := apartWhy(parts, s); why != "" {
			// Parts that did not run the step together are no measurement of the run.
			if step.Result.Status != metrics.StatusInterrupted {
				step.Result.Status = metrics.StatusFailed
			}
			step.Result.Error = why
			apart = append(apart, why)
		}
		if step.Result.Status != metrics.StatusOK && step.Result.Status != metrics.StatusSkipped {
			m.Status = store.RunFailed
		}
		m.Steps = append(m.Steps, step)
	}
	if len(apart) > 0 {
		m.Env[EnvAgentsPartial] = strings.Join(apart, "; ")
	}
	return m, nil
}

// padSteps gives every part the steps of the part that stored the most (a part whose
// command stopped mid-run stored none of the steps after): each step a part lacks is
// interrupted, "part stopped before it", so the merged step is not ok and says so. The
// parts' runs are copied, not changed.
func padSteps(parts []store.Run) []store.Run {
	longest := parts[0]
	for _, p := range parts {
		if len(p.Steps) > len(longest.Steps) {
			longest = p
		}
	}
	out := slices.Clone(parts)
	for i, p := range out {
		if len(p.Steps) == len(longest.Steps) {
			continue
		}
		p.Steps = slices.Clone(p.Steps)
		for _, ls := range longest.Steps[len(p.Steps):] {
			p.Steps = append(p.Steps, store.Step{Seq: ls.Seq, Group: ls.Group, Result: metrics.StepResult{Name: ls.Result.Name,
				Status: metrics.StatusInterrupted, StartedAt: ls.Result.StartedAt, Error: "not run: this part stopped before it"}})
		}
		out[i] = p
	}
	return out
}

// apartWhy says why the parts' step s was not run together, "" when it was (or when a
// part's step did not run for another reason: its own status says so): a part's barrier
// was not passed (its step failed before its load, or, stored before that was so, its
// load started alone: its note says why), or a part's load started after another part's
// had ended.
func apartWhy(parts []store.Run, s int) string {
	for i, p := range parts {
		st := p.Steps[s].Result
		for _, text := range []string{st.Error, st.Note} {
			if _, after, ok := strings.Cut(text, BarrierName+": "); ok {
				return fmt.Sprintf("part %d's %s did not start with the other parts' (%s: %s)", i+1, st.Name, BarrierName, after)
			}
		}
	}
	var lastStart, firstEnd time.Time
	late, early := 0, 0
	for i, p := range parts {
		st := p.Steps[s].Result
		if st.Status != metrics.StatusOK {
			return ""
		}
		end := st.StartedAt.Add(time.Duration(st.Seconds * float64(time.Second)))
		if i == 0 || st.StartedAt.After(lastStart) {
			lastStart, late = st.StartedAt, i
		}
		if i == 0 || end.Before(firstEnd) {
			firstEnd, early = end, i
		}
	}
	if lastStart.After(firstEnd) {
		return fmt.Sprintf("part %d's %s started at %s, after part %d's had ended (%s): the parts never ran it together",
			late+1, parts[late].Steps[s].Result.Name, lastStart.UTC().Format("15:04:05.000"), early+1, firstEnd.UTC().Format("15:04:05.000"))
	}
	return ""
}

func mergeStep(parts []store.Run, s, local int) (store.Step, error) {
	first := parts[0].Steps[s]
	out := store.Step{Seq: first.Seq, Group: first.Group}
	r := first.Result
	r.Labels, r.ClientCPUSec, r.ConnCPU, r.HW, r.Metrics = nil, 0, nil, nil, nil
	var labels [][]metrics.LabelStats
	var notes, cpu, audits []string
	conn := map[string]*metrics.ConnCPU{}
	var roles []string
	for i, p := range parts {
		st := p.Steps[s].Result
		if st.Name != r.Name {
			return out, fmt.Errorf("merge: part %d's step %d is %s, part 1's %s", i+1, s+1, st.Name, r.Name)
		}
		labels = append(labels, st.Labels)
		r.ClientCPUSec += st.ClientCPUSec
		cpu = append(cpu, fmt.Sprintf("%s %.2f s", p.Env["hostname"], st.ClientCPUSec))
		if st.StartedAt.Before(r.StartedAt) {
			r.StartedAt = st.StartedAt
		}
		r.Seconds = max(r.Seconds, st.Seconds)
		r.DBSizeBytes, r.DBSizeKnown = max(r.DBSizeBytes, st.DBSizeBytes), r.DBSizeKnown || st.DBSizeKnown
		if st.Status != metrics.StatusOK && r.Status == metrics.StatusOK {
			r.Status, r.Error = st.Status, fmt.Sprintf("part %d: %s", i+1, st.Error)
		}
		// The merged audit is every part's (each part audits its own clients' tables).
		if st.Audit.Status != "ok" && r.Audit.Status == "ok" {
			r.Audit.Status = st.Audit.Status
		}
		if st.Audit.Detail != "" {
			audits = append(audits, fmt.Sprintf("part %d: %s", i+1, st.Audit.Detail))
		}
		if st.Note != "" {
			notes = append(notes, fmt.Sprintf("part %d: %s", i+1, st.Note))
		}
		for _, c := range st.ConnCPU {
			if conn[c.Role] == nil {
				conn[c.Role] = &metrics.ConnCPU{Role: c.Role}
				roles = append(roles, c.Role)
			}
			conn[c.Role].Sessions += c.Sessions
			conn[c.Role].CPUSec += c.CPUSec
		}
	}
	r.Audit.Detail = strings.Join(audits, "; ")
	var err error
	if r.Labels, err = metrics.MergeLabels(labels); err != nil {
		return out, fmt.Errorf("merge step %s: %w", r.Name, err)
	}
	for _, role := range roles {
		r.ConnCPU = append(r.ConnCPU, *conn[role])
	}
	if local >= 0 {
		if hw := parts[local].Steps[s].Result.HW; hw != nil {
			h := *hw
			// The machine's other dbperf processes are clients of this run, not noise.
			for i, p := range parts {
				if ph := p.Steps[s].Result.HW; i != local && ph != nil && p.Env["hostname"] == parts[local].Env["hostname"] {
					h.Client.CPUSec += ph.Client.CPUSec
					h.Client.PeakMemBytes = max(h.Client.PeakMemBytes, ph.Client.PeakMemBytes)
				}
			}
			r.HW = &h
		}
	}
	if r.HW == nil {
		notes = append(notes, "no machine or server figures: no part ran on the server's host or the coordinator's")
	}
	notes = append(notes, "client CPU by host: "+strings.Join(cpu, ", "))
	r.Note = strings.Join(notes, "; ")
	r.Metrics = r.Efficiency()
	maps.Copy(r.Metrics, r.Noise())
	out.Result = r
	out.Intervals = mergeIntervals(parts, s, local)
	return out, nil
}

// mergeIntervals sums the parts' intervals by index: counts add up, an interval's
// percentiles are the highest part's, its HW the local part's.
func mergeIntervals(parts []store.Run, s, local int) []metrics.Interval {
	var out []metrics.Interval
	for i, p := range parts {
		for k, iv := range p.Steps[s].Intervals {
			if k >= len(out) {
				c := iv
				c.Labels, c.HW, c.ClientCPUSec, c.Metrics = nil, nil, 0, nil
				out = append(out, c)
			}
			o := &out[k]
			o.ClientCPUSec += iv.ClientCPUSec
			if i == local {
				o.HW, o.Metrics = iv.HW, iv.Metrics
			}
			for _, l := range iv.Labels {
				j := slices.IndexFunc(o.Labels, func(x metrics.LabelStats) bool { return x.Label == l.Label })
				if j < 0 {
					o.Labels = append(o.Labels, l)
					continue
				}
				x := &o.Labels[j]
				x.Statements += l.Statements
				x.Events += l.Events
				x.Rows += l.Rows
				x.Errors += l.Errors
				x.Late += l.Late
				x.Missed += l.Missed
				x.TargetPerSec += l.TargetPerSec
				x.Service = maxLatency(x.Service, l.Service)
				x.Response = maxLatency(x.Response, l.Response)
			}
		}
	}
	return out
}

func maxLatency(a, b metrics.Latency) metrics.Latency {
	return metrics.Latency{P50: max(a.P50, b.P50), P90: max(a.P90, b.P90), P99: max(a.P99, b.P99),
		P999: max(a.P999, b.P999), P9999: max(a.P9999, b.P9999), Max: max(a.Max, b.Max)}
}
