package media

import (
	"fmt"
	"strings"
)

// ProbeBytes is how much of a file's start Probe reads.
const ProbeBytes = 512

// Probe judges a file by its first bytes as the decoders will, without
// decoding it: whether it is a picture (kind "image") or a clip ("audio")
// that o's decoders read. A chat checks an attachment with it at once,
// not when the message is sent. It returns the format ("png", "wav";
// "system" for one only the platform's decoder may read, which decides
// when it decodes), or an error wrapping ErrUnsupportedFormat that says
// what orchard reads, or what the file is when it holds the other kind.
// Limits (size, pixels, length) are the decoders' to check.
func Probe(kind, name string, head []byte, o Options) (string, error) {
	if len(head) == 0 {
		return "", fmt.Errorf("%s %s is empty", kind, name)
	}
	img, aud := sniffImage(head), sniffAudio(head)
	_, goImage := imageCodecFor(img)
	switch kind {
	case "image":
		switch {
		case goImage:
			return img, nil
		case aud != "":
			return "", fmt.Errorf("%s is %s audio, not a picture: %w", name, strings.ToUpper(aud), ErrUnsupportedFormat)
		case o.Images != nil:
			return "system", nil
		case img == "heic" || img == "avif":
			return "", fmt.Errorf("image %s: %w: %s images are read only on macOS (through ImageIO); convert it to JPEG or PNG", name, ErrUnsupportedFormat, img)
		}
		return "", fmt.Errorf("image %s: %w: orchard reads PNG, JPEG, GIF, WebP, BMP and TIFF (HEIC on macOS)", name, ErrUnsupportedFormat)
	case "audio":
		switch {
		case aud != "":
			return aud, nil
		case goImage || img == "heic" || img == "avif":
			return "", fmt.Errorf("%s is a %s picture, not audio: %w", name, strings.ToUpper(img), ErrUnsupportedFormat)
		case o.Audio != nil:
			return "system", nil
		}
		return "", fmt.Errorf("audio %s: %w: orchard reads WAV, FLAC and MP3 here (m4a, caf and other formats only on macOS); convert it, e.g. to WAV", name, ErrUnsupportedFormat)
	}
	return "", fmt.Errorf("%s: unknown kind of media %q", name, kind)
}
