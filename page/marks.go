package page

import (
	"image"
	"image/color"
	"image/draw"
	"strconv"
)

// markColors are the box colours of a marked screenshot, chosen to stand out
// on light and dark pages and from each other.
var markColors = []color.RGBA{
	{230, 25, 75, 255},  // red
	{0, 130, 200, 255},  // blue
	{60, 180, 75, 255},  // green
	{245, 130, 48, 255}, // orange
	{145, 30, 180, 255}, // purple
	{0, 128, 128, 255},  // teal
	{240, 50, 230, 255}, // magenta
	{128, 0, 0, 255},    // maroon
}

// digitGlyphs are 5×7 bitmaps of 0-9; bit 4 is the left column.
var digitGlyphs = [10][7]uint8{
	{0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E},
	{0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E},
	{0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F},
	{0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E},
	{0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02},
	{0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E},
	{0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E},
	{0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08},
	{0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E},
	{0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C},
}

// drawMarks draws each element's box and index over src; scale converts CSS
// pixels to image pixels.
func drawMarks(src image.Image, els []Element, scale float64) *image.RGBA {
	b := src.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(dst, dst.Bounds(), src, b.Min, draw.Src)
	px := max(1, int(scale+0.5)) // line width and glyph pixel size
	for _, e := range els {
		if !e.InViewport {
			continue
		}
		c := markColors[(e.Index-1)%len(markColors)]
		r := image.Rect(
			int(e.Box.X*scale), int(e.Box.Y*scale),
			int((e.Box.X+e.Box.Width)*scale), int((e.Box.Y+e.Box.Height)*scale),
		).Intersect(dst.Bounds())
		if r.Empty() {
			continue
		}
		outline(dst, r, c, 2*px)
		label(dst, r, strconv.Itoa(e.Index), c, 2*px)
	}
	return dst
}

func outline(dst *image.RGBA, r image.Rectangle, c color.RGBA, w int) {
	u := image.NewUniform(c)
	for _, s := range []image.Rectangle{
		{r.Min, image.Pt(r.Max.X, r.Min.Y+w)},
		{image.Pt(r.Min.X, r.Max.Y-w), r.Max},
		{r.Min, image.Pt(r.Min.X+w, r.Max.Y)},
		{image.Pt(r.Max.X-w, r.Min.Y), r.Max},
	} {
		draw.Draw(dst, s.Intersect(r), u, image.Point{}, draw.Src)
	}
}

// label draws text in white on a tag of colour c at the top-left corner of
// r: above the box when there is room, inside it otherwise.
func label(dst *image.RGBA, r image.Rectangle, text string, c color.RGBA, px int) {
	pad := px
	w := len(text)*6*px - px + 2*pad
	h := 7*px + 2*pad
	x, y := r.Min.X, r.Min.Y-h
	if y < 0 {
		y = r.Min.Y
	}
	if x+w > dst.Bounds().Max.X {
		x = dst.Bounds().Max.X - w
	}
	tag := image.Rect(x, y, x+w, y+h).Intersect(dst.Bounds())
	draw.Draw(dst, tag, image.NewUniform(c), image.Point{}, draw.Src)
	white := image.NewUniform(color.White)
	for i, ch := range text {
		g := digitGlyphs[ch-'0']
		gx := x + pad + i*6*px
		for row := range 7 {
			for col := range 5 {
				if g[row]&(0x10>>col) == 0 {
					continue
				}
				p := image.Rect(gx+col*px, y+pad+row*px, gx+(col+1)*px, y+pad+(row+1)*px)
				draw.Draw(dst, p.Intersect(dst.Bounds()), white, image.Point{}, draw.Src)
			}
		}
	}
}
