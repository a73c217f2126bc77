package media

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"strings"

	"github.com/orchard-llm/orchard/regfile"
)

// Memory to decode a picture whole, known from its header before any
// pixel is decoded. The pixel limits alone let a 778 KB 10000×10000
// 16-bit PNG take 1.83 GB (8 bytes a pixel, twice over while resized) and
// a 586 KB progressive JPEG 1.58 GB (image/jpeg keeps 64 int32
// coefficients for every block until the last scan); so a picture is also
// refused by the bytes its decoder allocates (Options.MaxDecodeBytes).
// JPEGs the scaled decoder reads (baseline, Y'CbCr or grey) are decoded at
// the size asked for and cost a fraction; they are checked only when they
// must be decoded whole.
//
// Each figure is an upper bound of what the format's Go decoder allocates
// (TestDecodeCostBoundsAllocation holds them to it), rounded up per
// format rather than exact, plus decodeSlack for tables and buffers.

// decodeSlack is what every decoder allocates besides the pixels: Huffman
// and zlib tables, row buffers of a few KB, the image header.
const decodeSlack = 1 << 20

// decodeCost is what decoding data (a picture of format whose header gave
// cfg) whole allocates, and a few words on why ("16-bit RGBA", "progressive")
// for the refusal; ok is false when the header cannot be read again (the
// decoder reports that).
func decodeCost(format string, data []byte, cfg image.Config) (cost int64, what string) {
	px := int64(cfg.Width) * int64(cfg.Height)
	perPixel := func(bpp float64) int64 { return int64(bpp*float64(px)) + decodeSlack }
	switch format {
	case "png":
		bpp, what := pngBytesPerPixel(data)
		return perPixel(bpp), what
	case "jpeg":
		return jpegCost(data, cfg)
	case "gif": // one byte a pixel, the first frame
		return perPixel(1), ""
	case "webp":
		if len(data) >= 16 {
			switch string(data[12:16]) {
			case "VP8 ": // Y'CbCr 4:2:0 in whole macroblocks
				mb := int64((cfg.Width+15)/16) * int64((cfg.Height+15)/16)
				return mb*384 + decodeSlack, ""
			case "VP8L": // NRGBA, and the transforms' rows
				return perPixel(8), "lossless"
			}
		}
		return perPixel(10), "with alpha" // VP8X: Y'CbCr, alpha plane and its own lossless decode
	case "bmp":
		return perPixel(4), ""
	case "tiff":
		// The decoded image and the raw strips, read whole and grown while
		// decompressed (a buffer doubling as it fills): measured up to
		// eight times the pixels' own bytes.
		bpp := 4.0
		switch cfg.ColorModel {
		case color.Gray16Model:
			bpp = 2
		case color.RGBA64Model, color.NRGBA64Model:
			bpp = 8
		case color.GrayModel:
			bpp = 1
		}
		if _, ok := cfg.ColorModel.(color.Palette); ok {
			bpp = 1
		}
		return perPixel(9 * bpp), bitsWord(bpp)
	}
	return perPixel(8), ""
}

// bitsWord says "16-bit" for a picture of 16-bit samples.
func bitsWord(bpp float64) string {
	if bpp >= 8 || bpp == 2 {
		return "16-bit"
	}
	return ""
}

// pngBytesPerPixel is what image/png's decoded image takes a pixel (an
// interlaced picture is decoded pass by pass, then copied: twice), from
// the IHDR chunk and whether a tRNS chunk adds alpha.
func pngBytesPerPixel(data []byte) (float64, string) {
	if len(data) < 29 || string(data[12:16]) != "IHDR" {
		return 8, ""
	}
	depth, colour, interlaced := data[24], data[25], data[28] == 1
	trns := pngHasChunk(data, "tRNS")
	var bpp float64
	var what string
	switch colour {
	case 0: // grey: Gray or Gray16; with tRNS, NRGBA or NRGBA64
		bpp, what = 1, "grey"
		if trns {
			bpp = 4
		}
	case 2: // RGB: RGBA or RGBA64 (NRGBA with tRNS)
		bpp, what = 4, "RGB"
	case 3: // palette: Paletted
		return 1, "palette"
	case 4: // grey and alpha: NRGBA or NRGBA64
		bpp, what = 4, "grey with alpha"
	default: // RGBA: NRGBA or NRGBA64
		bpp, what = 4, "RGBA"
	}
	if depth == 16 {
		bpp *= 2
		if colour == 0 && !trns {
			bpp = 2
		}
		what = "16-bit " + what
	}
	if interlaced {
		bpp *= 2
		what += ", interlaced"
	}
	return bpp, what
}

// pngHasChunk reports whether a chunk of type typ comes before the image
// data.
func pngHasChunk(data []byte, typ string) bool {
	for p := 8; p+8 <= len(data); {
		n := int64(binary.BigEndian.Uint32(data[p:]))
		t := string(data[p+4 : p+8])
		if t == typ {
			return true
		}
		if t == "IDAT" || t == "IEND" {
			return false
		}
		p += 12 + int(min(n, int64(len(data))))
	}
	return false
}

// jpegCost is what image/jpeg allocates for a JPEG: a plane a component,
// in whole MCUs; for a progressive one 64 int32 coefficients a block of
// every component besides; and an RGBA or CMYK picture for files not in
// Y'CbCr or grey.
func jpegCost(data []byte, cfg image.Config) (int64, string) {
	l, ok := readJPEGLayout(data)
	if !ok {
		return int64(cfg.Width)*int64(cfg.Height)*24 + decodeSlack, ""
	}
	hmax, vmax := 1, 1
	for _, c := range l.comps {
		hmax, vmax = max(hmax, c[0]), max(vmax, c[1])
	}
	mcux := int64((l.w + 8*hmax - 1) / (8 * hmax))
	mcuy := int64((l.h + 8*vmax - 1) / (8 * vmax))
	var blocks int64
	for _, c := range l.comps {
		blocks += mcux * int64(c[0]) * mcuy * int64(c[1])
	}
	cost := blocks*64 + decodeSlack
	what := ""
	if l.progressive {
		cost += blocks * 64 * 4
		what = "progressive"
	}
	if len(l.comps) == 4 || len(l.comps) == 3 && l.adobe == 0 {
		cost += int64(l.w) * int64(l.h) * 4
	}
	return cost, what
}

// jpegLayout is what a JPEG's frame header says of its memory.
type jpegLayout struct {
	w, h        int
	progressive bool
	comps       [][2]int // sampling factors, across and down
	adobe       int      // the Adobe segment's transform, -1 without one
}

// readJPEGLayout reads the markers up to the first scan.
func readJPEGLayout(data []byte) (jpegLayout, bool) {
	l := jpegLayout{adobe: -1}
	p := 2
	for p+4 <= len(data) {
		if data[p] != 0xff {
			p++
			continue
		}
		m := data[p+1]
		if m == 0xff || m == 0xd8 || m == 0x01 || m >= 0xd0 && m <= 0xd7 {
			p++
			continue
		}
		n := int(binary.BigEndian.Uint16(data[p+2:]))
		if n < 2 || p+2+n > len(data) {
			return l, false
		}
		seg := data[p+4 : p+2+n]
		p += 2 + n
		switch {
		case m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc:
			if len(seg) < 6 {
				return l, false
			}
			l.h, l.w = int(binary.BigEndian.Uint16(seg[1:])), int(binary.BigEndian.Uint16(seg[3:]))
			l.progressive = m == 0xc2 || m == 0xc6 || m == 0xca || m == 0xce
			nc := int(seg[5])
			if nc < 1 || nc > 4 || len(seg) < 6+3*nc {
				return l, false
			}
			for i := range nc {
				s := seg[7+3*i]
				l.comps = append(l.comps, [2]int{max(1, int(s>>4)), max(1, int(s&15))})
			}
		case m == 0xee && len(seg) >= 12 && bytes.HasPrefix(seg, []byte("Adobe")):
			l.adobe = int(seg[11])
		case m == 0xda, m == 0xd9:
			return l, l.comps != nil
		}
	}
	return l, false
}

// checkDecode refuses a picture whose whole decode takes more than the
// limit, naming what makes it costly.
func checkDecode(path, format string, data []byte, cfg image.Config, o Options) error {
	cost, what := decodeCost(format, data, cfg)
	if cost <= o.maxDecodeBytes() {
		return nil
	}
	kind := strings.ToUpper(format)
	if what != "" {
		kind = what + " " + kind
	}
	return &LimitError{Option: "MaxDecodeBytes", Err: fmt.Errorf("image %s is a %d×%d %s, which takes %s to decode, more than the %s orchard decodes a picture in: scale it down, or save it as a baseline JPEG, first",
		path, cfg.Width, cfg.Height, kind, regfile.Size(cost), regfile.Size(o.maxDecodeBytes()))}
}
