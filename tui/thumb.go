package tui

import (
	"bytes"
	"image/color"
	"image/png"
	"strings"

	"charm.land/lipgloss/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/media"
)

// thumbCols and thumbRows size an image's thumbnail in the conversation:
// each cell is an upper half block whose foreground is one pixel and
// background the pixel below, so it needs colour, not a graphics protocol.
const (
	thumbCols = 16
	thumbRows = 6
	// maxThumbPixels bounds a thumbnail orchard will decode (its own are
	// far smaller).
	maxThumbPixels = 1 << 20
)

// thumbCache keeps the half-block lines of the last thumbnail drawn: a
// panel is redrawn every frame, and decoding its PNG each time took
// most of every redraw (BenchmarkCheckpointsPanelThumbnail).
type thumbCache struct {
	data  []byte
	cols  int
	lines []string
	done  bool
}

// get returns halfBlocks(data, cols), decoding only when they changed.
func (t *thumbCache) get(data []byte, cols int) []string {
	if !t.done || cols != t.cols || !bytes.Equal(data, t.data) {
		t.data, t.cols, t.lines, t.done = data, cols, halfBlocks(data, cols), true
	}
	return t.lines
}

// chips renders a message's attachments: one line each (name, size, pixels
// or seconds, soft tokens) and, for an image with a thumbnail, a small
// picture drawn in coloured half blocks.
func (c *conversation) chips(atts []engine.Attachment, w int) []string {
	var out []string
	for _, a := range atts {
		icon := "▣"
		if a.Kind == engine.MediaAudio {
			icon = "♪"
		}
		s := media.Summary{Kind: a.Kind, Name: a.Name, Bytes: a.Bytes, Width: a.Width, Height: a.Height, Seconds: a.Seconds, Tokens: a.Tokens()}
		text := s.String()
		if a.SHA256 == "" {
			text = a.Name + " · " + a.Kind + " · encoding…"
		}
		// The name and kind may come from a checkpoint imported from anywhere.
		out = append(out, c.st.Chip.Render(xansi.Truncate(icon+" "+safeLine(text), w, "…")))
		if ph := c.pics.placeholder(a); ph != nil && w >= thumbCols {
			out = append(out, ph...) // the terminal draws the picture over these cells
		} else if len(a.Thumbnail) > 0 && !c.st.NoColor {
			out = append(out, halfBlocks(a.Thumbnail, min(thumbCols, w))...)
		}
	}
	return out
}

// halfBlocks draws a PNG in cols×thumbRows cells of "▀", keeping its
// aspect ratio inside that box; nil when the bytes do not decode.
func halfBlocks(pngData []byte, cols int) []string {
	// A thumbnail may come from an imported checkpoint: a PNG header can
	// claim any size, so the pixels are decoded only when they are few.
	if cfg, err := png.DecodeConfig(bytes.NewReader(pngData)); err != nil || cfg.Width*cfg.Height > maxThumbPixels {
		return nil
	}
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil || cols < 2 {
		return nil
	}
	b := img.Bounds()
	if b.Dx() == 0 || b.Dy() == 0 {
		return nil
	}
	// A cell is about twice as tall as wide and holds two pixels stacked,
	// so pixels are square: fit the picture into cols × 2·rows pixels.
	pw, ph := cols, 2*thumbRows
	if b.Dx()*ph > b.Dy()*pw {
		ph = max(2, b.Dy()*pw/b.Dx())
	} else {
		pw = max(1, b.Dx()*ph/b.Dy())
	}
	ph += ph % 2
	at := func(x, y int) color.Color {
		// Average the source pixels under the target pixel (box filter).
		x0, x1 := b.Min.X+x*b.Dx()/pw, b.Min.X+(x+1)*b.Dx()/pw
		y0, y1 := b.Min.Y+y*b.Dy()/ph, b.Min.Y+(y+1)*b.Dy()/ph
		var r, g, bl, n uint32
		for yy := y0; yy < max(y1, y0+1); yy++ {
			for xx := x0; xx < max(x1, x0+1); xx++ {
				cr, cg, cb, _ := img.At(xx, yy).RGBA()
				r, g, bl, n = r+cr>>8, g+cg>>8, bl+cb>>8, n+1
			}
		}
		return color.RGBA{uint8(r / n), uint8(g / n), uint8(bl / n), 255}
	}
	var lines []string
	for y := 0; y < ph; y += 2 {
		var sb strings.Builder
		for x := range pw {
			sb.WriteString(lipgloss.NewStyle().Foreground(at(x, y)).Background(at(x, y+1)).Render("▀"))
		}
		lines = append(lines, sb.String())
	}
	return lines
}
