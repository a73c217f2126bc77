package media

import (
	"fmt"
	"image"
	"io"
)

// guard, deferred, turns a panic of a third-party decoder on damaged data
// into an error. go-mp3 indexes past its tables on some malformed frames,
// and a picture or clip may come from any client of orchard serve: one
// bad file must not end the process. orchard's own decoders (WAV, the
// scaled JPEG decoder) are not guarded, so that their fuzz targets see
// every panic.
func guard(format string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: the file is damaged (the decoder failed: %v)", format, r)
	}
}

// guarded is a codec whose calls are guarded.
func guarded(format string, c imageCodec) imageCodec {
	return imageCodec{
		config: func(r io.Reader) (cfg image.Config, err error) {
			defer guard(format, &err)
			return c.config(r)
		},
		decode: func(r io.Reader) (img image.Image, err error) {
			defer guard(format, &err)
			return c.decode(r)
		},
	}
}
