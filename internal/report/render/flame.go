package render

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/dbperf/dbperf/internal/report"
)

// A differential flame graph drawn by our own code: no maintained Go library draws
// differential flame graphs. The model is Brendan Gregg's difffolded.pl and flamegraph.pl:
// the root at the bottom, each frame as wide as the NEW profile's CPU µs per operation,
// its children left to right by name; red a frame that grew, blue one that shrank, the
// saturation its change relative to the graph's largest change (flamegraph.pl's
// 210·(maxdelta−delta)/maxdelta); grey unchanged. Frames only in the base are not drawn
// (report.FlameNode.Own folds their change into their parent). Each frame's <title> is
// its tooltip: base and new µs/op, the change and the change in %. The SVG is inline
// (no xmlns, no script, nothing fetched) and deterministic.
const (
	flameWidth      = 1200.0 // the SVG's width
	flameXPad       = 10.0   // left and right margins
	flameFrameH     = 16.0   // a frame's height, 1 of it a gap
	flameFontSize   = 12.0
	flameFontWidth  = 0.59               // a character's mean width relative to the font size (flamegraph.pl's)
	flameTitleH     = 34.0               // above the frames: the title
	flameLegendH    = 24.0               // below the frames: the legend line
	flameNeutral    = "rgb(221,221,221)" // flameRGB of no change
	flameFontFamily = "Liberation Sans,Arimo,Arial,Helvetica,sans-serif"
)

// FlameSVG writes root (report.BuildFlameDiff) as a differential flame graph: one inline
// <svg> element headed by title.
func FlameSVG(w io.Writer, root *report.FlameNode, title string) error {
	if root == nil {
		return fmt.Errorf("render: flame graph %q: no graph", title)
	}
	depth := flameDepth(root)
	height := flameTitleH + float64(depth+1)*flameFrameH + flameLegendH
	// Only significant changes are coloured (FlameNode.OwnSignificant: beyond the noise
	// of sampling, and by their interval across blocks or runs where there is one); the
	// saturation scale is theirs.
	maxOwn := 0.0
	flameWalk(root, func(n *report.FlameNode) {
		if n.OwnSignificant {
			maxOwn = max(maxOwn, math.Abs(n.Own))
		}
	})
	own := func(n *report.FlameNode) float64 {
		if !n.OwnSignificant {
			return 0
		}
		return n.Own
	}

	bw := bufio.NewWriter(w)
	title = html.EscapeString(report.Printable(title))
	fmt.Fprintf(bw, `<svg class="flame" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-label="%s" style="max-width:100%%;height:auto" font-family="%s" font-size="%s">`+"\n",
		flameNum(flameWidth), flameNum(height), flameNum(flameWidth), flameNum(height), title, flameFontFamily, flameNum(flameFontSize))
	// Scoped to this class: a style element of an inline SVG applies to the whole page.
	bw.WriteString("<style>svg.flame g.f:hover>rect{stroke:#000;stroke-width:0.7}</style>\n")
	fmt.Fprintf(bw, `<rect x="0" y="0" width="%s" height="%s" fill="#fff"/>`+"\n", flameNum(flameWidth), flameNum(height))
	fmt.Fprintf(bw, `<text x="%s" y="22" text-anchor="middle" font-size="15" font-weight="bold">%s</text>`+"\n", flameNum(flameWidth/2), title)

	scale := 0.0
	if root.New > 0 {
		scale = (flameWidth - 2*flameXPad) / root.New
	}
	bottom := height - flameLegendH
	var draw func(n *report.FlameNode, x float64, d int)
	draw = func(n *report.FlameNode, x float64, d int) {
		width := n.New * scale
		if d == 0 && scale == 0 {
			width = flameWidth - 2*flameXPad // nothing sampled in new: the root alone, full width
		}
		y := bottom - float64(d+1)*flameFrameH
		fill := flameColour(own(n), maxOwn)
		fmt.Fprintf(bw, `<g class="f"><title>%s</title><rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`,
			html.EscapeString(flameTooltip(n)), flameNum(x), flameNum(y), flameNum(width), flameNum(flameFrameH-1), fill)
		if label := flameLabel(report.Printable(n.Name), width); label != "" {
			fmt.Fprintf(bw, `<text x="%s" y="%s" fill="%s">%s</text>`, flameNum(x+3), flameNum(y+flameFrameH-4.5), flameTextColour(own(n), maxOwn), html.EscapeString(label))
		}
		bw.WriteString("</g>\n")
		for _, c := range n.Children {
			if c.New > 0 && scale > 0 {
				draw(c, x, d+1)
				x += c.New * scale
			}
		}
	}
	draw(root, flameXPad, 0)
	fmt.Fprintf(bw, `<text x="%s" y="%s" font-size="11" fill="#555">width: CPU µs per operation in the new config; red grew, blue shrank against the base (deeper: a larger change), grey unchanged; hover a frame for its figures</text>`+"\n",
		flameNum(flameXPad), flameNum(height-8))
	bw.WriteString("</svg>\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("render: write flame graph: %w", err)
	}
	return nil
}

// flameWalk calls fn on every drawn frame under n (n included).
func flameWalk(n *report.FlameNode, fn func(*report.FlameNode)) {
	fn(n)
	for _, c := range n.Children {
		if c.New > 0 {
			flameWalk(c, fn)
		}
	}
}

// flameDepth is the depth of the deepest drawn frame (the root's is 0).
func flameDepth(n *report.FlameNode) int {
	d := 0
	for _, c := range n.Children {
		if c.New > 0 {
			d = max(d, 1+flameDepth(c))
		}
	}
	return d
}

// flameColour is a frame's fill for its change delta, the graph's largest being maxDelta:
// red when it grew, blue when it shrank, from pale (flamegraph.pl's 210 of 255) to full
// saturation at maxDelta; grey when it did not change.
func flameColour(delta, maxDelta float64) string {
	r, g, b := flameRGB(delta, maxDelta)
	if r == g && g == b {
		return flameNeutral
	}
	return fmt.Sprintf("rgb(%d,%d,%d)", r, g, b)
}

func flameRGB(delta, maxDelta float64) (r, g, b int) {
	if delta == 0 || math.IsNaN(delta) || !(maxDelta > 0) {
		return 221, 221, 221
	}
	c := int(math.Round(210 * (1 - min(1, math.Abs(delta)/maxDelta))))
	if delta > 0 {
		return 255, c, c
	}
	return c, c, 255
}

// flameTextColour is the label's colour on a frame of that change: black, or white on
// a dark fill.
func flameTextColour(delta, maxDelta float64) string {
	r, g, b := flameRGB(delta, maxDelta)
	if 0.299*float64(r)+0.587*float64(g)+0.114*float64(b) < 110 {
		return "#fff"
	}
	return "#000"
}

// flameLabel is name as it fits in width pixels: whole, cut with "..", or nothing under
// three characters (as flamegraph.pl labels its frames).
func flameLabel(name string, width float64) string {
	fit := int((width - 6) / (flameFontSize * flameFontWidth))
	if fit < 3 {
		return ""
	}
	if utf8.RuneCountInString(name) <= fit {
		return name
	}
	r := []rune(name)
	return string(r[:fit-2]) + ".."
}

// flameTooltip is a frame's figures: its name, its total CPU µs/op in the base and the new
// config with the change and the change in %, its self CPU in both.
func flameTooltip(n *report.FlameNode) string {
	change := "new"
	if p := n.Pct(); !math.IsNaN(p) {
		change = report.SignedPct(p)
	}
	return fmt.Sprintf("%s\nbase %s µs/op, new %s µs/op: %s µs/op (%s)\nself: base %s, new %s µs/op",
		report.Printable(n.Name), report.FormatNum(n.Base), report.FormatNum(n.New), flameSigned(n.Delta()), change,
		report.FormatNum(n.BaseSelf), report.FormatNum(n.NewSelf))
}

func flameSigned(v float64) string {
	if v > 0 {
		return "+" + report.FormatNum(v)
	}
	return report.FormatNum(v)
}

// flameNum is a coordinate with at most one decimal.
func flameNum(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}
