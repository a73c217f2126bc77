package media

import (
	"errors"
	"fmt"
)

// A baseline JPEG decoder that decodes at 1/2, 1/4 or 1/8 of the size in
// the DCT domain, as libjpeg's scaled decoding does: each 8×8 block's top
// left k×k coefficients go through a k-point inverse DCT, which is the
// block's band-limited picture sampled at k×k points. A 12-megapixel photo
// stretched to 768 px then needs a quarter of the inverse transforms and
// a quarter of the resizing work, and no full-size buffers.
//
// It reads what cameras and phones write: baseline or extended sequential
// Huffman, 8-bit samples, one (grey) or three (Y'CbCr) components in one
// interleaved scan, chroma sampled 1×1 under any luma sampling, restart
// intervals. Anything else (progressive, arithmetic coding, 12-bit, CMYK,
// Adobe RGB, separate scans per component) reports errJPEGUnsupported and
// image/jpeg decodes the file at full size instead.

var errJPEGUnsupported = errors.New("jpeg feature outside the scaled decoder")

type jpegComponent struct {
	id, h, v, tq int
	td, ta       int // Huffman table ids of the scan
	bw, bh       int // blocks across and down, padded to whole MCUs
}

type huffTable struct {
	lut [1 << huffLookup]uint16 // code (peeked 9 bits) → len<<8 | symbol; 0: longer code
	// fastAC decodes a whole AC coefficient (code and value bits) in one
	// lookup when both fit in the 9 peeked bits: value<<16 | run<<8 |
	// bits used; 0 otherwise. Most coefficients of a photo are that small.
	fastAC  [1 << huffLookup]int32
	maxCode [18]int32 // largest code of each length, -1 if none
	valPtr  [17]int32 // index in vals of the first code of each length
	minCode [17]int32
	vals    []byte
	ok      bool
}

const huffLookup = 9

func (t *huffTable) build(counts [16]int, vals []byte) error {
	t.vals = vals
	t.lut = [1 << huffLookup]uint16{}
	code, k := int32(0), int32(0)
	for l := 1; l <= 16; l++ {
		n := int32(counts[l-1])
		if code+n > 1<<l {
			// More codes of this length than there are bit patterns: an
			// over-subscribed table, refused before it fills the lookup.
			return fmt.Errorf("jpeg: bad Huffman table")
		}
		t.valPtr[l], t.minCode[l] = k, code
		if n == 0 {
			t.maxCode[l] = -1
		} else {
			t.maxCode[l] = code + n - 1
		}
		for i := int32(0); i < n; i++ {
			if l <= huffLookup {
				// Every 9-bit pattern starting with this code.
				base := (code + i) << (huffLookup - l)
				for j := int32(0); j < 1<<(huffLookup-l); j++ {
					t.lut[base+j] = uint16(l)<<8 | uint16(vals[k+i])
				}
			}
		}
		code = (code + n) << 1
		k += n
	}
	t.maxCode[17] = 0x7fffffff
	for i, e := range t.lut {
		t.fastAC[i] = 0
		l, rs := int(e>>8), int(e&0xff)
		run, size := rs>>4, rs&15
		if e == 0 || size == 0 || l+size > huffLookup {
			continue
		}
		bits := int32(i>>(huffLookup-l-size)) & (1<<size - 1)
		v := extend(bits, uint(size))
		t.fastAC[i] = v<<16 | int32(run)<<8 | int32(l+size)
	}
	t.ok = true
	return nil
}

// bitReader reads entropy-coded bits, removing 0xFF00 stuffing. At a
// marker it feeds zeros (as the standard says) and remembers the marker.
type bitReader struct {
	data   []byte
	pos    int
	acc    uint64 // bits, most significant first
	n      uint   // valid bits in acc
	marker bool   // reached a marker: no more data in this interval
	over   int    // zero bytes fed past the end
}

func (r *bitReader) fill() {
	for r.n <= 56 {
		var b byte
		if !r.marker && r.pos < len(r.data) {
			b = r.data[r.pos]
			if b == 0xff {
				if r.pos+1 < len(r.data) && r.data[r.pos+1] == 0 {
					r.pos += 2
				} else {
					r.marker, b = true, 0
					r.over++
				}
			} else {
				r.pos++
			}
		} else {
			r.over++
		}
		r.acc |= uint64(b) << (56 - r.n)
		r.n += 8
	}
}

func (r *bitReader) bits(s uint) int32 {
	if r.n < s {
		r.fill()
	}
	v := int32(r.acc >> (64 - s))
	r.acc <<= s
	r.n -= s
	return v
}

// decode reads one Huffman symbol.
func (r *bitReader) decode(t *huffTable) (byte, error) {
	if r.n < 16 {
		r.fill()
	}
	if e := t.lut[r.acc>>(64-huffLookup)]; e != 0 {
		l := uint(e >> 8)
		r.acc <<= l
		r.n -= l
		return byte(e), nil
	}
	code := int32(r.acc >> (64 - huffLookup))
	for l := huffLookup + 1; l <= 16; l++ {
		code = int32(r.acc >> (64 - uint(l)))
		if code <= t.maxCode[l] {
			r.acc <<= uint(l)
			r.n -= uint(l)
			return t.vals[t.valPtr[l]+code-t.minCode[l]], nil
		}
	}
	return 0, errors.New("jpeg: bad Huffman code")
}

// extend turns s received bits into a signed coefficient (JPEG F.2.2.1).
func extend(v int32, s uint) int32 {
	if v < 1<<(s-1) {
		return v - (1 << s) + 1
	}
	return v
}

// restart consumes an RSTn marker at a restart interval boundary.
func (r *bitReader) restart(want int) error {
	// Drop the bits of the unfinished byte and find the marker.
	p := r.pos
	for p+1 < len(r.data) && !(r.data[p] == 0xff && r.data[p+1] != 0 && r.data[p+1] != 0xff) {
		p++
	}
	if p+1 >= len(r.data) || r.data[p+1] != byte(0xd0+want) {
		return errors.New("jpeg: restart marker missing")
	}
	r.pos, r.acc, r.n, r.marker, r.over = p+2, 0, 0, false, 0
	return nil
}

// zigzag maps the order coefficients are coded in to their row-major
// position in the block.
var zigzag = [64]uint8{
	0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
}
