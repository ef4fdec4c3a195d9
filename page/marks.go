package page

import (
	"image"
	"image/color"
	"image/draw"
	"math"
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
	px := max(1, int(scale+0.5))    // line width
	u := max(2, int(2.5*scale+0.5)) // a glyph pixel of the labels
	// Every box first, then every label, so that no box crosses a label.
	type mark struct {
		r image.Rectangle
		c color.RGBA
		n int
	}
	var marks []mark
	for _, e := range els {
		if !e.InViewport {
			continue
		}
		r := image.Rect(
			int(e.Box.X*scale), int(e.Box.Y*scale),
			int((e.Box.X+e.Box.Width)*scale), int((e.Box.Y+e.Box.Height)*scale),
		).Intersect(dst.Bounds())
		if r.Empty() {
			continue
		}
		m := mark{r, markColors[(e.Index-1)%len(markColors)], e.Index}
		outline(dst, m.r, m.c, 2*px)
		marks = append(marks, m)
	}
	for _, m := range marks {
		label(dst, m.r, strconv.Itoa(m.n), m.c, u)
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

// label draws text on a tag at the top-left corner of r (above the box when
// there is room, inside it otherwise) and returns the tag. Labels are read
// by people and by vision models on any page, so: digits 7u pixels tall
// (21 at scale 1), white on a darkening of the box colour with at least
// 4.5:1 contrast, and a white then black ring so the tag stands out from
// light, dark and same-coloured backgrounds alike.
func label(dst *image.RGBA, r image.Rectangle, text string, c color.RGBA, u int) image.Rectangle {
	const ring = 1 // each ring's width, in image pixels
	pad := u
	w := len(text)*6*u - u + 2*pad + 4*ring
	h := 7*u + 2*pad + 4*ring
	x, y := r.Min.X, r.Min.Y-h
	if y < 0 {
		y = r.Min.Y
	}
	if x+w > dst.Bounds().Max.X {
		x = dst.Bounds().Max.X - w
	}
	tag := image.Rect(x, y, x+w, y+h).Intersect(dst.Bounds())
	draw.Draw(dst, tag, image.NewUniform(color.Black), image.Point{}, draw.Src)
	draw.Draw(dst, tag.Inset(ring), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(dst, tag.Inset(2*ring), image.NewUniform(labelFill(c)), image.Point{}, draw.Src)
	white := image.NewUniform(color.White)
	x, y = x+2*ring+pad, y+2*ring+pad
	for i, ch := range text {
		g := digitGlyphs[ch-'0']
		gx := x + i*6*u
		for row := range 7 {
			for col := range 5 {
				if g[row]&(0x10>>col) == 0 {
					continue
				}
				p := image.Rect(gx+col*u, y+row*u, gx+(col+1)*u, y+(row+1)*u)
				draw.Draw(dst, p.Intersect(dst.Bounds()), white, image.Point{}, draw.Src)
			}
		}
	}
	return tag
}

// labelFill darkens c until white text on it has 4.5:1 contrast (WCAG AA).
func labelFill(c color.RGBA) color.RGBA {
	for luminance(c) > 0.18 {
		c = color.RGBA{uint8(int(c.R) * 7 / 8), uint8(int(c.G) * 7 / 8), uint8(int(c.B) * 7 / 8), 255}
	}
	return c
}

// luminance is WCAG's relative luminance of c.
func luminance(c color.RGBA) float64 {
	lin := func(v uint8) float64 {
		f := float64(v) / 255
		if f <= 0.03928 {
			return f / 12.92
		}
		return math.Pow((f+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.R) + 0.7152*lin(c.G) + 0.0722*lin(c.B)
}

// contrast is WCAG's contrast ratio of a and b, 1 to 21.
func contrast(a, b color.RGBA) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}
