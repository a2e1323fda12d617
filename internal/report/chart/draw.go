package chart

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Layout constants, in points.
const (
	margin      = 6   // around the whole chart
	legendGap   = 12  // between the plot and a legend on its right
	markerLimit = 30  // series of at most this many points get markers
	lineWidth   = 1.5 // width of a series line
	markerSize  = 2.5 // radius of a marker
	headroom    = 0.05
)

// sans is the typeface of every text: gonum measures text with Liberation Sans,
// and the SVG names it first in a font-family list ending in sans-serif.
func sans(size vg.Length, bold bool) font.Font {
	f := font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return f
}

// newPlot returns a plot with the house style: sans-serif text, light
// horizontal grid lines, axis labels and title.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil // render paints the whole canvas white
	p.Title.Text = cleanText(title)
	p.Title.TextStyle.Font = sans(13, true)
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(11, false)
		a.Tick.Label.Font = sans(10, false)
		a.Label.Padding = vg.Points(4)
	}
	p.X.Label.Text = cleanText(xLabel)
	p.Y.Label.Text = cleanText(yLabel)
	p.X.Tick.Marker = linearTicks{}
	p.Y.Tick.Marker = linearTicks{}
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	grid.Horizontal.Color = color.Gray{Y: 0xDD}
	grid.Horizontal.Width = vg.Points(0.5)
	p.Add(grid)
	return p
}

// newLegend returns an empty legend in the house style, entries listed top
// down with the sample left of the name.
func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = sans(10, false)
	l.Top = true
	l.Left = true
	l.Padding = vg.Points(3)
	l.ThumbnailWidth = vg.Points(22)
	return l
}

// drawLine draws a validated line chart of w×h points.
func drawLine(c Line, w, h float64) (string, error) {
	p := newPlot(c.Title, c.XLabel, c.YLabel)
	leg := newLegend()
	groups, kinds := map[string]int{}, map[string]int{}
	var kindOrder []string
	for i, s := range c.Series {
		xys := make(plotter.XYs, len(s.X))
		for j := range s.X {
			xys[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
		}
		var thumbs []plot.Thumbnailer
		ci, dashes, newGroup := i, seriesDashes(i), false
		if s.Group != "" {
			g, ok := groups[s.Group]
			if !ok {
				g, newGroup = len(groups), true
				groups[s.Group] = g
			}
			ci, dashes = g, nil
		}
		if s.Kind != "" {
			k, ok := kinds[s.Kind]
			if !ok {
				k = len(kinds)
				kinds[s.Kind] = k
				kindOrder = append(kindOrder, s.Kind)
			}
			dashes = kindDashes(k)
		}
		ls := draw.LineStyle{Color: seriesColor(ci), Width: vg.Points(lineWidth), Dashes: dashes}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return "", fmt.Errorf("chart %q: series %q: %w", c.Title, s.Name, err)
		}
		line.LineStyle = ls
		if len(xys) > 1 {
			p.Add(line)
		}
		thumbs = append(thumbs, line)
		if len(xys) <= markerLimit {
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return "", fmt.Errorf("chart %q: series %q: %w", c.Title, s.Name, err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: seriesColor(ci), Radius: vg.Points(markerSize), Shape: seriesGlyph(ci)}
			p.Add(sc)
			thumbs = append(thumbs, sc)
		}
		switch {
		case s.Group == "":
			leg.Add(cleanText(s.Name), thumbs...)
		case newGroup:
			leg.Add(cleanText(s.Group), swatch{seriesColor(ci)})
		}
	}
	for k, kind := range kindOrder {
		leg.Add(cleanText(kind), refLine{style: draw.LineStyle{Color: color.Gray{Y: 0x55}, Width: vg.Points(lineWidth), Dashes: kindDashes(k)}})
	}
	addRefs(p, &leg, c.Refs)
	for _, m := range c.Marks {
		ml := markLine{x: m.X, style: draw.LineStyle{Color: color.RGBA{R: 0xc0, G: 0x20, B: 0x20, A: 0xff}, Width: vg.Points(1.25)}}
		p.Add(ml)
		leg.Add(cleanText(m.Label), ml)
	}
	if c.IntegerX {
		p.X.Tick.Marker = integerTicks{}
	}
	if c.LogY {
		logRange(&p.Y)
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	} else {
		zeroRange(&p.Y)
	}
	return render(c.Title, p, leg, w, h)
}

// drawBars draws a validated bar chart of w×h points.
func drawBars(c Bars, w, h float64) (string, error) {
	p := newPlot(c.Title, "", c.YLabel)
	leg := newLegend()
	gb := &groupedBars{categories: len(c.Categories)}
	for i, g := range c.Groups {
		gb.values = append(gb.values, g.Values)
		gb.lo, gb.hi = append(gb.lo, g.Lo), append(gb.hi, g.Hi)
		gb.faint, gb.marks = append(gb.faint, g.Faint), append(gb.marks, g.Marks)
		gb.colors = append(gb.colors, seriesColor(i))
		leg.Add(cleanText(g.Name), swatch{seriesColor(i)})
	}
	p.Add(gb)
	addRefs(p, &leg, c.Refs)
	zeroRange(&p.Y)

	names := make([]string, len(c.Categories))
	widest := vg.Length(0)
	for i, n := range c.Categories {
		names[i] = cleanText(n)
		widest = max(widest, p.X.Tick.Label.Width(names[i]))
	}
	pad := p.Y.Padding
	p.NominalX(names...)
	p.Y.Padding = pad
	w, h = layCategories(&p.X.Tick.Label, widest, len(names), len(c.Groups), hasMarks(c.Groups), w-float64(legendWidth(leg)), w, h)
	return render(c.Title, p, leg, w, h)
}

// Room for the category names of a bar chart, in points: a name's box is lineBox high
// in a browser (fallback fonts included) and up to textSlack wider than gonum measures
// it; a bar with a mark above it needs markRoom.
const (
	lineBox   = 13
	textSlack = 1.2
	markRoom  = 11
)

// layCategories lays out the names of n categories of groups bars each, the widest
// name widest long, so that no two names nor two marks overlap: side by side when they
// fit, slanted (30°) when slanted names clear each other, else upright (read downwards),
// the chart made wider when even upright names, or the marks, would not fit and taller
// by the upright names' length. plotWidth estimates the plot's share of the chart (w less the
// legend). It returns the chart's size.
func layCategories(sty *draw.TextStyle, widest vg.Length, n, groups int, marks bool, plotWidth, w, h float64) (float64, float64) {
	// The plot is the chart less the margins, the legend and the Y axis.
	axes := w - plotWidth + 2*margin + legendGap + 60
	slot := (w - axes) / float64(n)
	need := 0.0
	if marks {
		need = markRoom * float64(groups) / 0.8
	}
	switch {
	case float64(widest)*textSlack+4 <= slot && slot >= need:
		return w, h
	case slot*math.Sin(math.Pi/6) >= lineBox*1.1 && slot >= need:
		sty.Rotation = math.Pi / 6
		sty.XAlign, sty.YAlign = draw.XRight, draw.YTop
		return w, h
	}
	// Read downwards, each name starts at its tick: a browser font wider than gonum's
	// measure lengthens it away from the plot, not into it.
	sty.Rotation = -math.Pi / 2
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	need = max(need, lineBox*1.25)
	if slot < need {
		w = axes + need*float64(n)
	}
	return w, h + float64(widest)*textSlack - lineBox
}

// hasMarks says whether some bar of groups has a mark.
func hasMarks(groups []BarGroup) bool {
	for _, g := range groups {
		for _, m := range g.Marks {
			if m != "" {
				return true
			}
		}
	}
	return false
}

// addRefs adds the reference lines to the plot and the legend.
func addRefs(p *plot.Plot, leg *plot.Legend, refs []Ref) {
	for i, r := range refs {
		rl := refLine{y: r.Y, style: draw.LineStyle{
			Color:  color.Gray{Y: 0x33},
			Width:  vg.Points(1.25),
			Dashes: refDashes(i),
		}}
		p.Add(rl)
		label := cleanText(r.Label)
		if label == "" {
			label = "y = " + formatNum(r.Y)
		}
		leg.Add(label, rl)
	}
}

// zeroRange makes a linear axis include 0 and leaves a little room above (and
// below, for negative data) the data.
func zeroRange(a *plot.Axis) {
	lo, hi := math.Min(a.Min, 0), math.Max(a.Max, 0)
	span := hi - lo
	if span == 0 {
		hi = 1
	}
	if hi > 0 {
		hi += headroom * span
	}
	if lo < 0 {
		lo -= headroom * span
	}
	a.Min, a.Max = lo, hi
}

// logRange widens a log axis a little beyond the (positive) data, and to a
// full factor of 10 when all values are equal.
func logRange(a *plot.Axis) {
	lo, hi := a.Min/1.15, a.Max*1.15
	if a.Min == a.Max {
		lo, hi = a.Min/math.Sqrt(10), a.Max*math.Sqrt(10)
	}
	a.Min, a.Max = lo, hi
}

// legendWidth is the width a legend takes, with room to spare for a browser
// that lacks Liberation Sans and its metric twins (Arimo, Arial, Helvetica)
// and draws the names in a wider font such as DejaVu Sans.
func legendWidth(l plot.Legend) vg.Length {
	return l.Rectangle(draw.Canvas{}).Size().X * 1.2
}

// render draws p with the legend on its right (or inside the plot when it
// would take too much room) on a w×h SVG canvas, and returns the cleaned
// <svg> element.
func render(title string, p *plot.Plot, leg plot.Legend, w, h float64) (svg string, err error) {
	defer func() {
		// gonum/plot panics on what it cannot draw; validation should have
		// ruled that out, but a report must not crash on a chart.
		if r := recover(); r != nil {
			svg, err = "", fmt.Errorf("chart %q: drawing failed: %v", title, r)
		}
	}()
	cv := vgsvg.New(vg.Length(w), vg.Length(h))
	dc := draw.New(cv)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	area := draw.Crop(dc, margin, -margin, margin, -margin)
	lw := legendWidth(leg)
	if lw > 0.4*area.Size().X {
		p.Legend = leg
		p.Legend.Left = false
		p.Draw(area)
	} else {
		plotArea := draw.Crop(area, 0, -(lw + legendGap), 0, 0)
		p.Draw(plotArea)
		data := p.DataCanvas(plotArea)
		legArea := area
		legArea.Min.X = plotArea.Max.X + legendGap
		legArea.Min.Y = data.Min.Y
		legArea.Max.Y = data.Max.Y
		leg.Draw(legArea)
	}

	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("chart %q: writing SVG: %w", title, err)
	}
	out, err := tidySVG(buf.String(), cleanText(title), w, h)
	if err != nil {
		return "", fmt.Errorf("chart %q: %w", title, err)
	}
	return out, nil
}

// refLine is a plotter of a horizontal dashed line across the whole plot.
type refLine struct {
	y     float64
	style draw.LineStyle
}

// Plot implements plot.Plotter.
func (r refLine) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(r.y)
	c.StrokeLine2(r.style, c.Min.X, y, c.Max.X, y)
}

// DataRange implements plot.DataRanger: the line spans no X values, so it
// leaves the X range to the data.
func (r refLine) DataRange() (xmin, xmax, ymin, ymax float64) {
	return math.Inf(1), math.Inf(-1), r.y, r.y
}

// Thumbnail implements plot.Thumbnailer.
func (r refLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(r.style, c.Min.X, y, c.Max.X, y)
}

// markLine is a plotter of a vertical line across the whole plot.
type markLine struct {
	x     float64
	style draw.LineStyle
}

// Plot implements plot.Plotter.
func (m markLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(m.x)
	c.StrokeLine2(m.style, x, c.Min.Y, x, c.Max.Y)
}

// DataRange implements plot.DataRanger: the line spans no Y values.
func (m markLine) DataRange() (xmin, xmax, ymin, ymax float64) {
	return m.x, m.x, math.Inf(1), math.Inf(-1)
}

// Thumbnail implements plot.Thumbnailer.
func (m markLine) Thumbnail(c *draw.Canvas) {
	x := c.Center().X
	c.StrokeLine2(m.style, x, c.Min.Y, x, c.Max.Y)
}

// groupedBars is a plotter of grouped bars: category i spans x in
// [i-0.5, i+0.5], and its bars share the middle 80% of that slot. A NaN value
// draws no bar.
type groupedBars struct {
	categories int
	values     [][]float64 // [group][category]
	lo, hi     [][]float64 // [group][category], or a nil group: no intervals
	faint      [][]bool
	marks      [][]string
	colors     []color.Color
}

// at is x[g][i], or the zero value when group g has none.
func at[T any](x [][]T, g, i int) T {
	var zero T
	if g >= len(x) || x[g] == nil {
		return zero
	}
	return x[g][i]
}

// interval is group g's interval for category i; ok is false when it has none.
func (b *groupedBars) interval(g, i int) (lo, hi float64, ok bool) {
	if g >= len(b.lo) || b.lo[g] == nil {
		return 0, 0, false
	}
	lo, hi = b.lo[g][i], b.hi[g][i]
	return lo, hi, !math.IsNaN(lo) && !math.IsNaN(hi)
}

// pale is c mixed with white, for an uncertain bar.
func pale(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((v>>8)*35/100 + 255*65/100) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 0xff}
}

// Plot implements plot.Plotter.
func (b *groupedBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	slot := trX(1) - trX(0)
	width := slot * 0.8 / vg.Length(len(b.values))
	gap := vg.Length(0)
	if width > 4 {
		gap = 1 // a hairline between neighbouring bars
	}
	y0 := trY(0)
	for g, vals := range b.values {
		for i, v := range vals {
			if math.IsNaN(v) {
				continue
			}
			x := trX(float64(i)) - 0.4*slot + vg.Length(g)*width
			y := trY(v)
			rect := []vg.Point{{X: x, Y: y0}, {X: x, Y: y}, {X: x + width - gap, Y: y}, {X: x + width - gap, Y: y0}}
			if at(b.faint, g, i) {
				c.FillPolygon(pale(b.colors[g]), c.ClipPolygonY(rect))
				c.StrokeLines(draw.LineStyle{Color: b.colors[g], Width: vg.Points(0.75), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}},
					c.ClipLinesY(append(rect, rect[0]))...)
			} else {
				c.FillPolygon(b.colors[g], c.ClipPolygonY(rect))
			}
			top := y
			mid := x + (width-gap)/2
			if lo, hi, ok := b.interval(g, i); ok {
				ylo, yhi := trY(lo), trY(hi)
				whisker := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
				cap := min(width/3, vg.Points(4))
				c.StrokeLines(whisker, c.ClipLinesY([]vg.Point{{X: mid, Y: ylo}, {X: mid, Y: yhi}})...)
				c.StrokeLines(whisker, c.ClipLinesY([]vg.Point{{X: mid - cap, Y: ylo}, {X: mid + cap, Y: ylo}})...)
				c.StrokeLines(whisker, c.ClipLinesY([]vg.Point{{X: mid - cap, Y: yhi}, {X: mid + cap, Y: yhi}})...)
				top = max(top, yhi)
			}
			if m := at(b.marks, g, i); m != "" {
				sty := draw.TextStyle{Color: color.Black, Font: sans(9, true), XAlign: draw.XCenter, YAlign: draw.YBottom, Handler: p.X.Tick.Label.Handler}
				c.FillText(sty, vg.Point{X: mid, Y: top + 2}, cleanText(m))
			}
		}
	}
	c.StrokeLine2(draw.LineStyle{Color: color.Black, Width: vg.Points(0.75)}, c.Min.X, y0, c.Max.X, y0)
}

// DataRange implements plot.DataRanger.
func (b *groupedBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = 0, 0
	for g, vals := range b.values {
		for i, v := range vals {
			if !math.IsNaN(v) {
				ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
				if lo, hi, ok := b.interval(g, i); ok { // its whisker is drawn too
					ymin, ymax = math.Min(ymin, lo), math.Max(ymax, hi)
				}
			}
		}
	}
	return -0.5, float64(b.categories) - 0.5, ymin, ymax
}

// swatch is the legend sample of a bar group: a filled bar across the
// sample's width.
type swatch struct{ color color.Color }

// Thumbnail implements plot.Thumbnailer.
func (s swatch) Thumbnail(c *draw.Canvas) {
	half := min(c.Size().Y, vg.Points(9)) / 2
	mid := c.Center()
	r := vg.Rectangle{
		Min: vg.Point{X: c.Min.X, Y: mid.Y - half},
		Max: vg.Point{X: c.Max.X, Y: mid.Y + half},
	}
	c.FillPolygon(s.color, []vg.Point{r.Min, {X: r.Min.X, Y: r.Max.Y}, r.Max, {X: r.Max.X, Y: r.Min.Y}})
}

// seriesColor is the colour of the i-th series: the Tableau 10 palette,
// repeated.
func seriesColor(i int) color.Color {
	palette := [...]color.RGBA{
		{0x4E, 0x79, 0xA7, 0xFF}, // blue
		{0xF2, 0x8E, 0x2B, 0xFF}, // orange
		{0xE1, 0x57, 0x59, 0xFF}, // red
		{0x76, 0xB7, 0xB2, 0xFF}, // teal
		{0x59, 0xA1, 0x4F, 0xFF}, // green
		{0xED, 0xC9, 0x48, 0xFF}, // yellow
		{0xB0, 0x7A, 0xA1, 0xFF}, // purple
		{0xFF, 0x9D, 0xA7, 0xFF}, // pink
		{0x9C, 0x75, 0x5F, 0xFF}, // brown
		{0xBA, 0xB0, 0xAC, 0xFF}, // grey
	}
	return palette[i%len(palette)]
}

// seriesDashes keeps lines distinct once the palette repeats: solid for the
// first 10 series, then dashed, then dotted.
func seriesDashes(i int) []vg.Length {
	switch (i / 10) % 3 {
	case 1:
		return []vg.Length{vg.Points(6), vg.Points(3)}
	case 2:
		return []vg.Length{vg.Points(1.5), vg.Points(2)}
	}
	return nil
}

// kindDashes is the dash pattern of the k-th kind of line (Series.Kind): solid, dashed,
// dotted, dash-dotted.
func kindDashes(k int) []vg.Length {
	patterns := [...][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(1.5), vg.Points(2)}, {vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)}}
	return patterns[k%len(patterns)]
}

// seriesGlyph is the marker shape of the i-th series.
func seriesGlyph(i int) draw.GlyphDrawer {
	shapes := [...]draw.GlyphDrawer{
		draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.RingGlyph{},
		draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
	}
	return shapes[i%len(shapes)]
}

// refDashes is the dash pattern of the i-th reference line.
func refDashes(i int) []vg.Length {
	patterns := [...][]vg.Length{
		{vg.Points(6), vg.Points(3)},
		{vg.Points(2), vg.Points(2)},
		{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
		{vg.Points(4), vg.Points(4)},
	}
	return patterns[i%len(patterns)]
}
