package media

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
	"golang.org/x/image/webp"
)

// Image is a picture read from a file. Its pixels stay as stored; the EXIF
// orientation is applied when it is resized (Patches, Thumbnail), which is
// cheaper than turning the full-size picture and, since both axes are
// resized independently, gives the same result.
//
// A JPEG is decoded when it is first resized, at the smallest DCT scale
// (1/8, 1/4, 1/2 or full) that still covers the size asked for, and kept;
// a later, larger size decodes again. So a scan error in a JPEG surfaces
// from Patches or Thumbnail. Methods are not safe for concurrent use.
type Image struct {
	Info        FileInfo
	Format      string // "png", "jpeg", "gif", "webp", "bmp", "tiff", or the platform decoder's
	Width       int    // upright width in pixels
	Height      int    // upright height in pixels
	Orientation int    // EXIF orientation applied, 1–8 (1: as stored)

	src      image.Image // decoded pixels, as stored
	srcScale int         // src is 1/srcScale of the stored size (JPEG), else 1
	jpeg     []byte      // a JPEG's bytes until decoded at full size
	w, h     int         // stored size
	opts     Options     // the limits a later full decode is held to
}

type imageCodec struct {
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}

// imageCodecFor returns the pure-Go decoder of a format, called directly
// rather than through image.Decode's global registry, and guarded. GIF
// decodes the first frame.
func imageCodecFor(format string) (imageCodec, bool) {
	var c imageCodec
	switch format {
	case "png":
		c = imageCodec{png.DecodeConfig, png.Decode}
	case "jpeg":
		c = imageCodec{jpeg.DecodeConfig, jpeg.Decode}
	case "gif":
		c = imageCodec{gif.DecodeConfig, gif.Decode}
	case "webp":
		c = imageCodec{webp.DecodeConfig, webp.Decode}
	case "bmp":
		c = imageCodec{bmp.DecodeConfig, bmp.Decode}
	case "tiff":
		c = imageCodec{tiff.DecodeConfig, tiff.Decode}
	default:
		return imageCodec{}, false
	}
	return guarded(format, c), true
}

// LoadImage reads an image file: PNG, JPEG, GIF (first frame), WebP, BMP or
// TIFF, and on macOS whatever o.Images reads (HEIC). The header is checked
// against o's pixel limits before the pixels are decoded, so a small file
// that claims a huge picture (a decompression bomb) is refused cheaply.
//
// The EXIF orientation of JPEG, PNG, WebP and TIFF files is applied, so a
// phone photo stands upright as every viewer shows it. This deliberately
// differs from the Swift app, whose CGImageSourceCreateImageAtIndex call
// ignores the orientation and encodes the stored pixels (multimodal.md §6
// item 2). Embedded colour profiles are not applied: pixels are taken as
// sRGB.
func LoadImage(path string, o Options) (*Image, error) {
	src, err := ReadSource(path, o)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", path, err)
	}
	return DecodeImage(src, o)
}

// DecodeImage reads an image from its bytes, as LoadImage does from a
// file; src.Info.Path names it in messages.
func DecodeImage(src Source, o Options) (*Image, error) {
	path, data := src.Info.Path, src.Data
	if err := src.checkSize(o); err != nil {
		return nil, fmt.Errorf("image %w", err)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("image %s is empty", path)
	}
	im := &Image{Info: src.Info, Orientation: 1}
	format := sniffImage(data)
	codec, ok := imageCodecFor(format)
	switch {
	case ok:
		cfg, err := codec.config(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("image %s: %s header: %w", path, format, err)
		}
		if err := checkPixels(path, cfg.Width, cfg.Height, o); err != nil {
			return nil, err
		}
		im.Orientation = exifOrientation(format, data)
		if format == "jpeg" {
			im.jpeg, im.w, im.h, im.opts = data, cfg.Width, cfg.Height, o
			// A progressive JPEG is decoded whole (the scaled decoder
			// reads sequential ones), so its cost is known now.
			if l, ok := readJPEGLayout(data); ok && l.progressive {
				if err := checkDecode(path, format, data, cfg, o); err != nil {
					return nil, err
				}
			}
			break
		}
		if err := checkDecode(path, format, data, cfg, o); err != nil {
			return nil, err
		}
		im.src, err = codec.decode(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("image %s: %s: %w", path, format, err)
		}
	case o.Images != nil:
		var err error
		im.src, err = o.Images.DecodeImage(path, data, o.maxPixels())
		if errors.Is(err, ErrUnsupportedFormat) {
			return nil, fmt.Errorf("image %s: %w: not PNG, JPEG, GIF, WebP, BMP, TIFF or a format the system decoder reads", path, ErrUnsupportedFormat)
		}
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", path, err)
		}
		format = "system"
		if f := sniffISOBMFF(data); f != "" {
			format = f
		}
	case format == "heic" || format == "avif":
		return nil, fmt.Errorf("image %s: %w: %s images are read only on macOS (through ImageIO); convert it to JPEG or PNG", path, ErrUnsupportedFormat, format)
	default:
		return nil, fmt.Errorf("image %s: %w: orchard reads PNG, JPEG, GIF, WebP, BMP and TIFF (HEIC on macOS)", path, ErrUnsupportedFormat)
	}
	if im.src != nil {
		b := im.src.Bounds()
		if b.Empty() {
			return nil, fmt.Errorf("image %s has no pixels", path)
		}
		if err := checkPixels(path, b.Dx(), b.Dy(), o); err != nil {
			return nil, err
		}
		im.w, im.h, im.srcScale = b.Dx(), b.Dy(), 1
	}
	im.Format = format
	im.Width, im.Height = im.w, im.h
	if orientSwapsAxes(im.Orientation) {
		im.Width, im.Height = im.Height, im.Width
	}
	return im, nil
}

// checkPixels refuses a picture over the limits.
func checkPixels(path string, w, h int, o Options) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("image %s declares %d×%d pixels", path, w, h)
	}
	if w > o.maxSide() || h > o.maxSide() || int64(w)*int64(h) > int64(o.maxPixels()) {
		option := "MaxPixels"
		if int64(w)*int64(h) <= int64(o.maxPixels()) {
			option = "MaxSide"
		}
		return &LimitError{Option: option, Err: fmt.Errorf("image %s is %d×%d (%.0f megapixels); orchard decodes at most %g megapixels and %d pixels a side: scale it down first",
			path, w, h, float64(w)*float64(h)/1e6, float64(o.maxPixels())/1e6, o.maxSide())}
	}
	return nil
}

// sniffImage names an image format from its magic bytes.
func sniffImage(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return "jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "gif"
	case len(b) >= 12 && string(b[0:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "webp"
	case bytes.HasPrefix(b, []byte("BM")):
		return "bmp"
	case bytes.HasPrefix(b, []byte("II*\x00")), bytes.HasPrefix(b, []byte("MM\x00*")):
		return "tiff"
	}
	return sniffISOBMFF(b)
}

// sniffISOBMFF names HEIF-family images by their ftyp brand.
func sniffISOBMFF(b []byte) string {
	if len(b) < 12 || string(b[4:8]) != "ftyp" {
		return ""
	}
	switch string(b[8:12]) {
	case "heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1":
		return "heic"
	case "avif", "avis":
		return "avif"
	}
	return ""
}

// Resized returns the picture upright and stretched to w×h, as packed 8-bit
// RGB premultiplied over black.
func (im *Image) Resized(w, h int) ([]byte, error) {
	sw, sh := w, h
	if orientSwapsAxes(im.Orientation) {
		sw, sh = h, w
	}
	src, err := im.pixels(sw, sh)
	if err != nil {
		return nil, err
	}
	rgb := resizeRGB(src, sw, sh, yccFor(im.Format))
	rgb, _, _ = orientRGB(im.Orientation, rgb, sw, sh)
	return rgb, nil
}

// pixels returns decoded pixels of at least sw×sh (or the full picture).
func (im *Image) pixels(sw, sh int) (image.Image, error) {
	if im.jpeg == nil {
		return im.src, nil
	}
	scale := 1
	for _, s := range []int{8, 4, 2} {
		if (im.w+s-1)/s >= sw && (im.h+s-1)/s >= sh {
			scale = s
			break
		}
	}
	if im.src != nil && im.srcScale <= scale {
		return im.src, nil
	}
	var src image.Image
	err := errJPEGUnsupported
	if scale > 1 {
		src, err = decodeJPEGScaled(im.jpeg, scale)
	}
	if err != nil {
		// Full size (image/jpeg is the faster full decoder), progressive and
		// other files the scaled decoder leaves alone, and anything it finds
		// malformed go to image/jpeg.
		scale = 1
		if err := checkDecode(im.Info.Path, "jpeg", im.jpeg, image.Config{Width: im.w, Height: im.h}, im.opts); err != nil {
			return nil, err
		}
		codec, _ := imageCodecFor("jpeg")
		if src, err = codec.decode(bytes.NewReader(im.jpeg)); err != nil {
			return nil, fmt.Errorf("image %s: jpeg: %w", im.Info.Path, err)
		}
	}
	im.src, im.srcScale = src, scale
	if scale == 1 {
		im.jpeg = nil
	}
	return src, nil
}
