package pngenc

import (
	"image"
	"image/color"
	"math"

	"git.sr.ht/~sbinet/gg"
	"golang.org/x/image/draw"
	"golang.org/x/image/math/f64"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// Text is half of a figure's raster drawing through vgimg: gg composites every glyph with
// draw.BiLinear.Transform and a source mask, for which x/image/draw takes its generic path,
// reading and writing each pixel through image.Image's At and Set (an allocation per pixel).
// Canvas.FillString draws the same glyphs with glyphOver, the same arithmetic on the pixels
// directly. To know the transform and colour gg would use, Canvas follows the graphics state
// vgimg gives its context (SetColor, Translate, Rotate, Scale, Push, Pop).

// gstate is the part of the graphics state FillString needs: the context's matrix and colour.
type gstate struct {
	m   gg.Matrix
	col color.Color
}

// SetColor implements vg.Canvas.
func (c *Canvas) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black // as vgimg
	}
	c.Canvas.SetColor(clr)
	c.top().col = clr
}

// Rotate implements vg.Canvas.
func (c *Canvas) Rotate(t float64) {
	c.Canvas.Rotate(t)
	c.top().m = c.top().m.Rotate(t)
}

// Translate implements vg.Canvas.
func (c *Canvas) Translate(pt vg.Point) {
	c.Canvas.Translate(pt)
	c.top().m = c.top().m.Translate(pt.X.Dots(c.DPI()), pt.Y.Dots(c.DPI()))
}

// Scale implements vg.Canvas.
func (c *Canvas) Scale(x, y float64) {
	c.Canvas.Scale(x, y)
	c.top().m = c.top().m.Scale(x, y)
}

// Push implements vg.Canvas.
func (c *Canvas) Push() {
	c.Canvas.Push()
	c.st = append(c.st, *c.top())
}

// Pop implements vg.Canvas.
func (c *Canvas) Pop() {
	c.Canvas.Pop()
	c.st = c.st[:len(c.st)-1]
}

// top returns the current graphics state.
func (c *Canvas) top() *gstate { return &c.st[len(c.st)-1] }

// FillString implements vg.Canvas: what vgimg's FillString draws (gg's DrawString of str at pt
// under the canvas's transform, y axis inverted), with each glyph composited by glyphOver.
func (c *Canvas) FillString(fnt font.Face, pt vg.Point, str string) {
	if fnt.Font.Size == 0 {
		return
	}
	dpi := c.DPI()
	img, ok := c.Image().(*image.RGBA)
	if !ok {
		c.Canvas.FillString(fnt, pt, str)
		return
	}
	st := c.top()
	// vgimg: Push, InvertY (Translate(0, height) then Scale(1, −1)), DrawString(str, x, h − y).
	m := st.m.Translate(0, float64(img.Bounds().Dy())).Scale(1, -1)
	face := fnt.FontFace(dpi)
	defer face.Close()
	_, h := c.Size()
	x, y := pt.X.Dots(dpi), h.Dots(dpi)-pt.Y.Dots(dpi)
	src := image.NewUniform(st.col)
	// gg's drawString (DrawStringAnchored with ax = ay = 0 leaves x and y as they are).
	dot := fixed.Point26_6{X: fixed.Int26_6(math.Round(x * 64)), Y: fixed.Int26_6(math.Round(y * 64))}
	prev := rune(-1)
	for _, r := range str {
		if prev >= 0 {
			dot.X += face.Kern(prev, r)
		}
		dr, mask, maskp, advance, ok := face.Glyph(dot, r)
		if !ok {
			continue
		}
		sr := dr.Sub(dr.Min)
		g := m.Translate(float64(dr.Min.X), float64(dr.Min.Y))
		s2d := f64.Aff3{g.XX, g.XY, g.X0, g.YX, g.YY, g.Y0}
		if a, ok := mask.(*image.Alpha); ok {
			glyphOver(img, s2d, st.col, sr, a, maskp)
		} else {
			draw.BiLinear.Transform(img, s2d, src, sr, draw.Over, &draw.Options{SrcMask: mask, SrcMaskP: maskp})
		}
		dot.X += advance
		prev = r
	}
}

// glyphOver composites the colour col, through the glyph mask at maskp, onto dst under the
// affine map s2d from the source rectangle sr, with the BiLinear kernel and operator Over:
// exactly draw.BiLinear.Transform(dst, s2d, image.NewUniform(col), sr, draw.Over,
// &draw.Options{SrcMask: mask, SrcMaskP: maskp}) (x/image/draw's Kernel.Transform and its
// transform_Image_Image_Over, operation for operation, with the same explicit float64
// roundings), reading col once and the mask and dst from their Pix slices.
func glyphOver(dst *image.RGBA, s2d f64.Aff3, col color.Color, sr image.Rectangle, mask *image.Alpha, maskp image.Point) {
	q := draw.BiLinear
	dr := transformRect(&s2d, &sr)
	adr := dst.Bounds().Intersect(dr)
	if adr.Empty() || sr.Empty() {
		return
	}
	d2s := invert(&s2d)
	bias := transformRect(&d2s, &adr).Min
	bias.X--
	bias.Y--
	d2s[2] -= float64(bias.X)
	d2s[5] -= float64(bias.Y)
	adr = adr.Sub(dr.Min)

	xscale := abs(d2s[0])
	if s := abs(d2s[1]); xscale < s {
		xscale = s
	}
	yscale := abs(d2s[3])
	if s := abs(d2s[4]); yscale < s {
		yscale = s
	}
	xa, ya := newKernelAxis(q, xscale), newKernelAxis(q, yscale)
	xWeights, yWeights := xa.w, ya.w

	cr, cg, cb, ca := col.RGBA()
	mb := mask.Bounds()
	for dy := int32(adr.Min.Y); dy < int32(adr.Max.Y); dy++ {
		dyf := float64(dr.Min.Y+int(dy)) + 0.5
		for dx := int32(adr.Min.X); dx < int32(adr.Max.X); dx++ {
			dxf := float64(dr.Min.X+int(dx)) + 0.5
			sx := float64(d2s[0]*dxf) + float64(d2s[1]*dyf) + d2s[2]
			sy := float64(d2s[3]*dxf) + float64(d2s[4]*dyf) + d2s[5]
			if !(image.Point{int(sx) + bias.X, int(sy) + bias.Y}).In(sr) {
				continue
			}
			ix, jx := xa.weights(q, sx, bias.X, sr.Min.X, sr.Max.X)
			iy, jy := ya.weights(q, sy, bias.Y, sr.Min.Y, sr.Max.Y)

			var pr, pg, pb, pa float64
			for ky := iy; ky < jy; ky++ {
				if yWeight := yWeights[ky-iy]; yWeight != 0 {
					for kx := ix; kx < jx; kx++ {
						if w := xWeights[kx-ix] * yWeight; w != 0 {
							var ma uint32 // mask.At(maskp.X+kx, maskp.Y+ky): 0 outside the mask
							if p := (image.Point{maskp.X + kx, maskp.Y + ky}); p.In(mb) {
								ma = uint32(mask.Pix[mask.PixOffset(p.X, p.Y)])
								ma |= ma << 8
							}
							pru := cr * ma / 0xffff
							pgu := cg * ma / 0xffff
							pbu := cb * ma / 0xffff
							pau := ca * ma / 0xffff
							pr += float64(float64(pru) * w)
							pg += float64(float64(pgu) * w)
							pb += float64(float64(pbu) * w)
							pa += float64(float64(pau) * w)
						}
					}
				}
			}
			if pr > pa {
				pr = pa
			}
			if pg > pa {
				pg = pa
			}
			if pb > pa {
				pb = pa
			}
			i := dst.PixOffset(dr.Min.X+int(dx), dr.Min.Y+int(dy))
			d := dst.Pix[i : i+4 : i+4]
			qr, qg, qb, qa := uint32(d[0])*0x101, uint32(d[1])*0x101, uint32(d[2])*0x101, uint32(d[3])*0x101
			pr0 := uint32(fffftou(pr))
			pg0 := uint32(fffftou(pg))
			pb0 := uint32(fffftou(pb))
			pa0 := uint32(fffftou(pa))
			pa1 := 0xffff - pa0
			d[0] = uint8(uint16(qr*pa1/0xffff+pr0) >> 8)
			d[1] = uint8(uint16(qg*pa1/0xffff+pg0) >> 8)
			d[2] = uint8(uint16(qb*pa1/0xffff+pb0) >> 8)
			d[3] = uint8(uint16(qa*pa1/0xffff+pa0) >> 8)
		}
	}
}

// abs, fffftou, invert and transformRect are x/image/draw's (scale.go), unexported there.

// kernelAxis is one axis of glyphOver's sampling: the kernel's half width and argument scale
// in source pixels (widened when the map shrinks along the axis) and the weights' buffer.
type kernelAxis struct {
	halfWidth, argScale float64
	w                   []float64
}

// newKernelAxis is the axis of kernel q for a map whose largest source step along it is scale.
func newKernelAxis(q *draw.Kernel, scale float64) kernelAxis {
	a := kernelAxis{halfWidth: q.Support, argScale: 1.0}
	if scale > 1 {
		a.halfWidth *= scale
		a.argScale = 1 / scale
	}
	a.w = make([]float64, 1+2*int(math.Ceil(a.halfWidth)))
	return a
}

// weights fills a.w[:j-i] with q's normalised weights of the source pixels [i, j) (clipped
// to [lo, hi)) that the sample at source coordinate s (before its bias) reads.
func (a kernelAxis) weights(q *draw.Kernel, s float64, bias, lo, hi int) (i, j int) {
	s += float64(bias)
	s -= 0.5
	i = int(math.Floor(s - a.halfWidth))
	if i < lo {
		i = lo
	}
	j = int(math.Ceil(s + a.halfWidth))
	if j > hi {
		j = hi
	}
	total := 0.0
	for k := i; k < j; k++ {
		w := 0.0
		if t := abs((s - float64(k)) * a.argScale); t < q.Support {
			w = q.At(t)
		}
		a.w[k-i] = w
		total += w
	}
	for k := range a.w[:j-i] {
		a.w[k] /= total
	}
	return i, j
}

func abs(f float64) float64 {
	if f < 0 {
		f = -f
	}
	return f
}

// fffftou converts the range [0.0, 65535.0] to [0, 0xffff].
func fffftou(f float64) uint16 {
	i := int32(f + 0.5)
	if i > 0xffff {
		return 0xffff
	}
	if i > 0 {
		return uint16(i)
	}
	return 0
}

// invert returns the inverse of m.
func invert(m *f64.Aff3) f64.Aff3 {
	m00 := +m[3*1+1]
	m01 := -m[3*0+1]
	m02 := +float64(m[3*1+2]*m[3*0+1]) - float64(m[3*1+1]*m[3*0+2])
	m10 := -m[3*1+0]
	m11 := +m[3*0+0]
	m12 := +float64(m[3*1+0]*m[3*0+2]) - float64(m[3*1+2]*m[3*0+0])
	det := float64(m00*m11) - float64(m10*m01)
	return f64.Aff3{m00 / det, m01 / det, m02 / det, m10 / det, m11 / det, m12 / det}
}

// transformRect returns the rectangle of destination pixels the source rectangle sr maps to.
func transformRect(s2d *f64.Aff3, sr *image.Rectangle) (dr image.Rectangle) {
	ps := [...]image.Point{
		{sr.Min.X, sr.Min.Y},
		{sr.Max.X, sr.Min.Y},
		{sr.Min.X, sr.Max.Y},
		{sr.Max.X, sr.Max.Y},
	}
	for i, p := range ps {
		sxf := float64(p.X)
		syf := float64(p.Y)
		dx := int(math.Floor(float64(s2d[0]*sxf) + float64(s2d[1]*syf) + s2d[2]))
		dy := int(math.Floor(float64(s2d[3]*sxf) + float64(s2d[4]*syf) + s2d[5]))
		// The +1 adjustments below are because an image.Rectangle is inclusive
		// on the low end but exclusive on the high end.
		if i == 0 {
			dr = image.Rectangle{Min: image.Point{dx + 0, dy + 0}, Max: image.Point{dx + 1, dy + 1}}
			continue
		}
		if dr.Min.X > dx {
			dr.Min.X = dx
		}
		dx++
		if dr.Max.X < dx {
			dr.Max.X = dx
		}
		if dr.Min.Y > dy {
			dr.Min.Y = dy
		}
		dy++
		if dr.Max.Y < dy {
			dr.Max.Y = dy
		}
	}
	return dr
}
