package pngenc

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/image/draw"
	"golang.org/x/image/math/f64"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	vgdraw "gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// TestGlyphOverMatchesTransform: glyphOver writes exactly the pixels of
// draw.BiLinear.Transform with a uniform source and an alpha mask, over random destinations,
// masks (offset, partly outside the source rectangle), colours (opaque and translucent) and
// maps: fractional translations (text at any position), quarter turns (rotated labels),
// arbitrary rotations, scalings up and down, and glyphs cut by the destination's edges.
func TestGlyphOverMatchesTransform(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 400 {
		dst := image.NewRGBA(image.Rect(0, 0, 40, 30))
		for j := range dst.Pix {
			dst.Pix[j] = uint8(r.Uint32())
		}
		mw, mh := 1+r.IntN(12), 1+r.IntN(14)
		mask := image.NewAlpha(image.Rect(0, 0, mw, mh).Add(image.Pt(r.IntN(5)-2, r.IntN(5)-2)))
		for j := range mask.Pix {
			mask.Pix[j] = uint8(r.Uint32())
		}
		maskp := image.Pt(r.IntN(5)-2, r.IntN(5)-2)
		sr := image.Rect(0, 0, mw, mh)
		var col color.Color = color.RGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 0xff}
		if i%3 == 0 {
			a := uint8(r.IntN(256))
			col = color.RGBA{a / 2, a / 3, a, a}
		}
		tx, ty := r.Float64()*50-5, r.Float64()*40-5
		var s2d f64.Aff3
		switch i % 5 {
		case 0, 1: // translation, as every unrotated label
			s2d = f64.Aff3{1, 0, tx, 0, 1, ty}
		case 2: // a quarter turn, as the y axis's label
			s2d = f64.Aff3{0, -1, tx, 1, 0, ty}
		case 3:
			a := r.Float64() * 2 * math.Pi
			s2d = f64.Aff3{math.Cos(a), -math.Sin(a), tx, math.Sin(a), math.Cos(a), ty}
		case 4:
			sx, sy := 0.3+r.Float64()*3, 0.3+r.Float64()*3
			s2d = f64.Aff3{sx, 0, tx, 0, sy, ty}
		}
		want := image.NewRGBA(dst.Bounds())
		copy(want.Pix, dst.Pix)
		draw.BiLinear.Transform(want, s2d, image.NewUniform(col), sr, draw.Over, &draw.Options{SrcMask: mask, SrcMaskP: maskp})
		glyphOver(dst, s2d, col, sr, mask, maskp)
		for j := range dst.Pix {
			if dst.Pix[j] != want.Pix[j] {
				t.Fatalf("case %d (map %v, colour %v, mask %v at %v): pixel byte %d = %d, Transform wrote %d", i, s2d, col, mask.Bounds(), maskp, j, dst.Pix[j], want.Pix[j])
			}
		}
	}
}

// TestCanvasTextMatchesVgimg: text drawn on the canvas — plain, translucent, rotated,
// translated, scaled, inside nested Push/Pop — has the pixels vgimg's own canvas gives it.
func TestCanvasTextMatchesVgimg(t *testing.T) {
	fnt := font.From(plot.DefaultFont, vg.Points(11))
	ff := font.DefaultCache.Lookup(fnt, fnt.Size)
	drawing := func(c vgdraw.Canvas) {
		sty := vgdraw.TextStyle{Color: color.Black, Font: fnt, Handler: plot.DefaultTextHandler}
		c.FillText(sty, vg.Point{X: 10.3, Y: 20.7}, "cumulative regret 0.25 ε=1")
		sty.Color = color.NRGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0x80}
		c.FillText(sty, vg.Point{X: 40, Y: 50.2}, "translucent ± 95% CI")
		sty.Rotation = math.Pi / 2
		sty.Color = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
		c.FillText(sty, vg.Point{X: 15, Y: 30}, "rotated label")
		sty.Rotation = 0.3
		c.FillText(sty, vg.Point{X: 80, Y: 10}, "tilted")
		c.Push()
		c.Translate(vg.Point{X: 3.3, Y: 4.4})
		c.Scale(1.5, 0.8)
		c.Push()
		c.SetColor(color.RGBA{G: 0x80, A: 0xff})
		c.FillString(ff, vg.Point{X: 20, Y: 60}, "scaled")
		c.Pop()
		c.FillString(ff, vg.Point{X: 20, Y: 70}, "after pop")
		c.Pop()
		c.FillString(ff, vg.Point{X: 100, Y: 70}, "back")
	}
	for _, size := range []struct{ w, h vg.Length }{{3 * vg.Inch, 1.5 * vg.Inch}, {150.3, 80.1}} {
		got, want := NewCanvas(size.w, size.h), vgimg.New(size.w, size.h)
		drawing(vgdraw.New(got))
		drawing(vgdraw.New(want))
		if !samePixels(got.Image(), want.Image()) {
			t.Errorf("%v × %v: text pixels differ from vgimg's canvas", size.w, size.h)
		}
		white := 0
		img := got.Image().(*image.RGBA)
		for i := 0; i < len(img.Pix); i += 4 {
			if img.Pix[i] == 0xff && img.Pix[i+1] == 0xff && img.Pix[i+2] == 0xff {
				white++
			}
		}
		if white == len(img.Pix)/4 {
			t.Errorf("%v × %v: nothing drawn", size.w, size.h)
		}
	}
}
