// Package chart draws the charts of dbperf's HTML report as inline SVG.
//
// A chart is a value (Line or Bars) whose SVG method returns one <svg> element
// as a string, ready to paste into an HTML5 page: no XML prolog, no DOCTYPE, no
// namespace declarations (the HTML parser puts an inline <svg> in the SVG
// namespace by itself), no embedded fonts and no reference to anything outside
// the element. Text uses the Liberation Sans metrics that gonum/plot lays it out
// with, and names a font-family list that ends in the generic sans-serif, so any
// browser shows it. The same chart always gives the same bytes, so the output can
// be golden-tested.
//
// Drawing is done with gonum.org/v1/plot and its SVG canvas (vg/vgsvg). Line charts
// and grouped-bar charts are drawn on the server, so the HTML page needs no script and
// no network; the page is tested in headless Chromium (internal/browsertest).
package chart

import (
	"fmt"
	"math"
	"strings"
)

// Default size of a chart, in points (1/72 inch), when Width or Height is 0.
const (
	DefaultWidth  = 640
	DefaultHeight = 300
)

// Smallest size a chart may be given, in points. Below it there is no room for
// the axes, the title and the legend.
const (
	MinWidth  = 160
	MinHeight = 100
)

// Series is one named line: points (X[i], Y[i]).
type Series struct {
	// Name labels the line in the legend.
	Name string
	// X and Y hold the coordinates of the points; they must have the same
	// length, at least 1, and hold only finite numbers.
	X, Y []float64
	// Group, when set, gives the line its group's colour (series of one group, such as a
	// config's runs, share one) and puts the group, not Name, in the legend, once.
	// Kind, when set, gives the line its kind's dash pattern (p50 solid, p99 dashed) and
	// puts each kind in the legend once, in grey. A chart of many runs then has a legend
	// entry per config and per kind rather than per line.
	Group, Kind string
}

// Ref is a horizontal reference line (e.g. a target rate, or 1.0 on a relative
// chart). It is drawn dashed across the whole plot, and its Label is shown in
// the legend (the value of Y when Label is empty).
type Ref struct {
	// Label names the line in the legend.
	Label string
	// Y is where the line is drawn, in the units of the Y axis.
	Y float64
}

// Mark is a vertical line at X, e.g. where a series changes level.
type Mark struct {
	// Label names the line in the legend.
	Label string
	// X is where the line is drawn, in the units of the X axis; it must be finite.
	X float64
}

// Line is a line chart: one line per series, overlaid, each in its own colour
// and marker shape, with a legend of the series names. A series of few points
// (30 or fewer) also gets a marker at each point, so that a series with a single
// point is visible. The Y axis starts at 0 unless LogY is set.
type Line struct {
	// Title is drawn above the chart, and is the SVG's accessible name.
	Title string
	// XLabel and YLabel label the axes; put the units in them, e.g.
	// "time since start (s)", "throughput (ops/s)".
	XLabel, YLabel string
	// Series are the lines; at least one is needed.
	Series []Series
	// Refs are horizontal reference lines.
	Refs []Ref
	// Marks are vertical lines at X positions (e.g. change points), drawn solid in
	// red across the whole plot and named in the legend.
	Marks []Mark
	// Width and Height are the size of the chart in points; 0 means
	// DefaultWidth and DefaultHeight.
	Width, Height float64
	// LogY draws the Y axis on a log scale (e.g. for latencies spanning
	// decades); every Y value and every Ref must then be above 0.
	LogY bool
	// IntegerX puts ticks on the X axis at whole numbers only (an axis of run
	// numbers).
	IntegerX bool
}

// SVG draws the chart and returns it as one <svg> element. It returns an error
// when the chart has no series, when a series has no points, X and Y of
// different lengths, or a NaN or infinite value, when LogY is set and a value is
// not above 0, or when the size is negative or too small.
func (c Line) SVG() (string, error) {
	if len(c.Series) == 0 {
		return "", fmt.Errorf("chart %q: no series to draw", c.Title)
	}
	for _, s := range c.Series {
		if err := checkSeries(s, c.LogY); err != nil {
			return "", fmt.Errorf("chart %q: %w", c.Title, err)
		}
	}
	if err := checkRefs(c.Refs, c.LogY); err != nil {
		return "", fmt.Errorf("chart %q: %w", c.Title, err)
	}
	for _, m := range c.Marks {
		if !finite(m.X) {
			return "", fmt.Errorf("chart %q: mark %q at X=%v: not a finite number", c.Title, m.Label, m.X)
		}
	}
	w, h, err := size(c.Width, c.Height)
	if err != nil {
		return "", fmt.Errorf("chart %q: %w", c.Title, err)
	}
	return drawLine(c, w, h)
}

// BarGroup is one group of a Bars chart: one bar per category, all in the
// group's colour, named in the legend.
type BarGroup struct {
	// Name labels the group in the legend.
	Name string
	// Values holds one value per category, in the order of Bars.Categories;
	// NaN means no bar for that category.
	Values []float64
	// Lo and Hi, when not nil, hold an interval per category (NaN: none), drawn as
	// a whisker across the bar's top.
	Lo, Hi []float64
	// Faint, when not nil, says per category that the bar is uncertain (no
	// verdict can be told from it): it is drawn pale, with a dashed outline.
	Faint []bool
	// Marks, when not nil, hold a short text per category drawn above the bar
	// (or its whisker), such as a verdict's mark.
	Marks []string
}

// Bars is a grouped bar chart: for each category (x axis) one bar per group
// (legend). The Y axis starts at 0 (bars of negative values go below it).
type Bars struct {
	// Title is drawn above the chart, and is the SVG's accessible name.
	Title string
	// YLabel labels the Y axis; put the units in it.
	YLabel string
	// Categories name the positions along the X axis; at least one is needed.
	Categories []string
	// Groups are the bar series; at least one is needed, each with one value
	// per category.
	Groups []BarGroup
	// Refs are horizontal reference lines.
	Refs []Ref
	// Width and Height are the size of the chart in points; 0 means
	// DefaultWidth and DefaultHeight.
	Width, Height float64
}

// SVG draws the chart and returns it as one <svg> element. It returns an error
// when the chart has no categories or no groups, when a group has not exactly
// one value per category, when a value is infinite, when every value is NaN, or
// when the size is negative or too small.
func (c Bars) SVG() (string, error) {
	if len(c.Categories) == 0 {
		return "", fmt.Errorf("chart %q: no categories to draw", c.Title)
	}
	if len(c.Groups) == 0 {
		return "", fmt.Errorf("chart %q: no bar groups to draw", c.Title)
	}
	bars := 0
	for _, g := range c.Groups {
		if len(g.Values) != len(c.Categories) {
			return "", fmt.Errorf("chart %q: group %q has %d values for %d categories", c.Title, g.Name, len(g.Values), len(c.Categories))
		}
		for what, n := range map[string]int{"Lo": len(g.Lo), "Hi": len(g.Hi), "Faint": len(g.Faint), "Marks": len(g.Marks)} {
			if n != 0 && n != len(c.Categories) {
				return "", fmt.Errorf("chart %q: group %q has %d %s for %d categories", c.Title, g.Name, n, what, len(c.Categories))
			}
		}
		if (g.Lo == nil) != (g.Hi == nil) {
			return "", fmt.Errorf("chart %q: group %q has only one of Lo and Hi", c.Title, g.Name)
		}
		for i := range g.Lo {
			if math.IsInf(g.Lo[i], 0) || math.IsInf(g.Hi[i], 0) {
				return "", fmt.Errorf("chart %q: group %q: interval for category %q is infinite", c.Title, g.Name, c.Categories[i])
			}
		}
		for i, v := range g.Values {
			switch {
			case math.IsInf(v, 0):
				return "", fmt.Errorf("chart %q: group %q: value for category %q is infinite", c.Title, g.Name, c.Categories[i])
			case !math.IsNaN(v):
				bars++
			}
		}
	}
	if bars == 0 {
		return "", fmt.Errorf("chart %q: no bars to draw: every value is NaN", c.Title)
	}
	if err := checkRefs(c.Refs, false); err != nil {
		return "", fmt.Errorf("chart %q: %w", c.Title, err)
	}
	w, h, err := size(c.Width, c.Height)
	if err != nil {
		return "", fmt.Errorf("chart %q: %w", c.Title, err)
	}
	return drawBars(c, w, h)
}

// checkSeries returns an error if s cannot be drawn.
func checkSeries(s Series, logY bool) error {
	if len(s.X) != len(s.Y) {
		return fmt.Errorf("series %q has %d x values but %d y values", s.Name, len(s.X), len(s.Y))
	}
	if len(s.X) == 0 {
		return fmt.Errorf("series %q has no points", s.Name)
	}
	for i := range s.X {
		x, y := s.X[i], s.Y[i]
		if !finite(x) || !finite(y) {
			return fmt.Errorf("series %q: point %d (%g, %g) is not finite", s.Name, i, x, y)
		}
		if logY && y <= 0 {
			return fmt.Errorf("series %q: point %d has y = %g, which a log scale cannot show", s.Name, i, y)
		}
	}
	return nil
}

// checkRefs returns an error if a reference line cannot be drawn.
func checkRefs(refs []Ref, logY bool) error {
	for _, r := range refs {
		if !finite(r.Y) {
			return fmt.Errorf("reference line %q: y = %g is not finite", r.Label, r.Y)
		}
		if logY && r.Y <= 0 {
			return fmt.Errorf("reference line %q: y = %g, which a log scale cannot show", r.Label, r.Y)
		}
	}
	return nil
}

// size returns the chart size for the given Width and Height, applying the
// defaults.
func size(w, h float64) (float64, float64, error) {
	if w == 0 {
		w = DefaultWidth
	}
	if h == 0 {
		h = DefaultHeight
	}
	if !finite(w) || !finite(h) || w < MinWidth || h < MinHeight {
		return 0, 0, fmt.Errorf("size %gx%g points: want at least %dx%d (or 0 for the default)", w, h, MinWidth, MinHeight)
	}
	return w, h, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// cleanText makes s safe to draw and to put in XML: valid UTF-8, and no control
// characters other than the newline (which gonum turns into a new line of text).
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r < 0x20 || r == 0x7F:
			return ' '
		case r == 0xFFFE || r == 0xFFFF:
			return '\uFFFD'
		}
		return r
	}, s)
}
