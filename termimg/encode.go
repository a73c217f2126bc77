package termimg

import (
	"bytes"
	"fmt"
	"image/png"
)

// Encode draws a PNG picture (a media thumbnail) with protocol p; sixel
// decodes it and dithers. None gives "".
func Encode(p Protocol, name string, pngData []byte, o Options) (string, error) {
	switch p {
	case Kitty:
		return KittyImage(pngData, o), nil
	case ITerm2:
		return ITerm2Image(name, pngData, o), nil
	case Sixel:
		img, err := png.Decode(bytes.NewReader(pngData))
		if err != nil {
			return "", fmt.Errorf("thumbnail of %s: %w", name, err)
		}
		return SixelImage(img, true, o), nil
	}
	return "", nil
}
