//go:build darwin && cgo

// Package brokencgo is a deliberately broken darwin-only cgo file whose C
// compiles: the checks of media's darwin files must reject every line
// marked "want". Only running cgo sees the first two.
package brokencgo

/*
#cgo LDFLAGS: -framework CoreGraphics -framework ImageIO
#include <ImageIO/ImageIO.h>

static long orchard_width(CGImageRef im) {
	return (long)CGImageGetWidth(im);
}
*/
import "C"

import "image"

func width(im C.CGImageRef) image.Point {
	var w int32 = C.orchard_width(im) // want: C long is not int32
	C.orchard_width(C.long(w))        // want: C long is not CGImageRef
	return image.Pt(int(w))           // want: too few arguments
}
