package media

import (
	"errors"
	"image"
)

// Limits applied when Options leaves a field zero.
const (
	DefaultMaxBytes  = 256 << 20   // largest file read
	DefaultMaxPixels = 100_000_000 // largest decoded image (width × height)
	DefaultMaxSide   = 30_000      // longest decoded image side
	// DefaultMaxDecodeBytes bounds the memory a picture's decoder takes
	// (decodeCost); the scaled JPEG decoder takes a fraction of it.
	DefaultMaxDecodeBytes = 256 << 20
	DefaultMaxSeconds     = 600 // longest audio decoded (the context holds far less)
)

// Options are the limits and platform decoders LoadImage and LoadAudio use.
// The zero value is ready to use and reads what the pure-Go decoders read;
// DefaultOptions adds the platform's decoders.
type Options struct {
	MaxBytes  int64 // refuse larger files
	MaxPixels int   // refuse images with more pixels, before decoding them
	MaxSide   int   // refuse images with a longer side, before decoding them
	// MaxDecodeBytes refuses images whose decoder would allocate more
	// (from the header: pixels × bytes a pixel, before decoding them).
	MaxDecodeBytes int64
	MaxSeconds     float64 // refuse longer audio

	// Images decodes what the pure-Go decoders cannot (HEIC through ImageIO
	// on macOS); nil elsewhere.
	Images ImageDecoder
	// Audio decodes what the pure-Go decoders cannot (m4a, caf and the rest
	// of what AVFoundation reads, through AudioToolbox on macOS); nil
	// elsewhere.
	Audio AudioDecoder
}

// DefaultOptions are the default limits with the platform's decoders: on
// macOS built with cgo, ImageIO for images and AudioToolbox for audio;
// elsewhere none, so it equals the zero Options.
func DefaultOptions() Options {
	var o Options
	o.Images, o.Audio = platformDecoders()
	return o
}

// ImageDecoder is the seam for a platform's image decoder. DecodeImage
// returns the first frame of data as sRGB pixels, already upright, and must
// refuse images over maxPixels before decoding them. It returns
// ErrUnsupportedFormat for data it cannot read.
type ImageDecoder interface {
	DecodeImage(path string, data []byte, maxPixels int) (image.Image, error)
}

// AudioDecoder is the seam for a platform's audio decoder. DecodeAudio
// returns the clip's samples, channels averaged, at the file's own rate;
// LoadAudio resamples them. It stops with a *TooLongError once the clip is
// past maxSeconds, and returns ErrUnsupportedFormat for data it cannot read.
type AudioDecoder interface {
	DecodeAudio(path string, data []byte, maxSeconds float64) (*PCM, error)
}

// LimitError refuses a file over one of the Options limits; Option names
// the field (MaxBytes, MaxPixels, MaxSide, MaxDecodeBytes or MaxSeconds),
// so that a front end can say which of its settings raises it.
type LimitError struct {
	Option string
	Err    error
}

func (e *LimitError) Error() string { return e.Err.Error() }
func (e *LimitError) Unwrap() error { return e.Err }

// ErrUnsupportedFormat is returned for a file no decoder reads.
var ErrUnsupportedFormat = errors.New("unsupported format")

func (o Options) maxBytes() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return DefaultMaxBytes
}

func (o Options) maxPixels() int {
	if o.MaxPixels > 0 {
		return o.MaxPixels
	}
	return DefaultMaxPixels
}

func (o Options) maxSide() int {
	if o.MaxSide > 0 {
		return o.MaxSide
	}
	return DefaultMaxSide
}

func (o Options) maxDecodeBytes() int64 {
	if o.MaxDecodeBytes > 0 {
		return o.MaxDecodeBytes
	}
	return DefaultMaxDecodeBytes
}

func (o Options) maxSeconds() float64 {
	if o.MaxSeconds > 0 {
		return o.MaxSeconds
	}
	return DefaultMaxSeconds
}
