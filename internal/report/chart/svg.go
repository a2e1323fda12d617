package chart

import (
	"errors"
	"html"
	"strconv"
	"strings"
)

// tidySVG turns the document that vgsvg writes into an element for inline use
// in HTML5:
//   - the XML prolog and vgsvg's comment before <svg are dropped;
//   - the <svg> start tag is written anew with the size, the viewBox, role="img"
//     and the title as aria-label, and without xmlns / xmlns:xlink (an inline
//     <svg> is in the SVG namespace by the HTML parsing rules, and nothing in
//     the drawing uses xlink);
//   - each font-family that vgsvg names (the typeface gonum measured with, e.g.
//     "Liberation Sans") gets fallbacks ending in a generic family.
func tidySVG(doc, title string, w, h float64) (string, error) {
	start := strings.Index(doc, "<svg")
	if start < 0 {
		return "", errors.New("vgsvg wrote no <svg> element")
	}
	end := strings.IndexByte(doc[start:], '>')
	if end < 0 {
		return "", errors.New("vgsvg wrote an unterminated <svg> tag")
	}
	body := doc[start+end+1:]

	var b strings.Builder
	ws, hs := num(w), num(h)
	b.WriteString(`<svg width="` + ws + `pt" height="` + hs + `pt" viewBox="0 0 ` + ws + " " + hs + `" role="img"`)
	if t := strings.Join(strings.Fields(title), " "); t != "" {
		b.WriteString(` aria-label="` + html.EscapeString(t) + `"`)
	}
	b.WriteString(">")
	b.WriteString(withFallbackFonts(strings.TrimRight(body, "\n")))
	return b.String(), nil
}

// withFallbackFonts rewrites every style="font-family:NAME;..." that vgsvg
// writes (always first in the style attribute, and never inside text, where a
// double quote is escaped) to list fallbacks after NAME.
func withFallbackFonts(s string) string {
	const key = `style="font-family:`
	var b strings.Builder
	for {
		i := strings.Index(s, key)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		i += len(key)
		b.WriteString(s[:i])
		s = s[i:]
		j := strings.IndexAny(s, `;"`)
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(fontList(s[:j]))
		s = s[j:]
	}
}

// fontList returns a CSS font-family list for a typeface that gonum used. The
// names are unquoted (valid CSS for names of plain words) because the list sits
// in a double-quoted attribute.
func fontList(family string) string {
	switch {
	case strings.Contains(family, "Mono"):
		return family + `,DejaVu Sans Mono,Menlo,Consolas,monospace`
	case strings.Contains(family, "Serif") && !strings.Contains(family, "Sans"):
		return family + `,Times New Roman,Times,serif`
	}
	return family + `,Arimo,Arial,Helvetica,sans-serif`
}

// num formats a size like vgsvg does (%.5g).
func num(v float64) string {
	return strconv.FormatFloat(v, 'g', 5, 64)
}
