package media

import (
	"bytes"
	"encoding/binary"
)

// exifOrientation returns the EXIF orientation (1–8) a file declares, or 1.
// It reads JPEG APP1 "Exif" segments, PNG eXIf chunks, WebP EXIF chunks and
// a TIFF file's own first IFD; every offset is bounds-checked, and anything
// malformed counts as 1 (upright) rather than an error, as viewers do.
func exifOrientation(format string, data []byte) int {
	var tiff []byte
	switch format {
	case "jpeg":
		tiff = jpegExif(data)
	case "png":
		tiff = pngChunk(data, "eXIf")
	case "webp":
		tiff = riffChunk(data, "EXIF")
		tiff = bytes.TrimPrefix(tiff, []byte("Exif\x00\x00"))
	case "tiff":
		tiff = data
	}
	if o := tiffOrientation(tiff); o >= 1 && o <= 8 {
		return o
	}
	return 1
}

// jpegExif finds the TIFF structure of the first APP1 Exif segment before
// the image data.
func jpegExif(d []byte) []byte {
	if len(d) < 4 || d[0] != 0xff || d[1] != 0xd8 {
		return nil
	}
	for p := 2; p+4 <= len(d); {
		if d[p] != 0xff {
			return nil
		}
		m := d[p+1]
		switch {
		case m == 0xff: // fill byte
			p++
			continue
		case m == 0xd8 || (m >= 0xd0 && m <= 0xd7) || m == 0x01:
			p += 2
			continue
		case m == 0xda || m == 0xd9: // start of scan, end of image
			return nil
		}
		n := int(binary.BigEndian.Uint16(d[p+2:]))
		if n < 2 || p+2+n > len(d) {
			return nil
		}
		seg := d[p+4 : p+2+n]
		if m == 0xe1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			return seg[6:]
		}
		p += 2 + n
	}
	return nil
}

// pngChunk returns the data of the first chunk of the given type.
func pngChunk(d []byte, typ string) []byte {
	for p := 8; p+12 <= len(d); {
		n := int(binary.BigEndian.Uint32(d[p:]))
		if n < 0 || p+12+n > len(d) {
			return nil
		}
		if string(d[p+4:p+8]) == typ {
			return d[p+8 : p+8+n]
		}
		p += 12 + n
	}
	return nil
}

// riffChunk returns the data of the first top-level RIFF chunk of the
// given type (WebP keeps its EXIF there).
func riffChunk(d []byte, typ string) []byte {
	for p := 12; p+8 <= len(d); {
		n := int(binary.LittleEndian.Uint32(d[p+4:]))
		if n < 0 || p+8+n > len(d) {
			return nil
		}
		if string(d[p:p+4]) == typ {
			return d[p+8 : p+8+n]
		}
		p += 8 + n + n&1
	}
	return nil
}

// tiffOrientation reads tag 0x0112 (a SHORT) from IFD0 of a TIFF
// structure, or returns 0.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 0
	}
	var bo binary.ByteOrder
	switch string(t[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return 0
	}
	ifd := int(bo.Uint32(t[4:]))
	if ifd < 8 || ifd+2 > len(t) {
		return 0
	}
	count := int(bo.Uint16(t[ifd:]))
	for i := range count {
		e := ifd + 2 + 12*i
		if e+12 > len(t) {
			return 0
		}
		if bo.Uint16(t[e:]) == 0x0112 && bo.Uint16(t[e+2:]) == 3 && bo.Uint32(t[e+4:]) == 1 {
			return int(bo.Uint16(t[e+8:]))
		}
	}
	return 0
}
