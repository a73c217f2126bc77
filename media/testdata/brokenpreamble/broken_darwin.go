//go:build darwin && cgo

// Package brokenpreamble is a deliberately broken darwin-only cgo file: its
// C preamble calls ImageIO wrongly and its Go names a helper the preamble
// lacks. The checks of media's darwin files must reject both.
package brokenpreamble

/*
#cgo LDFLAGS: -framework CoreGraphics -framework ImageIO
#include <ImageIO/ImageIO.h>

static CGImageRef orchard_first(CGImageSourceRef src) {
	return CGImageSourceCreateImageAtIndex(src, 0); // want: too few arguments
}
*/
import "C"

func first(src C.CGImageSourceRef) C.CGImageRef {
	C.orchard_frist(src) // want: not in the preamble
	return C.orchard_first(src)
}
