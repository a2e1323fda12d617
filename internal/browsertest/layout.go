package browsertest

// layoutScript finds, in the rendered page, what a reader at this window width
// cannot see whole (Result.CutOff) and the texts of a chart drawn over one another
// (Result.Overlaps). A table or chart is named by its id, else its aria-label, else
// the heading before it. Two texts overlap when their boxes, each turned by the
// text's own transform (getBBox in the text's coordinates, mapped by getCTM), share
// more than half a unit in both directions of some separating axis test: the boxes
// are convex quadrilaterals, so they overlap unless one of their edges' normals
// separates them.
const layoutScript = `(() => {
  const root = document.documentElement, vw = root.clientWidth;
  const out = {CutOff: [], Overlaps: []};
  if (root.scrollWidth > vw + 1) {
    out.CutOff.push('the page scrolls sideways: ' + root.scrollWidth + ' px wide in a window of ' + vw);
  }
  const nameOf = el => {
    if (el.id) return '#' + el.id;
    if (el.getAttribute('aria-label')) return JSON.stringify(el.getAttribute('aria-label'));
    for (let p = el; p; p = p.parentElement) {
      for (let s = p.previousElementSibling; s; s = s.previousElementSibling) {
        if (/^H[1-6]$/.test(s.tagName)) return JSON.stringify(s.textContent.trim());
      }
    }
    return el.tagName.toLowerCase();
  };
  const scroller = el => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll') return p;
    }
    return null;
  };
  const boxes = Array.from(document.querySelectorAll('table')).concat(
    Array.from(document.querySelectorAll('svg')).filter(s => !s.parentElement.closest('svg')));
  for (const el of boxes) {
    const box = scroller(el);
    const r = (box || el).getBoundingClientRect();
    if (r.right > vw + 1 || r.left < -1) {
      out.CutOff.push(el.tagName.toLowerCase() + ' ' + nameOf(el) + (box ? ' (its scrolling box)' : '') +
        ' spans ' + Math.round(r.left) + '–' + Math.round(r.right) + ' px in a window of ' + vw);
    }
  }
  const quad = t => {
    const b = t.getBBox(), m = t.getCTM();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
  };
  const separated = (p, q) => {
    for (const poly of [p, q]) {
      for (let i = 0; i < 4; i++) {
        const [x1, y1] = poly[i], [x2, y2] = poly[(i + 1) % 4];
        const nx = y1 - y2, ny = x2 - x1, len = Math.hypot(nx, ny);
        if (len === 0) continue;
        const proj = pts => pts.map(([x, y]) => (x * nx + y * ny) / len);
        const a = proj(p), b = proj(q);
        if (Math.max(...a) - 0.5 <= Math.min(...b) || Math.max(...b) - 0.5 <= Math.min(...a)) return true;
      }
    }
    return false;
  };
  for (const svg of document.querySelectorAll('svg')) {
    const texts = Array.from(svg.querySelectorAll('text')).filter(t => t.textContent.trim() !== '' && t.getBBox().width > 0);
    const quads = texts.map(quad);
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        if (!separated(quads[i], quads[j])) {
          out.Overlaps.push(nameOf(svg) + ': ' + JSON.stringify(texts[i].textContent) + ' and ' + JSON.stringify(texts[j].textContent));
        }
      }
    }
  }
  return out;
})()`
