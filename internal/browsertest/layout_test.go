package browsertest

import (
	"strings"
	"testing"
)

// TestLayout: a table wider than the window outside a scrolling box is cut off and
// makes the page scroll sideways, one inside such a box is not; two texts drawn over one
// another overlap, slanted labels that clear each other (their boxes turned with them)
// do not, though their upright bounding boxes would.
func TestLayout(t *testing.T) {
	needChromium(t)
	wide := "<tr>" + strings.Repeat("<td>a-long-cell-of-a-wide-table</td>", 80) + "</tr>"
	res := open(t, page("layout", `<h2>Cut</h2><table id="cut">`+wide+`</table>
<h2>Boxed</h2><div style="overflow-x:auto"><table id="boxed">`+wide+`</table></div>
<svg width="300" height="200" viewBox="0 0 300 200" aria-label="chart">
<text x="10" y="20" style="font-size:12px">first label</text><text x="30" y="24" style="font-size:12px">second label</text>
<g transform="rotate(30)"><text x="60" y="80" style="font-size:10px">slanted-one</text></g>
<g transform="rotate(30)"><text x="100" y="60" style="font-size:10px">slanted-two</text></g>
</svg>`))
	if !contains(res.CutOff, "the page scrolls sideways") || !contains(res.CutOff, "table #cut") || contains(res.CutOff, "#boxed") {
		t.Errorf("CutOff = %q: want the page and #cut, not #boxed", res.CutOff)
	}
	if len(res.Overlaps) != 1 || !strings.Contains(res.Overlaps[0], `"first label" and "second label"`) {
		t.Errorf("Overlaps = %q: want the first and second label only", res.Overlaps)
	}
}
