// Package pngenc encodes figures as PNG cheaply. A figure is an opaque image that is mostly
// one flat colour, for which image/png spends most of its time choosing a filter for every
// row (it tries all five) and searching for long matches (zlib's default level): about 30 ms
// for an 11 × 6 inch figure at 96 dpi, more than the rest of a 1 000-episode run. Encode
// writes 8-bit RGB rows with filter type None, compressed at zlib's BestSpeed in two bands of
// rows at once, which on dprl's figures is 5–8 times faster on one core (twice that on two)
// and gives files of the same size (the flat runs that filters would turn into zeros are
// already runs of identical bytes). The pixels are exactly the image's: decoding the file
// gives the image back.
package pngenc

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"hash/adler32"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"sync"

	"git.sr.ht/~sbinet/gg"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
)

// signature is the PNG file signature.
const signature = "\x89PNG\r\n\x1a\n"

// maxDim bounds the width and height Encode accepts (PNG allows up to 2³¹ − 1; a figure is a
// few thousand pixels wide at most, and a row is buffered in memory).
const maxDim = 1 << 20

// Encode writes img to w as a PNG file. An opaque *image.RGBA (every alpha 0xff: a figure on
// its background) is written as 8-bit RGB with filter None at zlib.BestSpeed; any other image
// goes through image/png at BestSpeed (which keeps its alpha channel). It is an error if img
// is empty or wider or taller than 2²⁰ pixels.
func Encode(w io.Writer, img image.Image) error {
	b := img.Bounds()
	if b.Dx() <= 0 || b.Dy() <= 0 {
		return errors.New("pngenc: empty image")
	}
	if b.Dx() > maxDim || b.Dy() > maxDim {
		return errors.New("pngenc: image larger than 2^20 pixels on a side")
	}
	rgba, ok := img.(*image.RGBA)
	if !ok || !rgba.Opaque() {
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, img)
	}
	return encodeRGB(w, rgba)
}

// stripes is the number of bands of rows compressed concurrently (a figure's encoding then
// takes half the time on two cores). It is fixed, so the file is the same bytes on every
// machine whatever its number of cores.
const stripes = 2

// encodeRGB writes the opaque image m as one IHDR chunk, its zlib stream in IDAT chunks and
// the IEND chunk. The rows are compressed in stripes bands, concurrently, each band a raw
// deflate stream of its own (all but the last ended by a sync flush, so their concatenation
// is one valid deflate stream), behind one zlib header and before the Adler-32 of all rows.
func encodeRGB(w io.Writer, m *image.RGBA) error {
	b := m.Bounds()
	width, height := b.Dx(), b.Dy()
	type band struct {
		z     bytes.Buffer
		adler uint32
		n     int // uncompressed bytes
		err   error
	}
	bands := make([]band, stripes)
	compress := func(i int) {
		bd := &bands[i]
		y0, y1 := b.Min.Y+height*i/stripes, b.Min.Y+height*(i+1)/stripes
		fw, err := flate.NewWriter(&bd.z, flate.BestSpeed)
		if err != nil {
			bd.err = err
			return
		}
		sum := adler32.New()
		row := make([]byte, 1+3*width) // row[0] = 0: filter type None
		for y := y0; y < y1; y++ {
			pix := m.Pix[m.PixOffset(b.Min.X, y):]
			for x, j := 0, 1; x < width; x, j = x+1, j+3 {
				row[j], row[j+1], row[j+2] = pix[4*x], pix[4*x+1], pix[4*x+2]
			}
			fw.Write(row) // writes to a bytes.Buffer cannot fail
			sum.Write(row)
			bd.n += len(row)
		}
		if i < stripes-1 {
			bd.err = fw.Flush()
		} else {
			bd.err = fw.Close()
		}
		bd.adler = sum.Sum32()
	}
	var wg sync.WaitGroup
	for i := 1; i < stripes; i++ {
		wg.Go(func() { compress(i) })
	}
	compress(0)
	wg.Wait()

	bw := bufio.NewWriter(w)
	if _, err := io.WriteString(bw, signature); err != nil {
		return err
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8] = 8 // bit depth
	ihdr[9] = 2 // colour type: RGB; compression, filter method and interlace stay 0
	if err := writeChunk(bw, "IHDR", ihdr[:]); err != nil {
		return err
	}
	idat := &chunkWriter{w: bw, typ: "IDAT"}
	// zlib header: deflate with a 32 KiB window (0x78), the fastest level (0x01); 0x7801 is a
	// multiple of 31 as the format requires.
	if _, err := idat.Write([]byte{0x78, 0x01}); err != nil {
		return err
	}
	adler := uint32(1) // Adler-32 of nothing
	for i := range bands {
		if bands[i].err != nil {
			return bands[i].err
		}
		if _, err := idat.Write(bands[i].z.Bytes()); err != nil {
			return err
		}
		adler = adler32Combine(adler, bands[i].adler, bands[i].n)
	}
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], adler)
	if _, err := idat.Write(sum[:]); err != nil {
		return err
	}
	if err := idat.flush(); err != nil {
		return err
	}
	if err := writeChunk(bw, "IEND", nil); err != nil {
		return err
	}
	return bw.Flush()
}

// adler32Combine returns the Adler-32 of the concatenation of two byte strings from their
// checksums a and b and the length n of the second (zlib's adler32_combine).
func adler32Combine(a, b uint32, n int) uint32 {
	const base = 65521
	rem := uint32(n % base)
	sum1 := a & 0xffff
	sum2 := rem * sum1 % base
	sum1 += (b & 0xffff) + base - 1
	sum2 += (a >> 16) + (b >> 16) + base - rem
	if sum1 >= base {
		sum1 -= base
	}
	if sum1 >= base {
		sum1 -= base
	}
	if sum2 >= 2*base {
		sum2 -= 2 * base
	}
	if sum2 >= base {
		sum2 -= base
	}
	return sum1 | sum2<<16
}

// writeChunk writes one chunk: length, type, data, CRC-32 of type and data.
func writeChunk(w io.Writer, typ string, data []byte) error {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc.Sum32())
	for _, p := range [][]byte{n[:], []byte(typ), data, sum[:]} {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// chunkSize is the largest IDAT chunk chunkWriter writes.
const chunkSize = 1 << 16

// chunkWriter splits the compressed stream into chunks of its type of at most chunkSize bytes.
type chunkWriter struct {
	w   io.Writer
	typ string
	buf []byte
}

// Write implements io.Writer.
func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), chunkSize-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		if len(c.buf) == chunkSize {
			if err := c.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// flush writes the buffered bytes as one chunk (nothing if there are none).
func (c *chunkWriter) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	err := writeChunk(c.w, c.typ, c.buf)
	c.buf = c.buf[:0]
	return err
}

// Canvas is a vgimg canvas (white background, vgimg.DefaultDPI) whose WriteTo writes the
// image with Encode and whose FillString composites glyphs without x/image/draw's per-pixel
// interface calls (glyph.go): the PNG canvas of draw.NewFormattedCanvas(w, h, "png"), the same
// pixels, faster.
type Canvas struct {
	*vgimg.Canvas
	st []gstate // the context's matrix and colour, as vgimg sets them (never empty)
}

// NewCanvas returns a w × h canvas. When w and h are whole numbers of pixels (as every
// figure's size in inches is), the canvas draws straight onto its image: vgimg.New would
// allocate the image and then a copy of it for its graphics context.
func NewCanvas(w, h vg.Length) *Canvas {
	const dpi = vgimg.DefaultDPI
	pw, ph := float64(w/vg.Inch)*dpi, float64(h/vg.Inch)*dpi
	var vc *vgimg.Canvas
	if pw != math.Trunc(pw) || ph != math.Trunc(ph) || pw < 1 || ph < 1 || pw > maxDim || ph > maxDim {
		vc = vgimg.New(w, h)
	} else {
		img := image.NewRGBA(image.Rect(0, 0, int(pw), int(ph)))
		ctx := gg.NewContextForRGBA(img)
		ctx.SetLineCapButt() // as vgimg.New sets up its own context
		ctx.InvertY()
		vc = vgimg.NewWith(vgimg.UseImageWithContext(img, ctx), vgimg.UseDPI(dpi))
	}
	// Both contexts start inverted (InvertY: Translate(0, height), Scale(1, −1)) and black
	// (vg.Initialize).
	height := float64(vc.Image().Bounds().Dy())
	return &Canvas{Canvas: vc, st: []gstate{{m: gg.Identity().Translate(0, height).Scale(1, -1), col: color.Black}}}
}

// WriteTo implements io.WriterTo.
func (c *Canvas) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	err := Encode(cw, c.Image())
	return cw.n, err
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

// Write implements io.Writer.
func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
