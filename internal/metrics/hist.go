package metrics

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// LabelHist is a label's step-total latency histograms, HdrHistogram's V2 compressed
// encoding: what a run's parts (dbperf run --agents) merge into one run's percentiles.
type LabelHist struct {
	Service  []byte
	Response []byte // nil unless the label is rate-limited (HasResponse)
}

func encodeHist(h *hdr.Histogram) []byte {
	if h == nil {
		return nil
	}
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil // not reachable for a histogram of this range; the label then has none
	}
	return b
}

// MergeLabels merges the step totals of several processes that measured the same step
// at the same time (a run's parts): per label the counts add up, the targets too, and the
// latency percentiles come from the merged histograms. A part without a label adds
// nothing to it; a label some part has no histogram for is an error (its percentiles
// could not be merged).
func MergeLabels(parts [][]LabelStats) ([]LabelStats, error) {
	type merged struct {
		s                 LabelStats
		service, response *hdr.Histogram
	}
	var order []string
	byLabel := map[string]*merged{}
	for _, part := range parts {
		for _, l := range part {
			if l.Hist == nil {
				return nil, fmt.Errorf("label %s: no latency histogram to merge", l.Label)
			}
			sv, err := hdr.Decode(l.Hist.Service)
			if err != nil {
				return nil, fmt.Errorf("label %s: decode its histogram: %w", l.Label, err)
			}
			m, ok := byLabel[l.Label]
			if !ok {
				m = &merged{s: l, service: newHist()}
				m.s.Statements, m.s.Events, m.s.Rows, m.s.Errors, m.s.Late, m.s.Missed, m.s.TargetPerSec = 0, 0, 0, 0, 0, 0, 0
				byLabel[l.Label] = m
				order = append(order, l.Label)
			}
			m.s.Statements += l.Statements
			m.s.Events += l.Events
			m.s.Rows += l.Rows
			m.s.Errors += l.Errors
			m.s.Late += l.Late
			m.s.Missed += l.Missed
			m.s.TargetPerSec += l.TargetPerSec
			m.service.Merge(sv)
			if l.HasResponse && l.Hist.Response != nil {
				rh, err := hdr.Decode(l.Hist.Response)
				if err != nil {
					return nil, fmt.Errorf("label %s: decode its histogram: %w", l.Label, err)
				}
				if m.response == nil {
					m.response = newHist()
				}
				m.response.Merge(rh)
			}
		}
	}
	out := make([]LabelStats, 0, len(order))
	for _, name := range order {
		m := byLabel[name]
		m.s.Service = latencyOf(m.service)
		m.s.Hist = &LabelHist{Service: encodeHist(m.service)}
		if m.response != nil {
			m.s.Response, m.s.HasResponse = latencyOf(m.response), true
			m.s.Hist.Response = encodeHist(m.response)
		}
		out = append(out, m.s)
	}
	return out, nil
}
