//go:build !(darwin && cgo)

package media

// platformDecoders: none; only the pure-Go decoders read files here.
func platformDecoders() (ImageDecoder, AudioDecoder) { return nil, nil }
