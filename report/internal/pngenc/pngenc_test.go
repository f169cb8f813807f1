package pngenc

import (
	"bytes"
	"errors"
	"hash/adler32"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// opaqueImage returns a w × h opaque image at origin (x0, y0): a white background with a
// few flat rectangles and, when noisy, random pixels (which compress badly, so the
// compressed stream spans several IDAT chunks).
func opaqueImage(x0, y0, w, h int, noisy bool) *image.RGBA {
	m := image.NewRGBA(image.Rect(x0, y0, x0+w, y0+h))
	r := rand.New(rand.NewPCG(1, 2))
	for y := y0; y < y0+h; y++ {
		for x := x0; x < x0+w; x++ {
			c := color.RGBA{0xff, 0xff, 0xff, 0xff}
			switch {
			case noisy:
				c = color.RGBA{uint8(r.Uint32()), uint8(r.Uint32()), uint8(r.Uint32()), 0xff}
			case (x-x0)%17 < 5:
				c = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
			case (y-y0)%11 < 2:
				c = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
			}
			m.SetRGBA(x, y, c)
		}
	}
	return m
}

// samePixels reports whether a and b have the same bounds size and the same colour at
// every pixel (compared in 16-bit RGBA, offset by their origins).
func samePixels(a, b image.Image) bool {
	ba, bb := a.Bounds(), b.Bounds()
	if ba.Dx() != bb.Dx() || ba.Dy() != bb.Dy() {
		return false
	}
	for y := 0; y < ba.Dy(); y++ {
		for x := 0; x < ba.Dx(); x++ {
			r1, g1, b1, a1 := a.At(ba.Min.X+x, ba.Min.Y+y).RGBA()
			r2, g2, b2, a2 := b.At(bb.Min.X+x, bb.Min.Y+y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				return false
			}
		}
	}
	return true
}

// TestEncodeRoundTrip: decoding what Encode wrote gives the image's pixels back, for opaque
// images (the fast path: RGB, filter None), for a sub-image whose origin is not (0, 0) and
// whose stride is wider than its rows, and for an image whose compressed data span several
// IDAT chunks; images the fast path does not take (translucent pixels, another image type)
// decode to what image/png's own encoding decodes to (premultiplied translucent pixels do not
// survive PNG's non-premultiplied storage exactly).
func TestEncodeRoundTrip(t *testing.T) {
	translucent := opaqueImage(0, 0, 40, 30, false)
	translucent.SetRGBA(3, 4, color.RGBA{0x10, 0x20, 0x30, 0x80})
	nrgba := image.NewNRGBA(image.Rect(0, 0, 20, 10))
	for i := range nrgba.Pix {
		nrgba.Pix[i] = uint8(i * 7)
	}
	big := opaqueImage(0, 0, 300, 200, true) // 180 kB of noise: three IDAT chunks
	tests := []struct {
		name     string
		img      image.Image
		fastPath bool // written as RGB (colour type 2)
	}{
		{"figure-like", opaqueImage(0, 0, 120, 80, false), true},
		{"one pixel", opaqueImage(0, 0, 1, 1, false), true},
		{"offset origin", opaqueImage(7, -3, 50, 20, false), true},
		{"sub-image", opaqueImage(0, 0, 90, 60, false).SubImage(image.Rect(10, 5, 70, 45)), true},
		{"several IDAT chunks", big, true},
		{"translucent pixel", translucent, false},
		{"NRGBA", nrgba, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Encode(&buf, tc.img); err != nil {
				t.Fatal(err)
			}
			data := buf.Bytes()
			if got := data[8+8+9] == 2; got != tc.fastPath { // IHDR colour type
				t.Errorf("colour type %d: fast path %v, want %v", data[8+8+9], got, tc.fastPath)
			}
			got, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			want := tc.img
			if !tc.fastPath {
				var ref bytes.Buffer
				if err := png.Encode(&ref, tc.img); err != nil {
					t.Fatal(err)
				}
				if want, err = png.Decode(&ref); err != nil {
					t.Fatal(err)
				}
			}
			if !samePixels(want, got) {
				t.Error("decoded pixels differ from the image")
			}
		})
	}
	var buf bytes.Buffer
	if err := Encode(&buf, big); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(buf.Bytes(), []byte("IDAT")); n < 2 {
		t.Errorf("%d IDAT chunks for %d bytes, want several", n, buf.Len())
	}
}

// TestEncodeErrors: an empty image is refused, and a failing writer's error is returned.
func TestEncodeErrors(t *testing.T) {
	if err := Encode(&bytes.Buffer{}, image.NewRGBA(image.Rect(0, 0, 0, 5))); err == nil {
		t.Error("empty image: no error")
	}
	boom := errors.New("boom")
	for _, limit := range []int{0, 10, 40, 200} {
		if err := Encode(&failWriter{limit: limit, err: boom}, opaqueImage(0, 0, 64, 64, true)); !errors.Is(err, boom) {
			t.Errorf("writer failing after %d bytes: err = %v, want %v", limit, err, boom)
		}
	}
}

// failWriter accepts limit bytes and then fails with err.
type failWriter struct {
	limit, n int
	err      error
}

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n+len(p) > f.limit {
		return 0, f.err
	}
	f.n += len(p)
	return len(p), nil
}

// TestCanvas: the canvas starts white, what is drawn on it is in the file, and WriteTo counts
// the bytes it wrote.
func TestCanvas(t *testing.T) {
	c := NewCanvas(2*vg.Inch, 1*vg.Inch)
	dc := draw.New(c)
	dc.SetColor(color.RGBA{0xd6, 0x27, 0x28, 0xff})
	dc.Fill(vg.Rectangle{Min: vg.Point{X: 0, Y: 0}, Max: vg.Point{X: vg.Inch, Y: vg.Inch}}.Path())
	var buf bytes.Buffer
	n, err := c.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Errorf("WriteTo returned %d, wrote %d bytes", n, buf.Len())
	}
	img, err := png.Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !samePixels(c.Image(), img) {
		t.Error("decoded pixels differ from the canvas")
	}
	b := img.Bounds()
	if r, g, bl, _ := img.At(b.Max.X-2, b.Min.Y+2).RGBA(); r>>8 != 0xff || g>>8 != 0xff || bl>>8 != 0xff {
		t.Errorf("right half not white: %x %x %x", r>>8, g>>8, bl>>8)
	}
	if r, g, bl, _ := img.At(b.Min.X+2, b.Max.Y-2).RGBA(); r>>8 != 0xd6 || g>>8 != 0x27 || bl>>8 != 0x28 {
		t.Errorf("left half not the fill colour: %x %x %x", r>>8, g>>8, bl>>8)
	}
}

// TestNewCanvasMatchesVgimg: a canvas of whole pixels (which draws straight onto its image)
// and vgimg.New's canvas give the same pixels for the same drawing — strokes with butt caps,
// the y axis pointing up, fills — and a size of fractional pixels falls back to vgimg.New.
func TestNewCanvasMatchesVgimg(t *testing.T) {
	drawing := func(c vg.CanvasSizer) {
		dc := draw.New(c)
		dc.SetColor(color.RGBA{0x2c, 0xa0, 0x2c, 0xff})
		dc.Fill(vg.Rectangle{Min: vg.Point{X: 10, Y: 5}, Max: vg.Point{X: 60, Y: 20}}.Path())
		var p vg.Path
		p.Move(vg.Point{X: 5, Y: 5})
		p.Line(vg.Point{X: 100, Y: 60})
		p.Line(vg.Point{X: 130, Y: 10})
		dc.SetColor(color.RGBA{0x1f, 0x77, 0xb4, 0xff})
		dc.SetLineWidth(6)
		dc.Stroke(p)
	}
	for _, size := range []struct{ w, h vg.Length }{{2 * vg.Inch, 1 * vg.Inch}, {11 * vg.Inch, 6 * vg.Inch}, {100.3, 51.7}} {
		got, want := NewCanvas(size.w, size.h), vgimg.New(size.w, size.h)
		drawing(got)
		drawing(want)
		if !samePixels(got.Image(), want.Image()) {
			t.Errorf("%v × %v: pixels differ from vgimg.New's canvas", size.w, size.h)
		}
		if gw, gh := got.Size(); gw != size.w || gh != size.h {
			t.Errorf("%v × %v: canvas size %v × %v", size.w, size.h, gw, gh)
		}
	}
}

// TestAdler32Combine: the combined checksum of two pieces is the checksum of their
// concatenation, for empty pieces, pieces longer than the modulus 65521 and bytes that make
// the sums wrap.
func TestAdler32Combine(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 300_000)
	for i := range data {
		data[i] = uint8(r.Uint32())
	}
	ff := bytes.Repeat([]byte{0xff}, 200_000)
	for _, tc := range []struct {
		name string
		b    []byte
		cut  int
	}{
		{"both empty", nil, 0},
		{"first empty", data[:10], 0},
		{"second empty", data[:10], 10},
		{"short", data[:100], 37},
		{"second over the modulus", data, 1000},
		{"first over the modulus", data, 250_000},
		{"0xff", ff, 123_457},
	} {
		a, b := adler32.Checksum(tc.b[:tc.cut]), adler32.Checksum(tc.b[tc.cut:])
		if got, want := adler32Combine(a, b, len(tc.b)-tc.cut), adler32.Checksum(tc.b); got != want {
			t.Errorf("%s: combined %#08x, want %#08x", tc.name, got, want)
		}
	}
}
