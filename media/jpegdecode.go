package media

import (
	"encoding/binary"
	"errors"
	"image"
	"runtime"
	"sync"
)

// decodeJPEGScaled decodes data at 1/scale (1, 2, 4 or 8) of its size,
// rounding up, into an *image.YCbCr or *image.Gray, or returns
// errJPEGUnsupported.
func decodeJPEGScaled(data []byte, scale int) (image.Image, error) {
	if len(data) < 4 || data[0] != 0xff || data[1] != 0xd8 {
		return nil, errors.New("jpeg: missing SOI marker")
	}
	var (
		qt      [4][64]int32 // natural order
		dc, ac  [4]huffTable
		comps   []jpegComponent
		w, h    int
		restart int
		adobe   = -1
		haveSOF bool
	)
	p := 2
	for {
		for p < len(data) && data[p] != 0xff {
			p++ // tolerate garbage between segments, as decoders do
		}
		for p < len(data) && data[p] == 0xff {
			p++
		}
		if p >= len(data) {
			return nil, errors.New("jpeg: no image data")
		}
		m := data[p]
		p++
		if m == 0xd8 || (m >= 0xd0 && m <= 0xd7) || m == 0x01 {
			continue
		}
		if m == 0xd9 {
			return nil, errors.New("jpeg: no image data")
		}
		if p+2 > len(data) {
			return nil, errors.New("jpeg: truncated segment")
		}
		n := int(binary.BigEndian.Uint16(data[p:]))
		if n < 2 || p+n > len(data) {
			return nil, errors.New("jpeg: truncated segment")
		}
		seg := data[p+2 : p+n]
		p += n
		switch {
		case m == 0xc0 || m == 0xc1: // baseline, extended sequential Huffman
			if haveSOF || len(seg) < 6 || seg[0] != 8 {
				return nil, errJPEGUnsupported
			}
			h, w = int(binary.BigEndian.Uint16(seg[1:])), int(binary.BigEndian.Uint16(seg[3:]))
			nc := int(seg[5])
			if w == 0 || h == 0 || (nc != 1 && nc != 3) || len(seg) < 6+3*nc {
				return nil, errJPEGUnsupported
			}
			for i := range nc {
				c := seg[6+3*i:]
				comps = append(comps, jpegComponent{id: int(c[0]), h: int(c[1] >> 4), v: int(c[1] & 15), tq: int(c[2])})
			}
			haveSOF = true
		case m >= 0xc2 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc:
			return nil, errJPEGUnsupported // progressive, lossless, arithmetic
		case m == 0xc4:
			for len(seg) > 0 {
				if len(seg) < 17 {
					return nil, errors.New("jpeg: bad DHT")
				}
				class, id := seg[0]>>4, int(seg[0]&15)
				var counts [16]int
				total := 0
				for i := range 16 {
					counts[i] = int(seg[1+i])
					total += counts[i]
				}
				if class > 1 || id > 3 || len(seg) < 17+total {
					return nil, errors.New("jpeg: bad DHT")
				}
				t := &dc[id]
				if class == 1 {
					t = &ac[id]
				}
				if err := t.build(counts, append([]byte(nil), seg[17:17+total]...)); err != nil {
					return nil, err
				}
				seg = seg[17+total:]
			}
		case m == 0xdb:
			for len(seg) > 0 {
				pq, id := seg[0]>>4, int(seg[0]&15)
				size := 1 + 64*(1+int(pq))
				if pq > 1 || id > 3 || len(seg) < size {
					return nil, errors.New("jpeg: bad DQT")
				}
				for i := range 64 {
					v := int32(seg[1+i])
					if pq == 1 {
						v = int32(binary.BigEndian.Uint16(seg[1+2*i:]))
					}
					qt[id][zigzag[i]] = v
				}
				seg = seg[size:]
			}
		case m == 0xdd:
			if len(seg) < 2 {
				return nil, errors.New("jpeg: bad DRI")
			}
			restart = int(binary.BigEndian.Uint16(seg))
		case m == 0xee:
			if len(seg) >= 12 && string(seg[:5]) == "Adobe" {
				adobe = int(seg[11])
			}
		case m == 0xda:
			if !haveSOF {
				return nil, errors.New("jpeg: scan before frame header")
			}
			if len(comps) == 3 && (adobe == 0 || (comps[0].id == 'R' && comps[1].id == 'G' && comps[2].id == 'B')) {
				return nil, errJPEGUnsupported // RGB, not Y'CbCr
			}
			if len(seg) < 1 || int(seg[0]) != len(comps) || len(seg) < 4+2*len(comps) {
				return nil, errJPEGUnsupported // one scan per component
			}
			for i := range comps {
				id, tables := int(seg[1+2*i]), seg[2+2*i]
				if comps[i].id != id {
					return nil, errJPEGUnsupported
				}
				comps[i].td, comps[i].ta = int(tables>>4), int(tables&15)
				if comps[i].td > 3 || comps[i].ta > 3 || !dc[comps[i].td].ok || !ac[comps[i].ta].ok || comps[i].tq > 3 {
					return nil, errors.New("jpeg: scan uses a missing table")
				}
			}
			d := &jpegScan{comps: comps, w: w, h: h, restart: restart, qt: &qt, dc: &dc, ac: &ac, k: 8 / scale}
			return d.decode(data[p:])
		}
	}
}

// jpegScan decodes the one scan of a sequential JPEG.
type jpegScan struct {
	comps      []jpegComponent
	w, h       int
	restart    int
	qt         *[4][64]int32
	dc, ac     *[4]huffTable
	k          int // output samples per block side
	hmax, vmax int
	mcux, mcuy int
	ring       [][][]int32 // [slot][component]: one row of MCUs' dequantised k×k coefficients
	planes     [][]byte    // per component: the decoded samples
	idct       []float32   // the k-point inverse DCT matrix
}

func (d *jpegScan) decode(data []byte) (image.Image, error) {
	for _, c := range d.comps {
		d.hmax, d.vmax = max(d.hmax, c.h), max(d.vmax, c.v)
		if c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4 {
			return nil, errJPEGUnsupported
		}
	}
	if len(d.comps) == 3 && (d.comps[1].h != 1 || d.comps[1].v != 1 || d.comps[2].h != 1 || d.comps[2].v != 1) {
		return nil, errJPEGUnsupported
	}
	if len(d.comps) == 1 { // a lone component's blocks are not grouped in MCUs
		d.comps[0].h, d.comps[0].v, d.hmax, d.vmax = 1, 1, 1, 1
	}
	if _, ok := subsampleRatio(d.hmax, d.vmax); !ok {
		return nil, errJPEGUnsupported
	}
	d.mcux = (d.w + 8*d.hmax - 1) / (8 * d.hmax)
	d.mcuy = (d.h + 8*d.vmax - 1) / (8 * d.vmax)
	kk := d.k * d.k
	d.idct = newScaledIDCT(d.k).m
	for i := range d.comps {
		c := &d.comps[i]
		c.bw, c.bh = d.mcux*c.h, d.mcuy*c.v
	}
	// The inverse DCTs of each finished row of MCUs run on the other CPUs
	// while the (serial) entropy decoder goes on. Rows of coefficients
	// pass through a ring of slots, so they stay in cache and no
	// image-sized coefficient buffer is ever allocated.
	const slots = 8
	d.ring = make([][][]int32, slots)
	free := make(chan int, slots)
	for s := range d.ring {
		for _, c := range d.comps {
			d.ring[s] = append(d.ring[s], make([]int32, c.v*c.bw*kk))
		}
		free <- s
	}
	d.planes = make([][]byte, len(d.comps))
	for i, c := range d.comps {
		d.planes[i] = make([]byte, c.bw*d.k*c.bh*d.k)
	}
	rows := make(chan [2]int, slots)
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)-1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rows {
				d.transformRow(r[0], r[1])
				free <- r[1]
			}
		}()
	}
	err := d.entropy(data, rows, free)
	close(rows)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	return d.image(), nil
}

// entropy Huffman-decodes every block, keeping the dequantised top-left
// k×k coefficients in a free ring slot, and sends each finished row of
// MCUs to rows as {row, slot}.
func (d *jpegScan) entropy(data []byte, rows chan<- [2]int, free <-chan int) error {
	r := &bitReader{data: data}
	var pred [3]int32
	var block [64]int32
	k := d.k
	kk := k * k
	// pos[z] is where zigzag coefficient z lands in the k×k block, or -1.
	var pos [64]int
	for z, nat := range zigzag {
		row, col := int(nat)/8, int(nat)%8
		pos[z] = -1
		if row < k && col < k {
			pos[z] = row*k + col
		}
	}
	mcus := d.mcux * d.mcuy
	slot := 0
	for m := range mcus {
		if d.restart > 0 && m > 0 && m%d.restart == 0 {
			if err := r.restart((m/d.restart - 1) % 8); err != nil {
				return err
			}
			pred = [3]int32{}
		}
		mx, my := m%d.mcux, m/d.mcux
		if mx == 0 {
			slot = <-free
		}
		for ci := range d.comps {
			c := &d.comps[ci]
			q := &d.qt[c.tq]
			dct, act := &d.dc[c.td], &d.ac[c.ta]
			for v := range c.v {
				for h := range c.h {
					s, err := r.decode(dct)
					if err != nil || s > 11 {
						return errors.New("jpeg: bad DC code")
					}
					if s > 0 {
						pred[ci] += extend(r.bits(uint(s)), uint(s))
					}
					block[0] = pred[ci]
					for z := 1; z < 64; {
						if r.n < 16 {
							r.fill()
						}
						if f := act.fastAC[r.acc>>(64-huffLookup)]; f != 0 {
							l := uint(f & 0xff)
							r.acc <<= l
							r.n -= l
							z += int(f>>8) & 15
							if z > 63 {
								return errors.New("jpeg: coefficient past the block")
							}
							if p := pos[z]; p >= 0 {
								block[p] = (f >> 16) * q[zigzag[z]]
							}
							z++
							continue
						}
						rs, err := r.decode(act)
						if err != nil {
							return err
						}
						run, size := int(rs>>4), uint(rs&15)
						if size == 0 {
							if run != 15 {
								break
							}
							z += 16
							continue
						}
						z += run
						if z > 63 {
							return errors.New("jpeg: coefficient past the block")
						}
						v := extend(r.bits(size), size)
						if p := pos[z]; p >= 0 {
							block[p] = v * q[zigzag[z]]
						}
						z++
					}
					b := v*c.bw + mx*c.h + h
					out := d.ring[slot][ci][b*kk : (b+1)*kk]
					out[0] = block[0] * q[0]
					copy(out[1:], block[1:kk])
					for i := 1; i < kk; i++ {
						block[i] = 0
					}
				}
			}
		}
		if r.over > 64 {
			return errors.New("jpeg: image data ends early")
		}
		if mx == d.mcux-1 {
			rows <- [2]int{my, slot}
		}
	}
	return nil
}

// transformRow runs the inverse DCTs of row my of MCUs, held in a ring
// slot, into the planes.
func (d *jpegScan) transformRow(my, slot int) {
	k := d.k
	idct := scaledIDCT{k: k, m: d.idct}
	for i, c := range d.comps {
		coef, plane, stride := d.ring[slot][i], d.planes[i], c.bw*k
		for v := range c.v {
			by := my*c.v + v
			for bx := range c.bw {
				b := v*c.bw + bx
				idct.block(coef[b*k*k:(b+1)*k*k], plane[by*k*stride+bx*k:], stride)
			}
		}
	}
}

// image lays the planes out as an image of the scaled size.
func (d *jpegScan) image() image.Image {
	k := d.k
	r := image.Rect(0, 0, (d.w*k+7)/8, (d.h*k+7)/8)
	if len(d.comps) == 1 {
		return &image.Gray{Pix: d.planes[0], Stride: d.comps[0].bw * k, Rect: r}
	}
	ratio, _ := subsampleRatio(d.hmax, d.vmax)
	return &image.YCbCr{Y: d.planes[0], Cb: d.planes[1], Cr: d.planes[2],
		YStride: d.comps[0].bw * k, CStride: d.comps[1].bw * k, SubsampleRatio: ratio, Rect: r}
}

// subsampleRatio names the chroma subsampling of luma sampling h×v (chroma
// 1×1).
func subsampleRatio(h, v int) (image.YCbCrSubsampleRatio, bool) {
	switch [2]int{h, v} {
	case [2]int{1, 1}:
		return image.YCbCrSubsampleRatio444, true
	case [2]int{2, 1}:
		return image.YCbCrSubsampleRatio422, true
	case [2]int{2, 2}:
		return image.YCbCrSubsampleRatio420, true
	case [2]int{1, 2}:
		return image.YCbCrSubsampleRatio440, true
	case [2]int{4, 1}:
		return image.YCbCrSubsampleRatio411, true
	case [2]int{4, 2}:
		return image.YCbCrSubsampleRatio410, true
	}
	return 0, false
}
