// Package plotcheck records what a figure draws and where, so tests can check
// properties of a rendered figure programmatically: that every mark and every
// piece of text lies inside the canvas, that text does not overlap the data,
// and the order in which lines are drawn.
package plotcheck

import (
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// Kind is the kind of a drawn item.
type Kind int

// Kinds of drawn items.
const (
	Stroke Kind = iota // a stroked path
	Fill               // a filled path
	Text               // a string
)

// Item is one thing drawn, with the state it was drawn with and its bounding
// box on the canvas (origin bottom left, after all transforms).
type Item struct {
	Kind   Kind
	Text   string      // the string of a Text item
	Color  color.Color // the colour set when it was drawn
	Dashes []vg.Length // the dash pattern set when it was drawn
	Width  vg.Length   // the line width set when it was drawn
	Arc    bool        // the path contains an arc (glyph markers are arcs)
	Box    vg.Rectangle
}

// Record draws with f on a w × h recording canvas and returns the items drawn,
// in drawing order.
func Record(w, h vg.Length, f func(c draw.Canvas)) []Item {
	rec := new(recorder.Canvas)
	f(draw.NewCanvas(rec, w, h))
	return Items(rec.Actions)
}

// affine is the transform x' = a·x + b·y + c, y' = d·x + e·y + f.
type affine struct{ a, b, c, d, e, f float64 }

var identity = affine{a: 1, e: 1}

func (m affine) apply(p vg.Point) vg.Point {
	x, y := float64(p.X), float64(p.Y)
	return vg.Point{X: vg.Length(m.a*x + m.b*y + m.c), Y: vg.Length(m.d*x + m.e*y + m.f)}
}

// then returns m followed (in local coordinates) by n: m·n.
func (m affine) then(n affine) affine {
	return affine{
		a: m.a*n.a + m.b*n.d, b: m.a*n.b + m.b*n.e, c: m.a*n.c + m.b*n.f + m.c,
		d: m.d*n.a + m.e*n.d, e: m.d*n.b + m.e*n.e, f: m.d*n.c + m.e*n.f + m.f,
	}
}

// Items replays recorded actions and returns the items drawn.
func Items(actions []recorder.Action) []Item {
	var out []Item
	m := identity
	var stack []affine
	var col color.Color = color.Black
	var dashes []vg.Length
	var width vg.Length
	for _, act := range actions {
		switch a := act.(type) {
		case *recorder.SetColor:
			col = a.Color
		case *recorder.SetLineDash:
			dashes = slices.Clone(a.Dashes)
		case *recorder.SetLineWidth:
			width = a.Width
		case *recorder.Push:
			stack = append(stack, m)
		case *recorder.Pop:
			if n := len(stack); n > 0 {
				m, stack = stack[n-1], stack[:n-1]
			}
		case *recorder.Translate:
			m = m.then(affine{a: 1, e: 1, c: float64(a.Point.X), f: float64(a.Point.Y)})
		case *recorder.Rotate:
			s, c := math.Sincos(a.Angle)
			m = m.then(affine{a: c, b: -s, d: s, e: c})
		case *recorder.Scale:
			m = m.then(affine{a: a.X, e: a.Y})
		case *recorder.Stroke, *recorder.Fill:
			kind, path := Stroke, vg.Path(nil)
			if s, ok := a.(*recorder.Stroke); ok {
				path = s.Path
			} else {
				kind, path = Fill, a.(*recorder.Fill).Path
			}
			box, arc, ok := pathBox(m, path)
			if ok {
				out = append(out, Item{Kind: kind, Color: col, Dashes: dashes, Width: width, Arc: arc, Box: box})
			}
		case *recorder.FillString:
			face := font.DefaultCache.Lookup(a.Font, a.Size)
			ext := face.Extents()
			wd := face.Width(a.String)
			p := a.Point
			corners := []vg.Point{
				{X: p.X, Y: p.Y - ext.Descent}, {X: p.X + wd, Y: p.Y - ext.Descent},
				{X: p.X, Y: p.Y + ext.Ascent}, {X: p.X + wd, Y: p.Y + ext.Ascent},
			}
			out = append(out, Item{Kind: Text, Text: a.String, Color: col, Box: bound(m, corners)})
		}
	}
	return out
}

// pathBox returns the bounding box of path under m (arcs as their whole circle).
func pathBox(m affine, path vg.Path) (vg.Rectangle, bool, bool) {
	var pts []vg.Point
	arc := false
	for _, c := range path {
		switch c.Type {
		case vg.MoveComp, vg.LineComp:
			pts = append(pts, c.Pos)
		case vg.ArcComp:
			arc = true
			r := c.Radius
			pts = append(pts, vg.Point{X: c.Pos.X - r, Y: c.Pos.Y - r}, vg.Point{X: c.Pos.X + r, Y: c.Pos.Y + r},
				vg.Point{X: c.Pos.X - r, Y: c.Pos.Y + r}, vg.Point{X: c.Pos.X + r, Y: c.Pos.Y - r})
		case vg.CurveComp:
			pts = append(pts, c.Pos)
			pts = append(pts, c.Control...)
		}
	}
	if len(pts) == 0 {
		return vg.Rectangle{}, false, false
	}
	return bound(m, pts), arc, true
}

func bound(m affine, pts []vg.Point) vg.Rectangle {
	r := vg.Rectangle{Min: vg.Point{X: vg.Length(math.Inf(1)), Y: vg.Length(math.Inf(1))},
		Max: vg.Point{X: vg.Length(math.Inf(-1)), Y: vg.Length(math.Inf(-1))}}
	for _, p := range pts {
		q := m.apply(p)
		r.Min.X, r.Min.Y = min(r.Min.X, q.X), min(r.Min.Y, q.Y)
		r.Max.X, r.Max.Y = max(r.Max.X, q.X), max(r.Max.Y, q.Y)
	}
	return r
}

// Outside returns the items whose box is not inside the w × h canvas, with tol
// of slack on every side (for strokes, half their line width is added).
func Outside(items []Item, w, h, tol vg.Length) []Item {
	var out []Item
	for _, it := range items {
		b := it.Box
		if it.Kind == Stroke {
			b.Min.X, b.Min.Y = b.Min.X-it.Width/2, b.Min.Y-it.Width/2
			b.Max.X, b.Max.Y = b.Max.X+it.Width/2, b.Max.Y+it.Width/2
		}
		if b.Min.X < -tol || b.Min.Y < -tol || b.Max.X > w+tol || b.Max.Y > h+tol {
			out = append(out, it)
		}
	}
	return out
}

// Overlap reports whether two boxes intersect (touching edges do not count).
func Overlap(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

// SameColor reports whether two colours are equal as 8-bit non-premultiplied RGBA.
func SameColor(a, b color.Color) bool {
	if a == nil || b == nil {
		return a == b
	}
	return color.NRGBAModel.Convert(a) == color.NRGBAModel.Convert(b)
}
