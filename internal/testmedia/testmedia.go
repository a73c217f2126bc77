// Package testmedia makes the small pictures and clips the tests of
// several packages attach to messages: a PNG whose pattern depends on a
// seed and a WAV of a pure tone, both built in memory.
package testmedia

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"math"
)

// PNG is a w×h picture whose pattern depends on seed, so two seeds make
// two different files of the same size.
func PNG(seed, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.NRGBA{uint8(x*7 + seed*40), uint8(y*5 + seed*13), uint8((x+y)*3 + seed), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // encoding an in-memory NRGBA cannot fail
	}
	return b.Bytes()
}

// WAV is a 16 kHz mono 16-bit PCM clip of a tone of hz.
func WAV(seconds, hz float64) []byte {
	const rate = 16000
	n := int(seconds * rate)
	data := make([]byte, 44+2*n)
	copy(data, "RIFF")
	binary.LittleEndian.PutUint32(data[4:], uint32(36+2*n))
	copy(data[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(data[16:], 16)
	binary.LittleEndian.PutUint16(data[20:], 1) // PCM
	binary.LittleEndian.PutUint16(data[22:], 1) // mono
	binary.LittleEndian.PutUint32(data[24:], rate)
	binary.LittleEndian.PutUint32(data[28:], 2*rate) // bytes per second
	binary.LittleEndian.PutUint16(data[32:], 2)      // bytes per frame
	binary.LittleEndian.PutUint16(data[34:], 16)
	copy(data[36:], "data")
	binary.LittleEndian.PutUint32(data[40:], uint32(2*n))
	for i := range n {
		v := int16(8000 * math.Sin(2*math.Pi*hz*float64(i)/rate))
		binary.LittleEndian.PutUint16(data[44+2*i:], uint16(v))
	}
	return data
}
