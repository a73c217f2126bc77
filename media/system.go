package media

import (
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// The Go half of the operating system's decoders (decode_darwin.go holds
// the C half). What the system decodes differs by platform; what is done
// with it here — the pixel budget checked before decoding, the picture
// turned upright, channels averaged — is the same everywhere and is tested
// on every platform with the system side faked.

// systemImage is an image opened by the system decoder, its header read
// but no pixel decoded.
type systemImage interface {
	// Header is the size the file declares and its EXIF orientation (1–8).
	Header() (w, h, orientation int)
	// Create makes the image (still undecoded) and returns its size.
	Create() (w, h int, err error)
	// Draw decodes the image into pix: w×h 8-bit sRGB RGBA, premultiplied
	// over a zeroed canvas, rows top to bottom, stride 4w.
	Draw(pix []byte, w, h int) error
}

// decodeSystemImage decodes src upright as *image.RGBA, refusing a picture
// over maxPixels from its header, before any pixel is decoded, and again
// if the image made differs from the header.
func decodeSystemImage(src systemImage, maxPixels int) (*image.RGBA, error) {
	w, h, orient := src.Header()
	if err := pixelBudget(w, h, maxPixels); err != nil {
		return nil, err
	}
	cw, ch, err := src.Create()
	if err != nil {
		return nil, err
	}
	if cw != w || ch != h {
		if err := pixelBudget(cw, ch, maxPixels); err != nil {
			return nil, fmt.Errorf("the header says %d×%d but the image is %d×%d: %w", w, h, cw, ch, err)
		}
	}
	m := image.NewRGBA(image.Rect(0, 0, cw, ch))
	if err := src.Draw(m.Pix, cw, ch); err != nil {
		return nil, err
	}
	return orientRGBA(orient, m), nil
}

// pixelBudget refuses a w×h picture with more than maxPixels pixels.
func pixelBudget(w, h, maxPixels int) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("the system decoder reports %d×%d pixels", w, h)
	}
	if int64(w)*int64(h) > int64(maxPixels) {
		return fmt.Errorf("%d×%d (%.1f megapixels) is over the %.1f megapixels orchard decodes: scale it down first",
			w, h, float64(w)*float64(h)/1e6, float64(maxPixels)/1e6)
	}
	return nil
}

// orientRGBA turns a stored picture upright by its EXIF orientation, as
// orientRGB does for the pure-Go decoders. Orientation 1 (or an invalid
// one) returns m itself.
func orientRGBA(o int, m *image.RGBA) *image.RGBA {
	if o < 2 || o > 8 {
		return m
	}
	w, h := m.Rect.Dx(), m.Rect.Dy()
	ow, oh := w, h
	if orientSwapsAxes(o) {
		ow, oh = h, w
	}
	out := image.NewRGBA(image.Rect(0, 0, ow, oh))
	for y := range oh {
		row := out.Pix[y*out.Stride : y*out.Stride+4*ow]
		for x := range ow {
			sx, sy := orientSource(o, x, y, w, h)
			copy(row[4*x:4*x+4], m.Pix[sy*m.Stride+4*sx:])
		}
	}
	return out
}

// systemAudio is an audio file opened by the system decoder, set to give
// float32 interleaved frames at the file's own rate.
type systemAudio interface {
	// Format is the file's rate, channels, a frame count to reserve room
	// for (an estimate; 0 if unknown) and a name for the format.
	Format() (rate float64, channels int, frames int64, name string)
	// Read fills buf with whole interleaved frames and returns how many;
	// 0 at the end.
	Read(buf []float32) (frames int, err error)
}

// audioChunkSamples is how many samples (frames × channels) one Read asks
// for; maxChannels bounds what a header may claim.
const (
	audioChunkSamples = 1 << 16
	maxChannels       = 1024
)

// decodeSystemAudio reads src to the end, or until it is past maxSeconds,
// and averages its channels.
func decodeSystemAudio(src systemAudio, maxSeconds float64) (*PCM, error) {
	rate, channels, frames, name := src.Format()
	if channels < 1 || channels > maxChannels {
		return nil, fmt.Errorf("the system decoder reports %d channels; orchard reads 1 to %d", channels, maxChannels)
	}
	r := int(math.Round(rate))
	if r < 1 {
		return nil, fmt.Errorf("the system decoder reports a sample rate of %g Hz", rate)
	}
	// The declared length only sizes the buffer (capped at the limit): the
	// system's figure may be an estimate, so the samples decide.
	limit := limitAt(r, maxSeconds)
	mix := newMixer(channels, declared(frames), limit)
	per := max(1, audioChunkSamples/channels)
	buf := make([]float32, per*channels)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		if n < 0 || n > per {
			return nil, fmt.Errorf("the system decoder returned %d frames for a %d-frame buffer", n, per)
		}
		for i := range n {
			if !mix.add(buf[i*channels : (i+1)*channels]) {
				return nil, limit.reached()
			}
		}
	}
	return &PCM{Samples: mix.out, Rate: r, Channels: channels, Format: name}, nil
}

// fourCC spells a Core Audio four-character code ('m4af', 'typ?').
func fourCC(c uint32) string {
	b := []byte{byte(c >> 24), byte(c >> 16), byte(c >> 8), byte(c)}
	for _, x := range b {
		if x < 0x20 || x > 0x7e {
			return ""
		}
	}
	return string(b)
}

// audioFormatName names an audio file for a chip: by its container
// (AudioFileTypeID), else by its data format (AudioFormatID).
func audioFormatName(fileType, dataFormat uint32) string {
	switch fourCC(fileType) {
	case "m4af":
		return "m4a"
	case "m4bf":
		return "m4b"
	case "mp4f":
		return "mp4"
	case "caff":
		return "caf"
	case "AIFF":
		return "aiff"
	case "AIFC":
		return "aifc"
	case "adts":
		return "aac"
	case "MPG3":
		return "mp3"
	case "WAVE", "BW64", "RF64":
		return "wav"
	case "flac":
		return "flac"
	case "3gpp", "3gp2":
		return "3gp"
	case "ac-3":
		return "ac3"
	case "ec-3":
		return "eac3"
	case "amrf":
		return "amr"
	}
	if s := strings.TrimSpace(fourCC(dataFormat)); s != "" {
		return strings.ToLower(s)
	}
	return "system"
}

// Core Audio statuses that mean "not a file I can read".
const (
	statusTypeUnknown   = 0x7479703f // 'typ?' kAudioFileUnsupportedFileTypeError
	statusFormatUnknown = 0x666d743f // 'fmt?' kAudioFileUnsupportedDataFormatError, kAudioConverterErr_FormatNotSupported
	statusDataInvalid   = 0x6474613f // 'dta?' kAudioFileInvalidFileError
)

// audioStatusError explains a failed Core Audio call; a status that means
// the data is not audio it reads wraps ErrUnsupportedFormat.
func audioStatusError(call string, status int32) error {
	code := fmt.Sprintf("OSStatus %d", status)
	if s := fourCC(uint32(status)); s != "" {
		code = fmt.Sprintf("OSStatus '%s'", s)
	}
	switch uint32(status) {
	case statusTypeUnknown, statusFormatUnknown, statusDataInvalid:
		return fmt.Errorf("%w: %s: %s", ErrUnsupportedFormat, call, code)
	}
	return fmt.Errorf("%s failed: %s", call, code)
}

// imageStatusText explains a CGImageSourceStatus other than complete.
func imageStatusText(status int) string {
	switch status {
	case -5:
		return "the file ends early"
	case -4:
		return "the data is invalid"
	case -3:
		return "ImageIO does not know the format"
	case -2, -1:
		return "the image is incomplete"
	}
	return fmt.Sprintf("ImageIO status %d", status)
}

// writeTempAudio writes data to a new private (0600) temporary file for a
// system decoder that opens files, named like path's extension, and
// returns its name; the caller removes it.
func writeTempAudio(path string, data []byte) (string, error) {
	f, err := os.CreateTemp("", tempAudioPattern(path))
	if err != nil {
		return "", fmt.Errorf("a temporary copy for the system decoder: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("a temporary copy for the system decoder: %w", err)
	}
	return f.Name(), nil
}

// tempAudioPattern is the name pattern of the private copy handed to the
// system decoder: the original extension (letters and digits only, which
// Core Audio takes as a type hint), nothing else of the user's name.
func tempAudioPattern(path string) string {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if ext == "" || len(ext) > 8 || strings.IndexFunc(ext, func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
	}) >= 0 {
		return "orchard-audio-*"
	}
	return "orchard-audio-*." + ext
}
