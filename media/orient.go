package media

// EXIF orientation (tag 0x0112) says how the stored pixels must be turned to
// stand upright: 1 as stored, 2 mirrored left–right, 3 turned 180°, 4
// mirrored top–bottom, 5 transposed, 6 turned 90° clockwise, 7 transversed
// (transposed and turned 180°), 8 turned 90° counter-clockwise.

// orientSwapsAxes reports whether orientation o exchanges width and height.
func orientSwapsAxes(o int) bool { return o >= 5 && o <= 8 }

// orientSource maps an upright pixel (x, y) of a W'×H' picture to the stored
// pixel of a w×h image (w, h the stored size).
func orientSource(o, x, y, w, h int) (sx, sy int) {
	switch o {
	case 2:
		return w - 1 - x, y
	case 3:
		return w - 1 - x, h - 1 - y
	case 4:
		return x, h - 1 - y
	case 5:
		return y, x
	case 6:
		return y, h - 1 - x
	case 7:
		return w - 1 - y, h - 1 - x
	case 8:
		return w - 1 - y, x
	}
	return x, y
}

// orientRGB turns a packed w×h RGB picture upright; it returns the picture
// and its upright width and height. Orientation 1 returns rgb itself.
func orientRGB(o int, rgb []byte, w, h int) ([]byte, int, int) {
	if o < 2 || o > 8 {
		return rgb, w, h
	}
	ow, oh := w, h
	if orientSwapsAxes(o) {
		ow, oh = h, w
	}
	out := make([]byte, len(rgb))
	for y := range oh {
		for x := range ow {
			sx, sy := orientSource(o, x, y, w, h)
			copy(out[3*(y*ow+x):3*(y*ow+x)+3], rgb[3*(sy*w+sx):])
		}
	}
	return out, ow, oh
}
