package media

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// zeroPNG is a w×h PNG of depth-bit RGBA whose pixels are all zero, made
// without the picture in memory: the zlib stream repeats one flushed
// deflate block of a MiB of zeros (its matches reach back only into
// zeros), so a 10000×10000 16-bit picture is a file of about 800 KB, as
// the probe's was.
func zeroPNG(w, h, depth int) []byte {
	total := int64(h) * (1 + int64(w)*4*int64(depth/8)) // a filter byte a row
	const block = 1 << 20
	var blk bytes.Buffer
	fw, _ := flate.NewWriter(&blk, flate.BestCompression)
	fw.Write(make([]byte, block))
	fw.Flush()
	var z bytes.Buffer
	z.Write([]byte{0x78, 0xda})
	for n := total / block; n > 0; n-- {
		z.Write(blk.Bytes())
	}
	fw2, _ := flate.NewWriter(&z, flate.BestCompression)
	fw2.Write(make([]byte, total%block))
	fw2.Close()
	// Adler-32 of total zeros: a stays 1, b adds it once a byte.
	z.Write(binary.BigEndian.AppendUint32(nil, uint32(total%65521)<<16|1))
	return pngOf(w, h, depth, 6, nil, nil, z.Bytes())
}

// flatJPEG is a w×h JPEG of flat grey written by hand, so that a huge one
// is cheap to make: every block has a zero DC difference and no AC
// coefficients, one bit each with one-code Huffman tables. Grey (one
// component) or Y'CbCr 4:2:0; progressive files hold only the DC scan.
func flatJPEG(w, h int, colour, progressive bool) []byte {
	seg := func(b []byte, marker byte, data []byte) []byte {
		b = append(b, 0xff, marker)
		b = binary.BigEndian.AppendUint16(b, uint16(len(data)+2))
		return append(b, data...)
	}
	b := []byte{0xff, 0xd8}
	b = seg(b, 0xdb, append([]byte{0}, bytes.Repeat([]byte{1}, 64)...))
	sof := []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w)}
	comps := [][3]byte{{1, 0x11, 0}}
	if colour {
		comps = [][3]byte{{1, 0x22, 0}, {2, 0x11, 0}, {3, 0x11, 0}}
	}
	sof = append(sof, byte(len(comps)))
	for _, c := range comps {
		sof = append(sof, c[:]...)
	}
	marker := byte(0xc0)
	if progressive {
		marker = 0xc2
	}
	b = seg(b, marker, sof)
	oneCode := func(class byte) []byte { // one code of length 1, for symbol 0
		return append(append([]byte{class, 1}, make([]byte, 15)...), 0)
	}
	b = seg(b, 0xc4, oneCode(0x00))
	b = seg(b, 0xc4, oneCode(0x10))
	sos := []byte{byte(len(comps))}
	for _, c := range comps {
		sos = append(sos, c[0], 0x00)
	}
	se := byte(63)
	if progressive {
		se = 0
	}
	b = seg(b, 0xda, append(sos, 0, se, 0))
	blocks := int64((w+7)/8) * int64((h+7)/8)
	if colour {
		blocks = int64((w+15)/16) * int64((h+15)/16) * 6
	}
	bits := blocks * 2 // DC, then the end of block
	if progressive {
		bits = blocks
	}
	b = append(b, make([]byte, (bits+7)/8)...)
	return append(b, 0xff, 0xd9)
}

// decodeCost bounds what each format's decoder allocates: a picture of
// every kind, decoded whole, allocates no more than its cost, so refusing
// by the cost bounds the memory.
func TestDecodeCostBoundsAllocation(t *testing.T) {
	const w, h = 480, 320
	pic := image.NewNRGBA64(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			pic.Set(x, y, color.NRGBA64{uint16(x * 97), uint16(y * 131), uint16(x * y), uint16(65535 - x*50)})
		}
	}
	enc := func(f func(*bytes.Buffer) error) []byte {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	conv := func(dst draw.Image) image.Image {
		draw.Draw(dst, dst.Bounds(), pic, image.Point{}, draw.Src)
		return dst
	}
	r := pic.Bounds()
	rgba8, grey8, grey16 := conv(image.NewNRGBA(r)), conv(image.NewGray(r)), conv(image.NewGray16(r))
	rows := func(bpp int) [][]byte {
		r := make([][]byte, h)
		for y := range r {
			r[y] = bytes.Repeat([]byte{byte(y), 7, 200, 3, 9, 11, 13, 17}[:bpp], w)
		}
		return r
	}
	files := map[string][]byte{
		"png rgba16":             enc(func(b *bytes.Buffer) error { return png.Encode(b, pic) }),
		"png rgba8":              enc(func(b *bytes.Buffer) error { return png.Encode(b, rgba8) }),
		"png grey8":              enc(func(b *bytes.Buffer) error { return png.Encode(b, grey8) }),
		"png grey16":             enc(func(b *bytes.Buffer) error { return png.Encode(b, grey16) }),
		"png grey8 tRNS":         pngFile(w, h, 8, 0, nil, []byte{0, 5}, rows(1)),
		"png grey16 tRNS":        pngFile(w, h, 16, 0, nil, []byte{0, 5}, rows(2)),
		"png rgb8":               pngFile(w, h, 8, 2, nil, nil, rows(3)),
		"png rgb16 tRNS":         pngFile(w, h, 16, 2, nil, []byte{0, 1, 0, 2, 0, 3}, rows(6)),
		"png grey-alpha16":       pngFile(w, h, 16, 4, nil, nil, rows(4)),
		"png palette":            pngFile(w, h, 8, 3, bytes.Repeat([]byte{1, 2, 3}, 256), nil, rows(1)),
		"jpeg 4:2:0":             enc(func(b *bytes.Buffer) error { return jpeg.Encode(b, rgba8, nil) }),
		"jpeg grey":              enc(func(b *bytes.Buffer) error { return jpeg.Encode(b, grey8, nil) }),
		"jpeg progressive grey":  flatJPEG(w, h, false, true),
		"jpeg progressive 4:2:0": flatJPEG(w, h, true, true),
		"gif":                    enc(func(b *bytes.Buffer) error { return gif.Encode(b, rgba8, nil) }),
		"bmp":                    enc(func(b *bytes.Buffer) error { return bmp.Encode(b, rgba8) }),
		"bmp grey":               enc(func(b *bytes.Buffer) error { return bmp.Encode(b, grey8) }),
		"tiff":                   enc(func(b *bytes.Buffer) error { return tiff.Encode(b, rgba8, nil) }),
		"tiff deflate":           enc(func(b *bytes.Buffer) error { return tiff.Encode(b, rgba8, &tiff.Options{Compression: tiff.Deflate}) }),
		"tiff 16-bit deflate": enc(func(b *bytes.Buffer) error {
			return tiff.Encode(b, pic, &tiff.Options{Compression: tiff.Deflate})
		}),
	}
	// Progressive and 4:4:4 JPEGs and WebP from Debian's encoders, where
	// they are installed (CI installs them).
	dir := t.TempDir()
	src := filepath.Join(dir, "in.png")
	os.WriteFile(src, files["png rgba8"], 0o600)
	bmpPath := filepath.Join(dir, "in.bmp")
	os.WriteFile(bmpPath, files["bmp"], 0o600)
	for name, args := range map[string][]string{
		"jpeg progressive 4:4:4":         {"cjpeg", "-progressive", "-sample", "1x1", "-outfile", "OUT", bmpPath},
		"jpeg progressive 4:2:0 (cjpeg)": {"cjpeg", "-progressive", "-outfile", "OUT", bmpPath},
		"webp lossy":                     {"cwebp", "-quiet", "-noalpha", src, "-o", "OUT"},
		"webp lossy alpha":               {"cwebp", "-quiet", src, "-o", "OUT"},
		"webp lossless":                  {"cwebp", "-quiet", "-lossless", src, "-o", "OUT"},
	} {
		out := filepath.Join(dir, "out")
		for i, a := range args {
			if a == "OUT" {
				args[i] = out
			}
		}
		if err := exec.Command(args[0], args[1:]...).Run(); err != nil {
			t.Logf("%s: skipped (%v)", name, err)
			continue
		}
		files[name], _ = os.ReadFile(out)
	}
	for name, data := range files {
		format := sniffImage(data)
		codec, ok := imageCodecFor(format)
		if !ok {
			t.Fatalf("%s: format %q", name, format)
		}
		cfg, err := codec.config(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cost, _ := decodeCost(format, data, cfg)
		var derr error
		n := allocated(func() { _, derr = codec.decode(bytes.NewReader(data)) })
		if derr != nil {
			t.Fatalf("%s: %v", name, derr)
		}
		if int64(n) > cost {
			t.Errorf("%s: decoding allocated %d bytes, more than its cost %d", name, n, cost)
		}
		if cost > 8*int64(n)+decodeSlack {
			t.Errorf("%s: cost %d is far above the %d bytes decoding allocates", name, cost, n)
		}
	}
}

// The probe's pictures: a 10000×10000 16-bit PNG of 0.8 MB took 1.83 GB to
// decode, and a progressive JPEG of the same size 1.58 GB. Both are now
// refused from their headers, naming the limit (MaxDecodeBytes, which
// media.max_decode_size sets); reading and refusing them allocates little
// more than the file. A baseline JPEG of the same size is decoded at the
// size asked for: reading, resizing it for the encoder and thumbnailing
// it allocates less than 64 MiB.
func TestHugePicturesBoundedMemory(t *testing.T) {
	dir := t.TempDir()
	png16 := writeFile(t, dir, "huge16.png", zeroPNG(10000, 10000, 16))
	prog := writeFile(t, dir, "huge-progressive.jpg", flatJPEG(10000, 10000, true, true))
	base := writeFile(t, dir, "huge-baseline.jpg", flatJPEG(10000, 10000, true, false))
	for _, c := range []struct{ path, want string }{
		{png16, "is a 10000×10000 16-bit RGBA PNG, which takes 763.9 MiB to decode, more than the 256 MiB orchard decodes a picture in"},
		{prog, "is a 10000×10000 progressive JPEG, which takes 716.3 MiB to decode, more than the 256 MiB"},
	} {
		st, _ := os.Stat(c.path)
		var err error
		n := allocated(func() {
			var im *Image
			if im, err = LoadImage(c.path, Options{}); err == nil {
				_, err = im.Resized(768, 768)
			}
		})
		var le *LimitError
		if !errors.As(err, &le) || le.Option != "MaxDecodeBytes" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a MaxDecodeBytes refusal: %s", filepath.Base(c.path), err, c.want)
		}
		if limit := uint64(st.Size()) + 4<<20; n > limit {
			t.Errorf("%s (%d bytes): refusing it allocated %d bytes, more than %d", filepath.Base(c.path), st.Size(), n, limit)
		}
	}
	var err error
	n := allocated(func() {
		var im *Image
		if im, err = LoadImage(base, Options{}); err == nil {
			if _, err = im.Resized(768, 768); err == nil {
				_, err = im.Thumbnail(256)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if n > 64<<20 {
		t.Errorf("a 10000×10000 baseline JPEG allocated %d bytes, more than 64 MiB", n)
	}
	// Decoded whole (asked for at full size), the baseline JPEG is refused
	// too: image/jpeg would take its 143 MiB past a 64 MiB limit.
	im, err := LoadImage(base, Options{MaxDecodeBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := im.Resized(9000, 9000); !errors.As(err, new(*LimitError)) {
		t.Errorf("full-size decode past the limit: %v", err)
	}
}
