// Package f16 converts float32 and float64 to IEEE fp16 bits and back (ties to even,
// as Swift's Float16() and Core ML round) and computes float32 cos/sin as
// the published runtimes do for RoPE rows: libm's cosf/sinf on macOS, the
// correctly rounded value elsewhere. A leaf: it imports nothing of
// orchard's, so the readers of weights, sidecars and media stay free of
// the Core ML backend.
package f16
