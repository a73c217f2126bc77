//go:build race

package engine

// raceEnabled: the race detector slows the reference runtime tenfold and
// more, so the longest tests cover fewer families under it.
const raceEnabled = true
