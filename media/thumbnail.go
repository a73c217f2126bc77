package media

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
)

// ThumbnailSize is the longest side of the thumbnails orchard keeps in
// checkpoints and shows in the terminal.
const ThumbnailSize = 256

// Thumbnail returns the picture upright, scaled to fit maxSide×maxSide with
// its aspect ratio kept (never enlarged), over black as the model sees
// transparency, encoded as PNG.
func (im *Image) Thumbnail(maxSide int) ([]byte, error) {
	w, h := thumbSize(im.Width, im.Height, maxSide)
	rgb, err := im.Resized(w, h)
	if err != nil {
		return nil, err
	}
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range w * h {
		copy(out.Pix[4*i:4*i+3], rgb[3*i:3*i+3])
		out.Pix[4*i+3] = 255
	}
	var b bytes.Buffer
	if err := png.Encode(&b, out); err != nil {
		return nil, fmt.Errorf("thumbnail of %s: %w", im.Info.Path, err)
	}
	return b.Bytes(), nil
}

// thumbSize fits w×h into maxSide×maxSide, keeping the aspect ratio and at
// least one pixel a side.
func thumbSize(w, h, maxSide int) (int, int) {
	if w <= maxSide && h <= maxSide {
		return w, h
	}
	if w >= h {
		return maxSide, max(1, (h*maxSide+w/2)/w)
	}
	return max(1, (w*maxSide+h/2)/h), maxSide
}
