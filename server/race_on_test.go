//go:build race

package server

// raceEnabled: the race detector slows decoding tenfold; the memory tests
// measure at a quarter of the sizes.
const raceEnabled = true
